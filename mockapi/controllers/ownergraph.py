"""The garbage collector's graph: each object by uid with its ownerReferences, and for each owner
uid (present or not) the uids of its dependents — kube's ``GraphBuilder`` without its informers.

Each change returns the work it calls for, as keys for the collector's queue: ``("delete", uid)``
(may this object go, or — for an owner deleted in the foreground — may it lose its finalizer) and
``("orphan", uid)``. The graph only says what to look at; the collector re-reads before acting.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockapi.client import Kind

FOREGROUND, ORPHAN = "foregroundDeletion", "orphan"  # the finalizers the server sets on DELETE

Identity = tuple[str, str, str, str]  # (group, kind, namespace, name)
WorkKey = tuple[str, str]  # ("delete" | "orphan", uid)


@dataclass(slots=True)
class Vertex:
    """One object as the graph knows it."""

    kind: Kind
    namespace: str
    name: str
    owners: dict[str, dict]  # owner uid → the ownerReference
    deleting: bool
    finalizers: frozenset[str]

    @property
    def deleting_dependents(self) -> bool:
        return self.deleting and FOREGROUND in self.finalizers

    @property
    def orphaning(self) -> bool:
        return self.deleting and ORPHAN in self.finalizers


def _vertex(kind: Kind, meta: dict) -> Vertex:
    owners = {ref["uid"]: ref for ref in meta.get("ownerReferences") or () if ref.get("uid")}
    return Vertex(kind, meta.get("namespace", ""), meta["name"], owners, bool(meta.get("deletionTimestamp")), frozenset(meta.get("finalizers") or ()))


class Graph:
    """Objects by uid and the owner → dependents edges. Each change returns the work it calls for."""

    def __init__(self) -> None:
        self.vertices: dict[str, Vertex] = {}
        self.uids: dict[Identity, str] = {}
        self.dependents: dict[str, set[str]] = {}  # owner uid (present or not) → dependent uids

    def upsert(self, kind: Kind, obj: dict) -> list[WorkKey]:
        meta = obj["metadata"]
        uid = meta.get("uid", "")
        identity = (kind.group, kind.kind, meta.get("namespace", ""), meta["name"])
        work: list[WorkKey] = []
        replaced = self.uids.get(identity)
        if replaced is not None and replaced != uid:
            work += self._drop(replaced)  # deleted and created again under the same name
        old, new = self.vertices.get(uid), _vertex(kind, meta)
        self.vertices[uid], self.uids[identity] = new, uid
        before = old.owners if old is not None else {}
        for owner in before.keys() - new.owners.keys():
            self._unlink(owner, uid)
        for owner in new.owners.keys() - before.keys():
            self.dependents.setdefault(owner, set()).add(uid)
        for owner in sorted(before.keys() | new.owners.keys()):
            if before.get(owner) != new.owners.get(owner):
                work += self._recheck_owner(owner)  # a blocking dependent came or went
        if (old is None or before != new.owners) and self.needs_check(new):
            work.append(("delete", uid))
        if new.deleting_dependents and not (old is not None and old.deleting_dependents):
            # its dependents first, then itself (kube's order): the ones that do not block still go
            work += [("delete", d) for d in sorted(self.dependents.get(uid, ()))] + [("delete", uid)]
        if new.orphaning and not (old is not None and old.orphaning):
            work.append(("orphan", uid))
        return work

    def remove(self, kind: Kind, obj: dict) -> list[WorkKey]:
        meta = obj["metadata"]
        uid = self.uids.get((kind.group, kind.kind, meta.get("namespace", ""), meta["name"]), meta.get("uid", ""))
        return self._drop(uid)

    def drop_kind(self, kind: Kind) -> list[WorkKey]:
        """The kind is no longer served: its objects are gone."""
        gone = sorted(uid for (group, name, _, _), uid in self.uids.items() if (group, name) == (kind.group, kind.kind))
        return [key for uid in gone for key in self._drop(uid)]

    def needs_check(self, vertex: Vertex) -> bool:
        """Whether an owner may be gone (not known here) or waits for its dependents to go."""
        return any(owner not in self.vertices or self.vertices[owner].deleting_dependents for owner in vertex.owners)

    def initial_work(self) -> list[WorkKey]:
        """What to look at once every informer has listed (after a start or a restart)."""
        work: list[WorkKey] = []
        for uid, vertex in sorted(self.vertices.items()):
            if self.needs_check(vertex) or vertex.deleting_dependents:
                work.append(("delete", uid))
            if vertex.orphaning:
                work.append(("orphan", uid))
        return work

    def blocking(self, owner: str) -> list[str]:
        """The dependents an owner deleted in the foreground waits for."""
        found = sorted(self.dependents.get(owner, ()))
        return [uid for uid in found if uid in self.vertices and self.vertices[uid].owners.get(owner, {}).get("blockOwnerDeletion")]

    def _drop(self, uid: str) -> list[WorkKey]:
        vertex = self.vertices.pop(uid, None)
        if vertex is None:
            return []
        identity = (vertex.kind.group, vertex.kind.kind, vertex.namespace, vertex.name)
        if self.uids.get(identity) == uid:
            del self.uids[identity]
        work: list[WorkKey] = []
        for owner in sorted(vertex.owners):
            self._unlink(owner, uid)
            work += self._recheck_owner(owner)
        return work + [("delete", d) for d in sorted(self.dependents.get(uid, ()))]

    def _unlink(self, owner: str, uid: str) -> None:
        found = self.dependents.get(owner)
        if found is not None:
            found.discard(uid)
            if not found:
                del self.dependents[owner]

    def _recheck_owner(self, owner: str) -> list[WorkKey]:
        vertex = self.vertices.get(owner)
        return [("delete", owner)] if vertex is not None and vertex.deleting_dependents else []
