"""Plugin ValidateSpec: a claim's spec → a :class:`Request`, or InvalidSpec / ConstraintCompileError.

Each ``spec.claims[]`` entry is an inline detail or ``oneOf`` alternatives (exactly one form); a
detail names exactly one of ``deviceClass`` / ``deviceType``. ``requests.count`` (default 1) and
``limits.count`` (default ``requests.count``) are positive integers with limit >= request. Any
other request key is a per-device resource amount (a positive quantity); ``limits[R]`` caps it and,
as for a Pod, a limit alone also sets the request. Claim constraints must compile.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockapi import cel, errors
from mockapi import quantity as quantities
from mockapi.controllers.allocator import kinds

NAME = "ValidateSpec"
DETAIL_FIELDS = ("deviceType", "deviceClass", "constraints", "requests", "limits", "matchAttributes", "configs")


@dataclass(frozen=True)
class Detail:
    path: str  # spec.claims[0] or spec.claims[0].oneOf[1]
    entry: int
    alternative: int  # the oneOf index (0 for an inline detail)
    device_class: str | None
    device_type: str | None
    constraints: str | None
    count: int
    limit: int
    resources: tuple[tuple[str, int, str], ...]  # (name, requested nano-units, quantity format)
    resource_limits: tuple[tuple[str, int], ...]
    match: tuple[str, ...]
    configs: tuple[tuple[str, str, str], ...]  # (apiVersion, kind, name) in the claim's namespace

    @property
    def shared(self) -> bool:
        """A request naming per-device resources takes a share of each device, else the whole device."""
        return bool(self.resources)

    def describe(self) -> str:
        target = f"deviceClass {self.device_class}" if self.device_class else f"deviceType {self.device_type}"
        counted = f"{self.count}" if self.count == self.limit else f"{self.count}-{self.limit}"
        return f"{self.path} ({target}, count {counted})"


@dataclass(frozen=True)
class Request:
    key: kinds.ClaimKey
    generation: int
    entries: tuple[tuple[Detail, ...], ...]  # entry → its alternatives, in order
    match: tuple[str, ...]  # claim-wide matchAttributes
    admin: bool  # a DevicePrivilegedClaim: every detail has admin access


class _Invalid(Exception):
    pass


def validate(claim: dict) -> Request | kinds.Failure:
    key = kinds.ClaimKey.of(claim)
    spec = claim.get("spec") or {}
    try:
        raw_entries = spec.get("claims") or []
        if not raw_entries:
            raise _Invalid(str(errors.FieldError("required", "spec.claims", "a claim needs at least one entry")))
        entries = tuple(_entry(raw, f"spec.claims[{index}]", index) for index, raw in enumerate(raw_entries))
        match = _names(spec.get("matchAttributes"), "spec.matchAttributes")
    except _Invalid as exc:
        return kinds.failure(kinds.INVALID_SPEC, str(exc))
    for detail in (d for entry in entries for d in entry):
        if detail.constraints is not None:
            try:
                cel.compile(detail.constraints)
            except cel.CompileError as exc:
                why = "is" if isinstance(exc, cel.CostLimitExceeded) else "does not compile:"
                return kinds.failure(kinds.CONSTRAINT_COMPILE_ERROR, f"{detail.path}.constraints {detail.constraints!r} {why} {exc}")
    generation = claim["metadata"].get("generation", 0)
    return Request(key, generation, entries, match, admin=key.privileged)


def _entry(raw: dict, path: str, index: int) -> tuple[Detail, ...]:
    alternatives = raw.get("oneOf") or []
    if not alternatives:
        return (_detail(raw, path, index, 0),)
    inline = [name for name in DETAIL_FIELDS if raw.get(name) is not None]
    if inline:
        raise _Invalid(f"{path}: Invalid value: either oneOf or an inline claim detail, not both (found oneOf and {', '.join(inline)})")
    return tuple(_detail(alt, f"{path}.oneOf[{n}]", index, n) for n, alt in enumerate(alternatives))


def _detail(raw: dict, path: str, entry: int, alternative: int) -> Detail:
    device_class, device_type = raw.get("deviceClass"), raw.get("deviceType")
    if (device_class is None) == (device_type is None):
        raise _Invalid(f"{path}: Invalid value: exactly one of deviceClass and deviceType must be set")
    requests, limits = raw.get("requests") or {}, raw.get("limits") or {}
    count = _count(requests.get("count", 1), f"{path}.requests.count")
    limit = _count(limits.get("count", count), f"{path}.limits.count")
    if limit < count:
        raise _Invalid(f"{path}.limits.count: Invalid value: {limit}: must be greater than or equal to requests.count ({count})")
    resources, resource_limits = _resources(requests, limits, path)
    return Detail(
        path, entry, alternative, device_class, device_type, raw.get("constraints"), count, limit,
        resources, resource_limits, _names(raw.get("matchAttributes"), f"{path}.matchAttributes"), _configs(raw.get("configs") or [], path),
    )


def _count(value, path: str) -> int:
    q = _quantity(value, path)
    if not q.is_integer() or q.nanos <= 0:
        raise _Invalid(f"{path}: Invalid value: {value!r}: must be a positive integer")
    return q.nanos // quantities.NANO


def _resources(requests: dict, limits: dict, path: str) -> tuple[tuple, tuple]:
    names = sorted((set(requests) | set(limits)) - {"count"})
    wanted, caps = [], []
    for name in names:
        request = _quantity(requests[name], f"{path}.requests.{name}") if name in requests else None
        limit = _quantity(limits[name], f"{path}.limits.{name}") if name in limits else None
        request = request or limit
        if request.nanos <= 0:
            raise _Invalid(f"{path}.requests.{name}: Invalid value: {str(request)!r}: must be positive")
        if limit is not None and limit < request:
            raise _Invalid(f"{path}.limits.{name}: Invalid value: {str(limit)!r}: must be greater than or equal to requests.{name} ({request})")
        wanted.append((name, request.nanos, request.format))
        if limit is not None:
            caps.append((name, limit.nanos))
    return tuple(wanted), tuple(caps)


def _quantity(value, path: str) -> quantities.Quantity:
    try:
        return quantities.parse(value)
    except quantities.QuantityError as exc:
        raise _Invalid(f"{path}: {exc}") from None


def _names(raw, path: str) -> tuple[str, ...]:
    names = list(raw or [])
    for index, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise _Invalid(f"{path}[{index}]: Invalid value: {name!r}: must be a non-empty attribute name")
    return tuple(dict.fromkeys(names))


def _configs(raw: list, path: str) -> tuple[tuple[str, str, str], ...]:
    refs = []
    for index, ref in enumerate(raw):
        missing = [k for k in ("apiVersion", "kind", "name") if not ref.get(k)]
        if missing:
            raise _Invalid(f"{path}.configs[{index}].{missing[0]}: Required value")
        refs.append((ref["apiVersion"], ref["kind"], ref["name"]))
    return tuple(refs)
