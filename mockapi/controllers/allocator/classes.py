"""Plugin ResolveClasses: each claim detail → the DeviceClasses it may use, as search *options*.

``deviceClass`` names one class; ``deviceType`` means every class of that type, tried in name
order (rule 3) — the class that matched is the one whose configs and adminAccess apply. A missing
class is ClassNotFound; class constraints that do not compile are ConstraintCompileError.
The options of one claim entry are its oneOf alternatives in order, each expanded to its classes.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockapi import cel
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.request import Detail, Request

NAME = "ResolveClasses"


@dataclass(frozen=True)
class DeviceClass:
    name: str
    resource_version: str
    driver: str
    device_type: str
    constraints: str | None
    admin: bool
    configs: tuple[tuple[str, str, str, str], ...]  # (apiVersion, kind, namespace, name)


def parse_class(obj: dict) -> DeviceClass:
    spec = obj.get("spec") or {}
    configs = tuple((c.get("apiVersion", ""), c.get("kind", ""), c.get("namespace", ""), c.get("name", "")) for c in spec.get("configs") or [])
    meta = obj["metadata"]
    return DeviceClass(
        meta["name"], meta.get("resourceVersion", ""), spec.get("driver", ""), spec.get("deviceType", ""),
        spec.get("constraints"), bool(spec.get("adminAccess")), configs,
    )


@dataclass(frozen=True)
class Option:
    """One way to satisfy a claim entry: a detail (oneOf alternative) through one class."""

    id: int  # position among all options of the claim
    detail: Detail
    device_class: DeviceClass
    class_rank: int  # the class's position among those of a deviceType (0 for deviceClass)
    admin: bool

    @property
    def signature(self) -> tuple:
        """What decides which devices match (for caching candidates)."""
        d, c = self.detail, self.device_class
        return (c.name, c.resource_version, d.constraints, d.match, tuple(r[0] for r in d.resources))

    def describe(self) -> str:
        via = "" if self.detail.device_class else f" via DeviceClass {self.device_class.name}"
        return self.detail.describe() + via


def resolve(request: Request, classes: dict[str, DeviceClass]) -> list[list[Option]] | kinds.Failure:
    by_type: dict[str, list[DeviceClass]] = {}
    for name in sorted(classes):
        by_type.setdefault(classes[name].device_type, []).append(classes[name])
    entries: list[list[Option]] = []
    for alternatives in request.entries:
        options: list[Option] = []
        for detail in alternatives:
            found = _classes_of(detail, classes, by_type)
            if isinstance(found, kinds.Failure):
                return found
            for rank, device_class in enumerate(found):
                admin = request.admin or device_class.admin
                options.append(Option(sum(map(len, entries)) + len(options), detail, device_class, rank, admin))
        entries.append(options)
    return _compile_class_constraints(entries) or entries


def _classes_of(detail: Detail, classes: dict[str, DeviceClass], by_type: dict[str, list[DeviceClass]]) -> list[DeviceClass] | kinds.Failure:
    if detail.device_class is not None:
        found = classes.get(detail.device_class)
        if found is None:
            return kinds.failure(kinds.CLASS_NOT_FOUND, f'{detail.path}.deviceClass: DeviceClass "{detail.device_class}" not found')
        return [found]
    found = by_type.get(detail.device_type, [])
    if not found:
        return kinds.failure(kinds.CLASS_NOT_FOUND, f'{detail.path}.deviceType: no DeviceClass has deviceType "{detail.device_type}"')
    return found


def _compile_class_constraints(entries: list[list[Option]]) -> kinds.Failure | None:
    for option in (o for options in entries for o in options):
        constraints = option.device_class.constraints
        if constraints is None:
            continue
        try:
            cel.compile(constraints)
        except cel.CompileError as exc:
            why = "are" if isinstance(exc, cel.CostLimitExceeded) else "do not compile:"
            message = f'DeviceClass "{option.device_class.name}" constraints {constraints!r} {why} {exc}'
            return kinds.failure(kinds.CONSTRAINT_COMPILE_ERROR, message)
    return None
