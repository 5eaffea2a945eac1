"""CEL for device constraints, on Google's CEL runtime (``cel-expr-python``).

One environment: the variable ``device`` (a map from attribute name to value) and the Kubernetes
CEL quantity and semver libraries' functions — ``quantity("1Gi")``, ``semver("1.2.3")``,
``isQuantity``/``isSemver``, ``compareTo``/``isGreaterThan``/``isLessThan``, ``sign``,
``isInteger``/``asInteger``, ``add``/``sub`` and ``major``/``minor``/``patch``. Attribute values
map to CEL as string → string, int → int, quantity → a quantity value, semver → a version value.
A quantity or version value is a small ``map(string, string)`` (the runtime cannot carry Python
objects): ``{"quantity": "<nano-units>"}`` and ``{"semver": "<version without build metadata>"}``,
so ``==`` compares them by value (``quantity('1Gi') == quantity('1024Mi')``).

Safety: an expression longer than 10 KiB is refused (Kubernetes' limit), and so is one whose
worst-case cost, estimated as Kubernetes DRA does (:mod:`mockapi.cel.cost`), exceeds DRA's budget
(:class:`CostLimitExceeded`); the runtime itself bounds nesting (32) and comprehension iterations
(~10,000 per evaluation). The runtime cannot be interrupted and holds the GIL while it evaluates, so
:attr:`Program.cost` tells callers whether an evaluation is cheap enough for the event loop; the
others go to :mod:`mockapi.cel.isolated`, a process that is killed at the caller's deadline.
Compiling is cached per expression text, failures included. Errors are values a caller reports:
:class:`CompileError` and :class:`EvaluationError` carry a message a person can act on.
"""

from __future__ import annotations

from typing import Any

import semver as semverlib

from mockapi import quantity as quantities
from mockapi.cel import cost as costs

MAX_EXPRESSION_LENGTH = 10 * 1024
_CACHE_LIMIT = 4096

# The runtime (cel_expr_python: ~4 MiB resident and a few ms to import) and the environment built on
# it are loaded by the first compile or activation (:func:`_load`): a server whose objects carry no
# CEL expression never needs them.
_cel: Any = None
_STR = _INT = _BOOL = _VALUE = _ENV = None  # string, int, bool; a quantity or a version; the environment


class CompileError(Exception):
    """The expression does not compile (syntax, types, length, or it cannot produce a bool)."""


class CostLimitExceeded(CompileError):
    """The expression compiles, but its estimated worst-case cost is over :data:`~.cost.MAX_COST`."""

    def __init__(self, estimate: int) -> None:
        super().__init__(costs.exceeds_message(estimate))
        self.estimate = estimate


class EvaluationError(Exception):
    """The expression failed on one input (missing attribute, wrong type, non-bool result)."""


# ------------------------------------------------------------------ values
def quantity_value(q: quantities.Quantity) -> dict[str, str]:
    return {"quantity": str(q.nanos)}


def semver_value(version: semverlib.Version) -> dict[str, str]:
    return {"semver": str(version.replace(build=None))}


def parse_semver(text: str) -> semverlib.Version:
    """A strict semantic version (``1.2.3``, ``4.2.1-gen3``); raises ValueError with the reason."""
    try:
        return semverlib.Version.parse(text)
    except (ValueError, TypeError):
        raise ValueError(f"invalid semantic version {text!r}: want MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]") from None


def _quantity(text: str) -> dict[str, str]:
    try:
        return quantity_value(quantities.parse(text))
    except quantities.QuantityError as exc:
        raise ValueError(str(exc)) from None


def _semver(text: str) -> dict[str, str]:
    return semver_value(parse_semver(text))


def _unwrap(value: dict) -> tuple[str, Any]:
    if "quantity" in value:
        return "quantity", int(value["quantity"])
    if "semver" in value:
        return "semver", semverlib.Version.parse(value["semver"])
    raise TypeError(f"{value} is neither a quantity nor a semver")


def _compare(a: dict, b: dict) -> int:
    (kind_a, left), (kind_b, right) = _unwrap(a), _unwrap(b)
    if kind_a != kind_b:
        raise TypeError(f"cannot compare a {kind_a} with a {kind_b}")
    return (left > right) - (left < right)


def _quantity_of(value: dict) -> int:
    kind, nanos = _unwrap(value)
    if kind != "quantity":
        raise TypeError(f"{kind} is not a quantity")
    return nanos


def _as_integer(value: dict) -> int:
    nanos = _quantity_of(value)
    if nanos % quantities.NANO:
        raise ValueError("cannot convert a fractional quantity to an integer")
    return nanos // quantities.NANO


def _version_part(index: int):
    def part(value: dict) -> int:
        kind, version = _unwrap(value)
        if kind != "semver":
            raise TypeError(f"{kind} is not a semver")
        return (version.major, version.minor, version.patch)[index]

    return part


def _is(parser):
    def check(text: str) -> bool:
        try:
            parser(text)
        except ValueError:
            return False
        return True

    return check


def _function(name: str, params: list, result, impl, *, member: bool = False) -> _cel.FunctionDecl:
    overload = _cel.Overload(f"{name}_{'member' if member else 'global'}", result, params, is_member=member, impl=impl)
    return _cel.FunctionDecl(name, [overload])


