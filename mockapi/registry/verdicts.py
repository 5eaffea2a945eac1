"""Create verdicts: what a create did to an object's own fields, remembered for the next one alike.

A create prepares, prunes, defaults and validates the object. For the kinds whose strategy says
so (``Strategy.pure_create``), everything that does to the fields other than ``apiVersion``,
``kind`` and ``metadata`` (a Pod's ``spec`` and the ``status`` its strategy derives from it) is a
function of those fields alone and of the kind's schema: objects written in a series (CI fixtures,
a ReplicaSet's pods, a controller's claims) repeat them. So a create whose whole write came out
clean — no unknown field, no error — leaves a verdict (from the second such create on), keyed by
those fields' compact JSON and the order of the object's top-level keys: the next create with the
same fields takes what the earlier one made of them, and skips the kind's preparation and
validation and the schema's walk of them (:meth:`mockapi.schema.structural.Validator.apply`'s
``settled``).

What depends on anything else stays per request: system fields, ObjectMeta's rules and the
schema's checks of metadata, the requester's checks, warnings, admission (namespaces,
ServiceAccounts, priority), field ownership, the depth bound. Field ownership is made of two
parts: metadata's set, per request, and the set of the verdict's fields, which a verdict keeps
from its first use on (:meth:`Verdict.own_fields`: a function of those fields' JSON and the
kind's schema, as the field manager's own memo of them is). A verdict remembers only clean
outcomes, so an error or a warning always comes from the full path, in its order.

A verdict holds bytes and scalars, never a value it hands out: each hit parses its own copy, so a
caller that changes the object it got (admission does) cannot change the verdict. The table is
bounded (256, forgotten all at once when full) and forgotten whenever the served types change (a
CRD's schema, ``Registry._schemas_changed``); each verdict also names the type and schema it was
made under and is used only under those very objects.
"""

from __future__ import annotations

from typing import Any

import orjson

from mockapi.fieldmanager import typed
from mockapi.fieldmanager.schematype import TypeNode
from mockapi.gvk import ResourceType
from mockapi.schema import structural
from mockapi.wire import exact

# Values orjson would encode as something else (a datetime as its text, a str subclass, a
# dataclass) are left to the full path: only what JSON decoding makes is known by its JSON.
_PLAIN_ONLY = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
LIMIT = 256  # a series repeats a few templates; each verdict holds its fields' JSON (twice if changed)
_TYPE_META = frozenset({"apiVersion", "kind", "metadata"})


class Verdict:
    """The fields as a clean create made them (compact JSON) and the object's top-level key order
    then; from its first use on, also the additions that make them from the request's fields —
    ``(path, key, value-or-its-JSON)``, put in place in the request's own value, cheaper than
    parsing ``after`` whole — or None when the create did more than add. Worked out at the first
    use, not when remembered: a create whose fields never come again pays only two encodings."""

    __slots__ = ("rt", "schema", "after", "order", "additions", "tried", "brackets", "field_set")

    def __init__(self, rt: ResourceType, schema: Any, after: bytes, order: tuple[str, ...]) -> None:
        self.rt, self.schema, self.after, self.order = rt, schema, after, order
        self.additions: tuple | None = None
        self.tried = False
        self.brackets = 0  # of ``after``, from the first use on: no field of it nests deeper (the depth bound)
        self.field_set: tuple | None = None  # (root type, ignored fields, their set or None), once asked for

    def own_fields(self, root: TypeNode, ignore: tuple[str, ...], obj: dict) -> dict | None:
        """The field set that ``obj``'s fields other than apiVersion, kind and metadata record
        (``typed.added_fields``) — ``obj`` being a create this verdict settled, so those fields
        are the verdict's — made at the first ask and kept for the next (under the same root
        type and ignored fields); None when they cannot be typed (the field manager then finds
        out itself, as without a verdict)."""
        kept = self.field_set
        if kept is not None and kept[0] is root and kept[1] == ignore:
            return kept[2]
        try:
            found = typed.added_fields(root, obj, ignore)
        except typed.TypedError:
            found = None
        self.field_set = (root, ignore, found)
        return found

    def _first_use(self, key: "Key") -> None:
        self.additions, self.tried = _additions(key, self.after, self.order), True
        self.brackets = self.after.count(b"{") + self.after.count(b"[")


