"""What apiextensions-apiserver does to a custom resource on every write, for any kind we serve.

As kube-apiserver does it: prune unknown fields (recording their paths), drop nulls of
non-nullable fields, apply defaults, then validate with kube-openapi's semantics and messages.
A schema is compiled once (:func:`compile`, cached by identity) into a tree of nodes;
``Validator.apply(obj)`` mutates ``obj`` in place and returns an :class:`Outcome`.
``x-kubernetes-validations`` (CEL) is ignored here.

This is the public face; the work is done by, in order of the pipeline:

* :mod:`mockapi.schema.compiled` — the schema compiled into ``_Node`` trees;
* :mod:`mockapi.schema.prune` — the one walk that prunes, drops nulls and defaults;
* :mod:`mockapi.schema.changed` — that walk for an update, skipping what is as stored;
* :mod:`mockapi.schema.validate` — kube-openapi's checks on each shaped value;
* :mod:`mockapi.schema.formats` and :mod:`mockapi.schema.goformat` — string formats and RE2
  patterns, and Go's renderings of values for kube's messages.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import orjson

from mockapi import errors
from mockapi.schema import meta
from mockapi.schema.changed import walk_changed_object
from mockapi.schema.compiled import _compile
from mockapi.schema.prune import _prune_only, _Run, _walk_object
from mockapi.schema.validate import _embedded_errors, _list_type_errors, _validate

_CACHE_SIZE = 256
_CLEAN_SIZE = 1024  # remembered clean subtrees per validator, forgotten all at once when full
_TYPE_META = frozenset({"apiVersion", "kind", "metadata"})


@dataclass
class Outcome:
    """What one apply did: the unknown fields it pruned (kube's order) and every validation failure."""

    unknown_fields: list[str] = field(default_factory=list)
    errors: list[errors.FieldError] = field(default_factory=list)


class Validator:
    """A compiled structural schema for one served version of one kind."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._root = _compile(schema)
        # metadata is ObjectMeta's business (meta.py); the schema may only constrain its names
        self._validation_root = copy.copy(self._root)
        self._validation_root.props = {k: v for k, v in self._root.props.items() if k != "metadata"}
        metadata = self._root.props.get("metadata")
        names = ("name", "generateName")
        self._name_checks = tuple((k, metadata.props[k]) for k in names if metadata and k in metadata.props)
        # (top-level key, compact JSON) of values this validator walked without pruning or finding
        # anything -> the value it made of them (None: the same; a tuple: the defaults it added, see
        # _as_additions; bytes: its defaulted JSON; a _Walked: that JSON, its additions not worked
        # out until the value comes again): the same value again would come out the same (see ``apply``)
        self._clean: dict[tuple[str, bytes], bytes | tuple | None] = {}
        # (by hash) the values the walk changed, walked clean once: one that never comes again (a
        # pool per node) costs a hash, not its defaulted JSON kept until the table is full
        self._seen: set[int] = set()

    def apply(self, obj: dict, *, unchanged: tuple[str, ...] = (), remember: bool = False, settled: tuple[str, ...] = (),
              stored: dict | None = None) -> Outcome:
        """Prune, default and validate ``obj`` in place (metadata itself is checked by meta.py).

        ``unchanged``: top-level fields the caller knows this validator has already pruned,
        defaulted and passed (an update leaving them as stored): they are not walked again, and
        neither are their list types and embedded resources checked again (each check of a
        top-level value is a function of that value and the schema alone, and found nothing in
        it). The checks on the object as a whole (required fields) still see them.

        ``stored``: the object an update replaces, when the caller knows this validator admitted
        it: the values of the changed fields that are the same as stored, at any depth, are not
        walked again either (:mod:`mockapi.schema.changed`). A changed field that has a stored
        counterpart is not remembered (below): an update's changed value is mostly new, and its
        walk against the stored one costs less than encoding it twice to remember it.

        ``settled``: top-level fields the caller knows came out of an earlier apply of this
        validator (in an object whose whole outcome was clean) exactly as they are now: no check
        looks at them again, list types and embedded resources included (the registry's create
        verdicts, registry/verdicts.py).

        ``remember``: a top-level value (``spec`` of a Pod made from a template, say) that this
        validator walked before without pruning anything or finding a problem is not walked
        again: it becomes what the walk made of it then (with the same defaults), since the walk
        is a function of the value alone. Costs a compact encoding of each such value."""
        if type(obj) is not dict:
            return Outcome([], [meta.type_error("", "object", obj)])
        run = _Run()
        fresh: list[tuple[str, bytes]] = []
        if remember:
            known = []
            for key, value in obj.items():
                if key not in _TYPE_META and key not in unchanged and key not in settled and type(value) in (dict, list):
                    encoded = _compact(value)
                    if encoded is not None:
                        entry = (key, encoded)
                        (known if entry in self._clean else fresh).append(entry)
            if known:
                for entry in known:
                    after = self._clean[entry]
                    if type(after) is _Walked:  # its first use: how to make it again, worked out once
                        after = self._clean[entry] = _as_additions(entry[1], after.after)
                    if type(after) is bytes:
                        obj[entry[0]] = orjson.loads(after)
                    elif after is not None:
                        _add_defaults(obj[entry[0]], after)
                unchanged = (*unchanged, *(key for key, _ in known))
                # remembered only from clean outcomes: their list types and embedded resources passed too
                settled = (*settled, *(key for key, _ in known))
        try:
            self._walk(obj, run, (*unchanged, *settled) if settled else unchanged, stored)
        except RecursionError:
            run.errors.append(errors.FieldError("invalid", "", "object is nested too deeply to validate"))
        unknown = run.meta_unknown + sorted(run.unknown) + run.embedded_unknown
        outcome = Outcome(unknown, run.errors + run.embedded_errors + run.list_errors)
        if fresh and not outcome.unknown_fields and not outcome.errors:
            self._remember_clean(obj, fresh, stored)
        return outcome

    def _remember_clean(self, obj: dict, walked: list[tuple[str, bytes]], stored: dict | None) -> None:
        for key, before in walked:
            if key not in obj:
                continue
            if stored is not None and key in stored and not self._seen_before(key, before):
                continue  # an update's value, mostly new (a status): kept from its second clean walk on
            after = _compact(obj[key])
            if after is None:
                continue
            if after != before and not self._seen_before(key, before):
                continue  # a value the walk changed is kept from its second clean walk on
            if len(self._clean) >= _CLEAN_SIZE:
                self._clean.clear()
            self._clean[(key, before)] = None if after == before else _Walked(after)

    def _walk(self, obj: dict, run: _Run, unchanged: tuple[str, ...], stored: dict | None = None) -> None:
        """The walk and the checks over the object; ``unchanged``: the top-level fields none of them looks at (settled ones included)."""
        root, errs = self._root, run.errors
        if type(stored) is dict:
            if root.direct_object:
                walk_changed_object(root, obj, stored, "", run, root.preserve, errs, root=True, skip=unchanged)
            else:
                walk_changed_object(root, obj, stored, "", run, root.preserve, [], root=True, skip=unchanged)
                _validate(self._validation_root, obj, "", errs)  # whose props lack metadata
        elif root.direct_object:
            _walk_object(root, obj, "", run, root.preserve, errs, root=True, skip=unchanged)
        else:
            _walk_object(root, obj, "", run, root.preserve, [], root=True, skip=unchanged)
            _validate(self._validation_root, obj, "", errs)  # whose props lack metadata
        metadata = obj.get("metadata")
        if type(metadata) is dict:
            for key, node in self._name_checks:
                if key in metadata:
                    _validate(node, metadata[key], f"metadata.{key}", errs)
        if root.has_embedded or root.has_list_type:
            # the fields left as stored were checked when stored (a function of the value alone)
            changed = {key: value for key, value in obj.items() if key not in unchanged} if unchanged else obj
            if root.has_embedded:
                _embedded_errors(root, changed, "", run.embedded_errors, root=True)
            if root.has_list_type:
                _list_type_errors(root, changed, "", run.list_errors)


    def _seen_before(self, key: str, before: bytes) -> bool:
        """Whether this value was walked clean before; it is from now on."""
        seen = hash((key, before))
        if seen in self._seen:
            return True
        if len(self._seen) >= 4 * _CLEAN_SIZE:
            self._seen.clear()
        self._seen.add(seen)
        return False


class _Walked:
    """A remembered value's JSON as the walk made it, not yet used again (see _as_additions)."""

    __slots__ = ("after",)

    def __init__(self, after: bytes) -> None:
        self.after = after


def _compact(value: Any) -> bytes | None:
    """Compact JSON, or None for what orjson cannot encode (integers beyond 64 bits)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return None


def _as_additions(before: bytes, after: bytes) -> bytes | tuple:
    """What a walk did to a value, for doing it again: when it only added keys (defaults), the
    additions as ``(path, key, value)`` in the order the walk made them — a container value as its
    JSON, parsed afresh each time — which cost far less to put in place than parsing the whole
    value again; else ``after`` itself. Checked: the additions made to ``before`` give ``after``."""
    additions: list = []
    _find_additions(orjson.loads(before), orjson.loads(after), (), additions)
    if not additions:
        return after
    value = orjson.loads(before)
    _add_defaults(value, tuple(additions))
    return tuple(additions) if orjson.dumps(value) == after else after


def _find_additions(before: Any, after: Any, path: tuple, out: list) -> None:
    if type(before) is dict and type(after) is dict:
        for key, child in after.items():
            if key in before:
                _find_additions(before[key], child, (*path, key), out)
            else:
                out.append((path, key, orjson.dumps(child) if type(child) in (dict, list) else child))
    elif type(before) is list and type(after) is list and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after)):
            _find_additions(old, new, (*path, index), out)


def _add_defaults(value: Any, additions: tuple) -> None:
    for path, key, added in additions:
        node = value
        for step in path:
            node = node[step]
        node[key] = orjson.loads(added) if type(added) is bytes else added


_cache: OrderedDict[int, tuple[Any, Validator]] = OrderedDict()


def compile(schema: dict) -> Validator:  # noqa: A001 - the name the registry calls
    """The compiled validator for ``schema``, cached by identity (schemas are not mutated in place)."""
    key = id(schema)
    entry = _cache.get(key)
    if entry is not None and entry[0] is schema:
        _cache.move_to_end(key)
        return entry[1]
    validator = Validator(schema)
    _cache[key] = (schema, validator)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return validator


def apply_schema(schema: dict, obj: dict, *, unchanged: tuple[str, ...] = (), remember: bool = False, settled: tuple[str, ...] = (),
                 stored: dict | None = None) -> Outcome:
    """Prune, default and validate ``obj`` (mutated in place) against ``schema`` (see
    :meth:`Validator.apply` for ``unchanged``, ``remember``, ``settled`` and ``stored``)."""
    return compile(schema).apply(obj, unchanged=unchanged, remember=remember, settled=settled, stored=stored)


def validate_value(schema: Any, value: Any) -> list[errors.FieldError]:
    """kube-openapi validation alone, from a nameless root, as CRD default validation runs it: the
    paths are relative to the value ("" for the value itself, "a.b" below it)."""
    errs: list[errors.FieldError] = []
    _validate(_compile(schema), value, "", errs)
    return errs


def prune_value(schema: Any, value: Any) -> list[str]:
    """Prune unknown fields below ``value`` in place (no nulls, no defaults); the pruned paths."""
    run = _Run()
    _prune_only(_compile(schema), value, "", run, False)
    return run.unknown
