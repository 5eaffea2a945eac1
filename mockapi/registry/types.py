"""The type registry: which resource types are served, found by (group, version, plural) or kind.

Registering the same type twice is a no-op; registering a different type under a taken name
raises. Every change bumps :attr:`TypeRegistry.generation`, which discovery and the OpenAPI hash
follow, and notifies listeners (so a CRD applied at run time is served at once).
"""

from __future__ import annotations

from typing import Callable, Iterable

from mockapi import errors
from mockapi.gvk import ResourceType


class TypeRegistry:
    def __init__(self) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._by_gvk: dict[tuple[str, str, str], ResourceType] = {}
        self.generation = 0
        self._listeners: list[Callable[[], None]] = []

    def register(self, rt: ResourceType) -> None:
        key = (rt.group, rt.version, rt.plural)
        current = self._by_gvr.get(key)
        if current == rt:
            return
        if current is not None and not current.builtin and not rt.builtin:
            self.unregister(current)  # a CRD update replaces its own type
        elif current is not None:
            raise ValueError(f"resource {rt.plural}.{rt.group}/{rt.version} is already registered differently")
        self._by_gvr[key] = rt
        self._by_gvk[(rt.group, rt.version, rt.kind)] = rt
        self._changed()

    def unregister(self, rt: ResourceType) -> None:
        if self._by_gvr.pop((rt.group, rt.version, rt.plural), None) is not None:
            self._by_gvk.pop((rt.group, rt.version, rt.kind), None)
            self._changed()

    def lookup(self, group: str, version: str, plural: str) -> ResourceType:
        rt = self._by_gvr.get((group, version, plural))
        if rt is None:
            raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
        return rt

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        return self._by_gvk.get((group, version, kind))

    def kinds_of_group(self, group: str) -> list[ResourceType]:
        return [rt for rt in self._by_gvr.values() if rt.group == group]

    def all(self) -> Iterable[ResourceType]:
        return sorted(self._by_gvr.values(), key=lambda rt: (rt.group, rt.version, rt.plural))

    def groups(self) -> dict[str, list[str]]:
        """group → its versions, sorted (the empty group is core)."""
        groups: dict[str, set[str]] = {}
        for group, version, _ in self._by_gvr:
            groups.setdefault(group, set()).add(version)
        return {g: sorted(v) for g, v in sorted(groups.items())}

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _changed(self) -> None:
        self.generation += 1
        for listener in self._listeners:
            listener()
