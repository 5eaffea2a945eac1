"""Identity of API types, apart from their schema (lightkube's ``core/resource.py`` idea).

A :class:`ResourceType` is a small frozen value: group, version, kind, plural, scope and the few
facts the REST layer and discovery need. It is built from a CustomResourceDefinition manifest
(:func:`from_crd`), for our own kinds, for the core kinds we describe in CRD form, and for CRDs
users apply at run time — one path for all of them.

Its ``schema`` may be given as a function that returns it: the built-in kinds register from a
small index (:mod:`mockapi.registry.builtin`) and read their schema when it is first needed — the
first write of the kind, the first OpenAPI v3 fetch — so ~40 kinds cost nothing at start-up until
used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from mockapi.errors import GroupResource


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


def parse_api_version(api_version: str) -> tuple[str, str]:
    """``"devmgmtproto.k8s.io/v1alpha1"`` → ``("devmgmtproto.k8s.io", "v1alpha1")``; ``"v1"`` → ``("", "v1")``."""
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(frozen=True)
class PrinterColumn:
    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


class _Schema:
    """The ``schema`` field: a dict, or a function returning it, called on the first read (once)."""

    def __get__(self, rt, owner=None):
        if rt is None:
            return self
        schema = rt.__dict__["_schema"]
        if callable(schema):
            schema = rt.__dict__["_schema"] = schema()
        return schema

    def __set__(self, rt, schema) -> None:  # the frozen dataclass's __init__ sets it through object.__setattr__
        rt.__dict__["_schema"] = {} if schema is self else schema  # the default: no schema


_SCHEMA = _Schema()


@dataclass(frozen=True)
class ResourceType:
    """One served (group, version, resource)."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    list_kind: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()
    printer_columns: tuple[PrinterColumn, ...] = ()
    # Field selectors accepted beyond metadata.name / metadata.namespace (CRD selectableFields,
    # or the per-kind ones kube-apiserver registers for core kinds).
    selectable_fields: tuple[str, ...] = ()
    # The structural openAPIV3Schema of this version (validation, pruning, defaulting, SMP keys).
    # Compared (a CRD update that changes only a schema serves a new type) but not hashed. Given as
    # a function, it is read on first use (the built-in kinds: see the module docstring).
    schema: dict[str, Any] | Callable[[], dict[str, Any]] = field(default=_SCHEMA, hash=False, repr=False)  # type: ignore[assignment]
    # True for the kinds the server ships (core v1, apiextensions); False for CRD-registered ones.
    builtin: bool = False
    # The CRD's storage version when it has more than one version ("" otherwise): objects are
    # stored in it and converted to the version a client asks for (mockapi.registry.conversion).
    storage_version: str = ""

    @property
    def gvk(self) -> GroupVersionKind:
        return GroupVersionKind(self.group, self.version, self.kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __hash__(self) -> int:
        """By (group, version, plural), computed once: equal types share it, and the registry looks
        types up in its dicts several times per request (the generated hash covered every field)."""
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash((self.group, self.version, self.plural))

    @cached_property
    def group_resource(self) -> GroupResource:
        """One shared value per type (it keys the store and every history event)."""
        return GroupResource(self.group, self.plural)

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources


def from_crd(crd: dict[str, Any], *, builtin: bool = False, schemas: Callable[[str], Callable[[], dict]] | None = None) -> list[ResourceType]:
    """The served versions of a CustomResourceDefinition manifest (already validated) as ResourceTypes.

    ``schemas``: for a manifest given without its schemas (the built-in kinds' index), a function
    from a version's name to the function that reads that version's schema when it is first needed."""
    spec = crd["spec"]
    names = spec["names"]
    kinds = []
    versions = spec.get("versions") or []
    storage = next((v["name"] for v in versions if v.get("storage")), "") if len(versions) > 1 else ""
    for version in versions:
        if not version.get("served", True):
            continue
        kinds.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                kind=names["kind"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                list_kind=names.get("listKind") or names["kind"] + "List",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=frozenset((version.get("subresources") or {}).keys()),
                printer_columns=tuple(
                    PrinterColumn(
                        name=c["name"],
                        type=c.get("type", "string"),
                        json_path=c["jsonPath"],
                        description=c.get("description", ""),
                        format=c.get("format", ""),
                        priority=int(c.get("priority", 0)),
                    )
                    for c in version.get("additionalPrinterColumns") or ()
                ),
                selectable_fields=tuple(f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or ()),
                schema=schemas(version["name"]) if schemas is not None else (version.get("schema") or {}).get("openAPIV3Schema") or {},
                builtin=builtin,
                storage_version=storage,
            )
        )
    return kinds
