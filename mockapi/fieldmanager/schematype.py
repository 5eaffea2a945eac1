"""A kind's structural schema as structured-merge-diff sees it: scalars, maps and lists, each map
granular or atomic, each list atomic, a set or a map keyed by some of its items' fields.

The rules are kube-openapi's ``schemaconv`` and the CRD type converter's:

- ``x-kubernetes-list-type`` decides a list (``map`` keyed by ``x-kubernetes-list-map-keys``);
  without it, built-in kinds' ``x-kubernetes-patch-strategy: merge`` makes a map keyed by
  ``x-kubernetes-patch-merge-key`` (a set when there is no key); anything else is atomic.
- ``x-kubernetes-map-type: atomic`` makes an object atomic; otherwise objects merge field by field.
- ``x-kubernetes-preserve-unknown-fields`` (and anything the schema does not describe) is
  *deduced* from the value: objects merge granularly, lists are atomic, the rest are scalars.
- The top-level ``metadata`` is always ObjectMeta, whatever the CRD says about it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from mockapi.schema.goformat import go_json

SCALAR, MAP, LIST, DEDUCED = "scalar", "map", "list", "deduced"


class TypeNode:
    """One schema node. Lists: ``list_type`` atomic|set|map, ``keys``, ``key_defaults``, ``elem``.
    Maps: ``fields`` (declared properties), ``elem`` (the type of any other key), ``atomic``."""

    __slots__ = ("atomic", "elem", "fields", "key_defaults", "keys", "kind", "leaf", "list_type", "pes", "quoted_keys")

    def __init__(self, kind: str, *, fields: dict | None = None, elem: TypeNode | None = None, atomic: bool = False,
                 list_type: str = "atomic", keys: tuple = (), key_defaults: dict | None = None) -> None:  # fmt: skip
        self.kind = kind
        self.fields = fields or {}
        self.elem = elem
        self.atomic = atomic
        self.list_type = list_type
        self.keys = keys
        self.key_defaults = key_defaults or {}
        self.quoted_keys = tuple((key, go_json(key)) for key in sorted(keys))  # as a k:{...} element writes them
        self.leaf = kind == SCALAR or atomic or (kind == LIST and list_type == "atomic")  # walked as one value
        self.pes: dict[str, str] = {}  # a list keyed by one field: the path elements of its string keys (typed.item_pe)

    def field(self, name: str) -> tuple[TypeNode, bool]:
        """The type of a map key and whether it is a declared field."""
        declared = self.fields.get(name)
        if declared is not None:
            return declared, True
        return self.elem or DEDUCED_TYPE, False


SCALAR_TYPE = TypeNode(SCALAR)
DEDUCED_TYPE = TypeNode(DEDUCED)
DEDUCED_MAP = TypeNode(MAP, elem=DEDUCED_TYPE)
ATOMIC_LIST = TypeNode(LIST, elem=DEDUCED_TYPE)
ATOMIC_VALUE = TypeNode(MAP, atomic=True)  # a value whose shape does not fit its schema: one leaf


def shape(t: TypeNode, value: Any) -> TypeNode:
    """The type a value is walked with: deduced types take the value's shape; a value of the wrong
    shape for its schema is a single leaf (validation reports it, not the field manager)."""
    kind, cls = t.kind, value.__class__
    if kind is SCALAR:
        return t if cls is not dict and cls is not list else ATOMIC_VALUE
    if kind is MAP:
        return t if cls is dict or value is None else ATOMIC_VALUE
    if kind is LIST:
        return t if cls is list or value is None else ATOMIC_VALUE
    return DEDUCED_MAP if cls is dict else ATOMIC_LIST if cls is list else SCALAR_TYPE


def _meta_type() -> TypeNode:
    """metav1.ObjectMeta as its OpenAPI (and so structured-merge-diff) describes it."""
    scalars = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
               "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")  # fmt: skip
    owner_fields = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
    owner = TypeNode(MAP, atomic=True, fields={name: SCALAR_TYPE for name in owner_fields})  # structType=atomic
    fields = {name: SCALAR_TYPE for name in scalars}
    fields["labels"] = TypeNode(MAP, elem=SCALAR_TYPE)
    fields["annotations"] = TypeNode(MAP, elem=SCALAR_TYPE)
    fields["finalizers"] = TypeNode(LIST, list_type="set", elem=SCALAR_TYPE)
    fields["ownerReferences"] = TypeNode(LIST, list_type="map", keys=("uid",), elem=owner)
    fields["managedFields"] = TypeNode(LIST, elem=DEDUCED_TYPE)
    return TypeNode(MAP, fields=fields, elem=DEDUCED_TYPE)


OBJECT_META = _meta_type()

_CACHE: OrderedDict[int, tuple[dict, TypeNode]] = OrderedDict()
_CACHE_SIZE = 256


def root_type(schema: dict | None) -> TypeNode:
    """The compiled type of a kind's ``openAPIV3Schema`` (cached per schema object)."""
    key = id(schema)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is schema:
        _CACHE.move_to_end(key)
        return hit[1]
    compiled = _compile_root(schema if isinstance(schema, dict) else {})
    _CACHE[key] = (schema, compiled)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return compiled