def _functions() -> list[_cel.FunctionDecl]:
    def q(nanos: int) -> dict:
        return {"quantity": str(nanos)}

    return [
        _function("quantity", [_STR], _VALUE, _quantity),
        _function("semver", [_STR], _VALUE, _semver),
        _function("isQuantity", [_STR], _BOOL, _is(_quantity)),
        _function("isSemver", [_STR], _BOOL, _is(_semver)),
        _function("compareTo", [_VALUE, _VALUE], _INT, _compare, member=True),
        _function("isGreaterThan", [_VALUE, _VALUE], _BOOL, lambda a, b: _compare(a, b) > 0, member=True),
        _function("isLessThan", [_VALUE, _VALUE], _BOOL, lambda a, b: _compare(a, b) < 0, member=True),
        _function("sign", [_VALUE], _INT, lambda a: (_quantity_of(a) > 0) - (_quantity_of(a) < 0), member=True),
        _function("isInteger", [_VALUE], _BOOL, lambda a: _quantity_of(a) % quantities.NANO == 0, member=True),
        _function("asInteger", [_VALUE], _INT, _as_integer, member=True),
        _function("add", [_VALUE, _VALUE], _VALUE, lambda a, b: q(_quantity_of(a) + _quantity_of(b)), member=True),
        _function("sub", [_VALUE, _VALUE], _VALUE, lambda a, b: q(_quantity_of(a) - _quantity_of(b)), member=True),
        _function("major", [_VALUE], _INT, _version_part(0), member=True),
        _function("minor", [_VALUE], _INT, _version_part(1), member=True),
        _function("patch", [_VALUE], _INT, _version_part(2), member=True),
    ]


def _load() -> None:
    global _cel, _STR, _INT, _BOOL, _VALUE, _ENV
    from cel_expr_python import cel

    _cel = cel
    _STR, _INT, _BOOL = cel.Type.STRING, cel.Type.INT, cel.Type.BOOL
    _VALUE = cel.Type.Map(_STR, _STR)
    _ENV = cel.NewEnv(variables={"device": cel.Type.Map(_STR, cel.Type.DYN)}, functions=_functions())


# ------------------------------------------------------------------ programs
class Program:
    """A compiled expression: evaluate it against device activations."""

    __slots__ = ("expression", "cost", "_compiled")

    def __init__(self, expression: str, compiled, cost: int) -> None:
        self.expression = expression
        self.cost = cost  # the estimated worst case, in cost units (about 60 ns each here)
        self._compiled = compiled

    @property
    def inline(self) -> bool:
        """Whether one evaluation is cheap enough (~1 ms at most) to run on the event loop."""
        return self.cost <= costs.INLINE_COST

    def evaluate(self, activation) -> bool:
        """True or False; raises :class:`EvaluationError` with the runtime's reason otherwise."""
        try:
            result = self._compiled.eval(activation)
        except RuntimeError as exc:  # the runtime's own limits (iteration budget, recursion)
            raise EvaluationError(_error_text(exc)) from None
        kind = result.type()
        if kind == _BOOL:
            return result.value()
        if kind == _cel.Type.ERROR:
            raise EvaluationError(_error_text(result.value()))
        raise EvaluationError(f"the result is a {kind.name().lower()}, not a bool")


def _error_text(error: Any) -> str:
    text = str(error)
    for prefix in ("UNKNOWN: ", "OUT_OF_RANGE: ", "INVALID_ARGUMENT: ", "NOT_FOUND: ", "INTERNAL: "):
        text = text.removeprefix(prefix)
    return text.replace("Key not found in map", "no such attribute").split(" [", 1)[0]


_cache: dict[str, Program | CompileError] = {}


def compile(expression: str) -> Program:
    """The compiled program (cached); raises :class:`CompileError` (also cached) when it cannot be."""
    found = _cache.get(expression)
    if found is None:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        found = _cache[expression] = _compile(expression)
    if isinstance(found, CompileError):
        raise found
    return found


def _compile(expression: str) -> Program | CompileError:
    if len(expression.encode()) > MAX_EXPRESSION_LENGTH:
        return CompileError(f"the expression is {len(expression.encode())} bytes long, more than the limit of {MAX_EXPRESSION_LENGTH}")
    if _ENV is None:
        _load()
    try:
        compiled = _ENV.compile(expression)
    except RuntimeError as exc:
        return CompileError(_compile_text(exc))
    result = compiled.return_type()
    if result != _BOOL and result != _cel.Type.DYN:
        return CompileError(f"the expression must evaluate to a bool, not a {result.name().lower()}")
    try:
        estimate = costs.estimate(compiled.serialize())
    except (ValueError, IndexError, KeyError, RecursionError) as exc:  # a malformed estimate (EstimateError, protobuf.WireError): never the user's fault; never run blind
        return CompileError(f"its cost cannot be estimated ({exc}); please report this expression")
    if estimate > costs.MAX_COST:
        return CostLimitExceeded(estimate)
    return Program(expression, compiled, estimate)


def _compile_text(exc: RuntimeError) -> str:
    text = str(exc).removeprefix("INVALID_ARGUMENT: ").removeprefix("CANCELLED: ").strip()
    text = text.removesuffix("[INVALID_ARGUMENT]").removesuffix("[CANCELLED]").strip()
    return text.replace("ERROR: <input>:", "at ")


def activation(device: dict[str, Any]):
    """Bindings for one device's merged attributes (values from :func:`quantity_value` and friends)."""
    if _ENV is None:
        _load()
    return _ENV.Activation({"device": device})