class Key:
    """A create's lookup key, taken before the strategy prepares the object."""

    __slots__ = ("order", "fields")

    def __init__(self, order: tuple[str, ...], fields: bytes) -> None:
        self.order, self.fields = order, fields

    def value(self) -> tuple:
        return (self.order, self.fields)


class Verdicts:
    """The remembered verdicts of one registry."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._table: dict[tuple, Verdict] = {}
        self._limit = limit
        # the keys (by hash) of clean creates seen once: a verdict is kept from the second on, so
        # objects whose fields never repeat (a pool per node) cost a hash each, not their JSON twice
        self._seen: set[int] = set()
        self.hits = self.misses = 0

    def clear(self) -> None:
        self._table.clear()
        self._seen.clear()

    def __len__(self) -> int:
        return len(self._table)

    def key(self, obj: dict) -> Key | None:
        """The key of ``obj`` as the request sent it (None: not JSON orjson can encode)."""
        try:
            fields = orjson.dumps({k: v for k, v in obj.items() if k not in _TYPE_META}, option=_PLAIN_ONLY)
        except orjson.JSONEncodeError:
            return None
        return Key(tuple(obj), fields)

    def take(self, rt: ResourceType, key: Key, obj: dict) -> Verdict | None:
        """Make ``obj``'s own fields what the remembered create made of them, and return the
        verdict; None when there is none for them (under this very type and schema)."""
        verdict = self._table.get(key.value())
        if verdict is None or verdict.rt is not rt or verdict.schema is not rt.schema:
            self.misses += 1
            return None
        self.hits += 1
        if not verdict.tried:
            verdict._first_use(key)
        if verdict.additions is not None:
            structural._add_defaults(obj, verdict.additions)
            return verdict
        fields = orjson.loads(verdict.after)
        rebuilt = {k: obj[k] if k in _TYPE_META else fields[k] for k in verdict.order}
        obj.clear()
        obj.update(rebuilt)
        return verdict

    def remember(self, rt: ResourceType, key: Key, obj: dict) -> None:
        """``obj`` is what a clean create made of the object ``key`` was taken from (kept when
        such a create was seen before)."""
        seen = hash(key.value())
        if seen not in self._seen:
            if len(self._seen) >= 4 * self._limit:
                self._seen.clear()
            self._seen.add(seen)
            return
        try:
            after = orjson.dumps({k: v for k, v in obj.items() if k not in _TYPE_META})
        except orjson.JSONEncodeError:
            return
        fields = exact(key.fields)
        after = fields if after == fields else exact(after)  # one copy of what the create left as sent
        if len(self._table) >= self._limit:
            self._table.clear()
        self._table[(key.order, fields)] = Verdict(rt, rt.schema, after, tuple(obj))


def _additions(key: Key, after: bytes, order: tuple[str, ...]) -> tuple | None:
    """The additions that turn the request's fields into ``after`` with the top-level keys in
    ``order`` — checked by making them — or None when the create did more than add (then the
    verdict keeps ``after`` whole)."""
    found: list = []
    before = orjson.loads(key.fields)
    structural._find_additions(before, orjson.loads(after), (), found)
    additions = tuple(found)
    probe: dict = {k: None if k in _TYPE_META else before[k] for k in key.order}
    structural._add_defaults(probe, additions)
    if tuple(probe) != order:
        return None
    if orjson.dumps({k: v for k, v in probe.items() if k not in _TYPE_META}) != after:
        return None
    return additions