def _compile_root(schema: dict) -> TypeNode:
    root = _compile(schema, {})
    if root.kind is not MAP:
        root = TypeNode(MAP, elem=DEDUCED_TYPE)
    return _as_object(root)


def _as_object(node: TypeNode) -> TypeNode:
    """A resource's type: apiVersion and kind are scalars and metadata is ObjectMeta."""
    fields = dict(node.fields, apiVersion=SCALAR_TYPE, kind=SCALAR_TYPE, metadata=OBJECT_META)
    return TypeNode(MAP, fields=fields, elem=node.elem, atomic=node.atomic)


def _compile(schema: Any, seen: dict) -> TypeNode:
    if not isinstance(schema, dict):
        return DEDUCED_TYPE
    hit = seen.get(id(schema))
    if hit is not None:
        return hit
    node = _compile_node(schema, seen)
    seen[id(schema)] = node
    return node


def _compile_node(schema: dict, seen: dict) -> TypeNode:
    kind = schema.get("type")
    if schema.get("x-kubernetes-int-or-string") is True:
        return SCALAR_TYPE
    if kind == "array" or (kind is None and isinstance(schema.get("items"), dict)):
        return _compile_list(schema, seen)
    declares_keys = isinstance(schema.get("properties"), dict) or isinstance(schema.get("additionalProperties"), dict)
    if kind == "object" or declares_keys:
        return _compile_map(schema, seen)
    if kind in ("string", "integer", "number", "boolean"):
        return SCALAR_TYPE
    return DEDUCED_TYPE


def _compile_map(schema: dict, seen: dict) -> TypeNode:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    fields = {name: _compile(sub, seen) for name, sub in properties.items()}
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        elem = _compile(extra, seen)
    else:
        elem = DEDUCED_TYPE  # preserve-unknown-fields, or keys the schema never declared (pruned upstream)
    node = TypeNode(MAP, fields=fields, elem=elem, atomic=schema.get("x-kubernetes-map-type") == "atomic")
    return _as_object(node) if schema.get("x-kubernetes-embedded-resource") is True else node


def _compile_list(schema: dict, seen: dict) -> TypeNode:
    items = schema.get("items")
    elem = _compile(items, seen)
    list_type, keys = _list_relationship(schema)
    defaults = {}
    if keys and isinstance(items, dict) and isinstance(items.get("properties"), dict):
        for key in keys:
            sub = items["properties"].get(key)
            if isinstance(sub, dict) and "default" in sub:
                defaults[key] = sub["default"]
    return TypeNode(LIST, list_type=list_type, keys=keys, key_defaults=defaults, elem=elem)


def _list_relationship(schema: dict) -> tuple[str, tuple]:
    """kube-openapi's getListElementRelationship."""
    list_type = schema.get("x-kubernetes-list-type")
    if list_type is not None:
        if list_type == "map":
            keys = schema.get("x-kubernetes-list-map-keys")
            keys = tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else ()
            return ("map", keys) if keys else ("set", ())
        return ("set", ()) if list_type == "set" else ("atomic", ())
    strategy = schema.get("x-kubernetes-patch-strategy")
    if strategy in ("merge", "merge,retainKeys", "retainKeys,merge"):
        key = schema.get("x-kubernetes-patch-merge-key")
        return ("map", (key,)) if isinstance(key, str) and key else ("set", ())
    return "atomic", ()
