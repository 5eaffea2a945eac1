"""An in-memory :class:`mockapi.client.Client` for the scheduler controller's tests: objects by
kind and key, watches that list then stream, merge patches, and ``bind`` as the API server does it
(``spec.nodeName`` set, ``PodScheduled=True``; 409 when already bound). Every write is recorded."""

from __future__ import annotations

import asyncio
import copy
import itertools

from mockapi import errors
from mockapi.client import ADDED, DELETED, MODIFIED, SYNCED, Kind, WatchEvent

PODS, NODES = Kind("v1", "Pod"), Kind("v1", "Node")


def merge(target: dict, patch: dict) -> dict:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


class FakeClient:
    def __init__(self, *, fail_bind: set[str] = frozenset()) -> None:
        self.objects: dict[Kind, dict[tuple[str, str], dict]] = {}
        self.watchers: dict[Kind, list[asyncio.Queue]] = {}
        self.events: list[dict] = []
        self.bindings: list[tuple[str, str]] = []
        self.writes: list[tuple] = []
        self.fail_bind = set(fail_bind)
        self._rv = itertools.count(1)

    # ------------------------------------------------------------- helpers for tests
    def put(self, kind: Kind, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        store = self.objects.setdefault(kind, {})
        event_type = MODIFIED if key in store else ADDED
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        store[key] = obj
        self._emit(kind, event_type, obj)
        return copy.deepcopy(obj)

    def pod(self, namespace: str, name: str) -> dict | None:
        return self.objects.get(PODS, {}).get((namespace, name))

    def reasons(self, name: str) -> list[str]:
        return [e["reason"] for e in self.events if e["involvedObject"]["name"] == name]

    def _emit(self, kind: Kind, event_type: str, obj: dict) -> None:
        for queue in self.watchers.get(kind, []):
            queue.put_nowait(WatchEvent(event_type, copy.deepcopy(obj)))

    def _get(self, kind: Kind, namespace: str, name: str) -> dict:
        found = self.objects.get(kind, {}).get((namespace, name))
        if found is None:
            raise errors.StatusError(404, "NotFound", f'{kind.kind.lower()}s "{name}" not found')
        return found

    # ------------------------------------------------------------- the Client protocol
    async def get(self, kind: Kind, namespace: str, name: str) -> dict:
        return copy.deepcopy(self._get(kind, namespace, name))

    async def list(self, kind: Kind, namespace: str = "") -> tuple[list[dict], str]:
        return [copy.deepcopy(o) for (ns, _), o in sorted(self.objects.get(kind, {}).items()) if not namespace or ns == namespace], "1"

    async def watch(self, kind: Kind, namespace: str = "", *, echoes: bool = False):  # announces no writes: no echoes
        queue: asyncio.Queue = asyncio.Queue()
        for obj in (await self.list(kind, namespace))[0]:
            queue.put_nowait(WatchEvent(ADDED, obj))
        queue.put_nowait(WatchEvent(SYNCED, None))
        self.watchers.setdefault(kind, []).append(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self.watchers[kind].remove(queue)

    async def create(self, kind: Kind, obj: dict) -> dict:
        return self.put(kind, obj)

    async def update(self, kind: Kind, obj: dict) -> dict:
        return self.put(kind, obj)

    async def update_status(self, kind: Kind, obj: dict) -> dict:
        return self.put(kind, obj)

    async def patch(self, kind: Kind, namespace: str, name: str, patch: dict, *, subresource: str = "") -> dict:
        self.writes.append(("patch", kind.kind, namespace, name, subresource, copy.deepcopy(patch)))
        obj = copy.deepcopy(self._get(kind, namespace, name))
        return self.put(kind, merge(obj, patch))

    async def delete(self, kind: Kind, namespace: str, name: str) -> None:
        self.writes.append(("delete", kind.kind, namespace, name))
        obj = self._get(kind, namespace, name)
        del self.objects[kind][(namespace, name)]
        self._emit(kind, DELETED, obj)

    async def create_event(self, event: dict) -> None:
        self.events.append(copy.deepcopy(event))

    async def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        self.writes.append(("bind", namespace, name, uid, node_name))
        if name in self.fail_bind:
            raise errors.StatusError(500, "InternalError", f'binding pod "{name}" failed')
        pod = copy.deepcopy(self._get(PODS, namespace, name))
        if pod["spec"].get("nodeName"):
            raise errors.StatusError(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"')
        pod["spec"]["nodeName"] = node_name
        conditions = [c for c in pod.get("status", {}).get("conditions", []) if c.get("type") != "PodScheduled"]
        pod.setdefault("status", {})["conditions"] = conditions + [{"type": "PodScheduled", "status": "True"}]
        self.bindings.append((f"{namespace}/{name}", node_name))
        self.put(PODS, pod)
