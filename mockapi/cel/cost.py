"""The worst-case cost of a device constraint, estimated before it ever runs.

cel-go's static estimator (``checker/cost.go``), ported over the checked expression that
cel-expr-python serializes (a ``cel.expr.CheckedExpr`` protobuf): every identifier and field
selection costs 1, constants 0, a list literal 10 plus its elements, a map literal 30, a call 1
plus its arguments — except the functions whose work grows with their input: ``contains``
(0.1 × target length × 0.1 × argument length), ``startsWith``/``endsWith`` (0.1 × argument
length), ``matches`` (0.1 × (string length + 1) × 0.25 × regex length), string ``+`` and
comparisons (0.1 × the sizes involved) and ``in`` on a list (its size). A comprehension costs its
range, its initial value and its result, plus the range's size × (loop condition + step).

Sizes come from literals and, for the ``device`` variable, from the caps Kubernetes DRA
validates ResourceSlices with and its cost estimator assumes (``dynamic-resource-allocation/cel``):
an attribute value is at most :data:`MAX_VALUE_LENGTH` characters (a string or a version), a
device has at most :data:`MAX_ATTRIBUTES` attributes and its pool as many again (``device`` is
the merged map), and an attribute name is a qualified name. Anything of unknown size is
unbounded, as in cel-go, so an expression that works on it cannot fit the budget.

:data:`MAX_COST` is DRA's ``CELSelectorExpressionMaxCost``. A cost unit is about 60 ns in this
runtime (measured: nested 99 × 99 loops estimated at 1,000,000 take ~60 ms), so the allocator
runs expressions above :data:`INLINE_COST` outside the server's event loop (``cel.isolated``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mockapi import protobuf

MAX_COST = 1_000_000  # k8s.io/api/resource: CELSelectorExpressionMaxCost
MAX_VALUE_LENGTH = 64  # DeviceAttributeMaxValueLength: string and version values
MAX_ATTRIBUTES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice (per device, and per pool)
MAX_NAME_LENGTH = 253 + 1 + 63  # a qualified name: DNS subdomain prefix, "/", name
INLINE_COST = 20_000  # ~1 ms: cheaper expressions may run on the event loop

_UNBOUNDED = 2**64 - 1  # cel-go's unknown size (math.MaxUint64)
_LIST_CREATE, _MAP_CREATE, _STRUCT_CREATE = 10, 30, 40


class EstimateError(ValueError):
    """The checked expression could not be read (an internal error, never the user's)."""


# ------------------------------------------------------------------ shapes
@dataclass(eq=False)
class Shape:
    """What the estimator knows of a value: its largest size (characters of a string, elements of
    a list or map; 1 for a scalar), what iterating it yields and what indexing it yields."""

    size: int
    elem: "Shape | None" = None
    value: "Shape | None" = None

    def iterated(self) -> "Shape":
        return self.elem or UNBOUNDED

    def indexed(self) -> "Shape":
        return self.value or UNBOUNDED


def union(shapes: list[Shape], *, depth: int = 0) -> Shape:
    """The smallest shape that covers all of ``shapes`` (unbounded past a few levels of nesting)."""
    distinct = list({id(s): s for s in shapes}.values())
    if not distinct:
        return Shape(0)
    if len(distinct) == 1:
        return distinct[0]
    if depth > 4 or any(s.size >= _UNBOUNDED for s in distinct):
        return UNBOUNDED
    elems = union([s.iterated() for s in distinct if s.elem is not None], depth=depth + 1) if any(s.elem for s in distinct) else None
    values = union([s.indexed() for s in distinct if s.value is not None], depth=depth + 1) if any(s.value for s in distinct) else None
    return Shape(max(s.size for s in distinct), elems, values)


UNBOUNDED = Shape(_UNBOUNDED)
UNBOUNDED.elem = UNBOUNDED.value = UNBOUNDED
SCALAR = Shape(1)
ATTRIBUTE = Shape(MAX_VALUE_LENGTH)  # a string or version; a quantity/semver value is a 1-entry map of such strings
ATTRIBUTE.elem = ATTRIBUTE.value = ATTRIBUTE
DEVICE = Shape(2 * MAX_ATTRIBUTES, elem=Shape(MAX_NAME_LENGTH), value=ATTRIBUTE)


# ------------------------------------------------------------- the protobuf
def _message(data: bytes) -> dict[int, list]:
    found: dict[int, list] = {}
    for number, value in protobuf.fields(data):
        found.setdefault(number, []).append(value)
    return found


def _one(fields: dict[int, list], number: int, default=None):
    values = fields.get(number)
    return values[-1] if values else default


@dataclass
class Checked:
    expr: bytes
    references: dict[int, dict[int, list]]  # expr id → Reference {1: name, 3: overload ids}
    types: dict[int, dict[int, list]]  # expr id → Type


def decode(serialized: bytes) -> Checked:
    """A ``google.protobuf.Any`` holding a ``cel.expr.CheckedExpr`` → its parts."""
    wrapper = _message(serialized)
    checked = _message(_one(wrapper, 2, serialized) if _one(wrapper, 1, b"").endswith(b"CheckedExpr") else serialized)
    references, types = {}, {}
    for target, number in ((references, 2), (types, 3)):
        for entry in checked.get(number, []):
            fields = _message(entry)
            target[_one(fields, 1, 0)] = _message(_one(fields, 2, b""))
    expr = _one(checked, 4)
    if expr is None:
        raise EstimateError("no checked expression")
    return Checked(expr, references, types)


# --------------------------------------------------------------- estimating
_STRING_COMPARISONS = frozenset(
    f"{op}_{kind}" for op in ("less", "greater", "less_equals", "greater_equals") for kind in ("string", "bytes")
) | {"equals", "not_equals"}
# cel.expr.Type: 2 null, 3 primitive (1 bool, 2 int64, 3 uint64, 4 double, 5 string, 6 bytes), 4 wrapper
# (of a primitive), 5 well-known (Any, Timestamp, Duration), 11 a type value
_SCALAR_PRIMITIVES = {1, 2, 3, 4}
_LOGICAL = ("_&&_", "_||_", "_?_:_")
_TO_STRING = {"bool_to_string": 5, "int64_to_string": 20, "uint64_to_string": 20, "double_to_string": 32, "timestamp_to_string": 40, "duration_to_string": 40}


def _tenth(n: int) -> int:
    return -(-n // 10)  # cel-go's MultiplyByCostFactor(0.1): rounded up


def _quarter(n: int) -> int:
    return -(-n // 4)


class _Estimator:
    def __init__(self, checked: Checked) -> None:
        self.checked = checked
        self.locals: list[tuple[str, Shape]] = []

    def shape_of_type(self, expr_id: int) -> Shape:
        t = self.checked.types.get(expr_id)
        if t is None:
            return UNBOUNDED
        if 2 in t or 5 in t or 11 in t or _one(t, 3) in _SCALAR_PRIMITIVES or _one(t, 4) in _SCALAR_PRIMITIVES:
            return SCALAR
        return UNBOUNDED

    def cost(self, data: bytes) -> tuple[int, Shape]:
        expr = _message(data)
        expr_id = _one(expr, 2, 0)
        for number, handler in ((3, self._const), (4, self._ident), (5, self._select), (6, self._call), (7, self._list), (8, self._struct), (9, self._comprehension)):
            if number in expr:
                return handler(expr_id, _message(_one(expr, number)))
        return 0, UNBOUNDED

    def _const(self, expr_id: int, const: dict) -> tuple[int, Shape]:
        if 6 in const:
            return 0, Shape(len(_one(const, 6).decode()))
        if 7 in const:
            return 0, Shape(len(_one(const, 7)))
        return 0, SCALAR

    def _ident(self, expr_id: int, ident: dict) -> tuple[int, Shape]:
        name = _one(ident, 1, b"").decode()
        for local, shape in reversed(self.locals):
            if local == name:
                return 1, shape
        if name == "device":
            return 1, DEVICE
        return 1, self.shape_of_type(expr_id)

    def _select(self, expr_id: int, select: dict) -> tuple[int, Shape]:
        cost, operand = self.cost(_one(select, 1, b""))
        if _one(select, 3, 0):  # has(x.f): a presence test
            return cost + 1, SCALAR
        typed = self.shape_of_type(expr_id)
        return cost + 1, typed if typed is SCALAR else operand.indexed()

    def _list(self, expr_id: int, create: dict) -> tuple[int, Shape]:
        elements = [self.cost(e) for e in create.get(1, [])]
        shapes = [s for _, s in elements]
        return _LIST_CREATE + sum(c for c, _ in elements), Shape(len(elements), union(shapes), union(shapes))

    def _struct(self, expr_id: int, create: dict) -> tuple[int, Shape]:
        total, keys, values = 0, [], []
        for entry in (_message(e) for e in create.get(2, [])):
            if 3 in entry:
                cost, key = self.cost(_one(entry, 3))
                total += cost
                keys.append(key)
            cost, value = self.cost(_one(entry, 4, b""))
            total += cost
            values.append(value)
        base = _STRUCT_CREATE if _one(create, 1) else _MAP_CREATE
        return base + total, Shape(len(values), union(keys), union(values))

    def _comprehension(self, expr_id: int, comp: dict) -> tuple[int, Shape]:
        range_cost, iterated = self.cost(_one(comp, 2, b""))
        init_cost, accu = self.cost(_one(comp, 4, b""))
        accu_var = _one(comp, 3, b"").decode()
        self.locals.append((accu_var, accu))
        self.locals.append((_one(comp, 1, b"").decode(), iterated.iterated()))
        if 8 in comp:  # two-variable comprehensions: the second is the value
            self.locals.append((_one(comp, 8).decode(), iterated.indexed()))
        loop_cost, _ = self.cost(_one(comp, 5, b""))
        step_cost, step = self.cost(_one(comp, 6, b""))
        del self.locals[-(2 if 8 in comp else 1) :]
        result_cost, result = self.cost(_one(comp, 7, b""))
        self.locals.pop()
        total = range_cost + init_cost + result_cost + iterated.size * (loop_cost + step_cost)
        init_kind = _message(_one(comp, 4, b""))
        if 7 in init_kind or 8 in init_kind:  # map() and filter() build a list
            result = Shape(iterated.size, step.iterated(), step.indexed())
        return total, result

    def _call(self, expr_id: int, call: dict) -> tuple[int, Shape]:
        args = [self.cost(a) for a in call.get(3, [])]
        target_cost, target = self.cost(_one(call, 1)) if 1 in call else (0, None)
        function = _one(call, 2, b"").decode()
        shapes, arg_costs = [s for _, s in args], [c for c, _ in args]
        overloads = [o.decode() for o in (self.checked.references.get(expr_id) or {}).get(3, [])] or [function]
        estimates = [self._function(o, function, target, shapes, arg_costs, expr_id) for o in overloads]
        cost = max(c for c, _ in estimates)
        own_args = function in _LOGICAL  # their estimate already holds their arguments'
        return target_cost + cost + (0 if own_args else sum(arg_costs)), union([s for _, s in estimates])

    def _function(self, overload: str, function: str, target: Shape | None, args: list[Shape], arg_costs: list[int], expr_id: int) -> tuple[int, Shape]:
        typed = self.shape_of_type(expr_id)
        if function in ("_&&_", "_||_"):
            return sum(arg_costs), SCALAR
        if function == "_?_:_":
            return arg_costs[0] + max(arg_costs[1:]), union(args[1:])
        if function == "dyn" and args:
            return 1, args[0]
        if overload == "contains_string" and target is not None:
            return _tenth(target.size) * _tenth(args[0].size), SCALAR
        if overload in ("starts_with_string", "ends_with_string") and args:
            return _tenth(args[0].size), SCALAR
        if overload in ("matches", "matches_string"):
            text, regex = (target, args[0]) if target is not None else (args[0], args[1])
            return _tenth(text.size + 1) * _quarter(regex.size), SCALAR
        if overload == "in_list" and len(args) == 2:
            return args[1].size, SCALAR
        if overload in ("add_string", "add_bytes") and len(args) == 2:
            size = min(args[0].size + args[1].size, _UNBOUNDED)
            return _tenth(size), Shape(size)
        if overload == "add_list" and len(args) == 2:
            size = min(args[0].size + args[1].size, _UNBOUNDED)
            return 1, Shape(size, union([a.iterated() for a in args]), union([a.indexed() for a in args]))
        if overload in _STRING_COMPARISONS and len(args) == 2:
            return _tenth(min(args[0].size, args[1].size)), SCALAR
        if overload in _TO_STRING:
            return 1, Shape(_TO_STRING[overload])
        if overload in ("string_to_string", "bytes_to_string", "string_to_bytes") and args:
            return _tenth(args[0].size), Shape(args[0].size * (4 if overload == "string_to_bytes" else 1))
        if overload in ("index_list", "index_map") and args:
            return 1, args[0].indexed()
        if typed is SCALAR:
            return 1, SCALAR
        return 1, ATTRIBUTE if function in ("quantity", "semver", "add", "sub") else typed


def estimate(serialized: bytes) -> int:
    """The most cost units one evaluation of the checked expression can take (may be huge)."""
    checked = decode(serialized)
    return _Estimator(checked).cost(checked.expr)[0]


def exceeds_message(cost: int, limit: int = MAX_COST) -> str:
    """Why an expression is refused (DRA's validation says only "too complex, exceeds cost limit")."""
    return f"too complex: its estimated cost {cost:,} exceeds the limit of {limit:,}"
