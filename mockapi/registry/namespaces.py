"""Namespaces: the kind's strategy, kube's NamespaceLifecycle admission and the namespace
controller, in one place.

- Objects can only be created in an existing, non-terminating namespace (:func:`admit`, run for
  every namespaced kind on create).
- Deleting a namespace marks it Terminating (``status.phase``), deletes everything in it, and
  removes it once empty; objects held by finalizers keep it Terminating until they go
  (:func:`content_deleted`, run after every namespaced delete). ``default``, ``kube-system`` and
  ``kube-public`` cannot be deleted.
"""

from __future__ import annotations

from mockapi import errors
from mockapi.gvk import ResourceType
from mockapi.registry import serviceaccounts
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy, json_copy

NAMESPACES = errors.GroupResource("", "namespaces")
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
NAME_LABEL = "kubernetes.io/metadata.name"
_TERMINATING = b'"phase":"Terminating"'


class NamespaceStrategy(Strategy):
    name_rule = "label"
    return_deleted_object = True
    defers_delete = True  # the namespace controller empties it first

    def prepare_for_create(self, obj: dict) -> None:
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        spec["finalizers"] = spec.get("finalizers") or ["kubernetes"]
        meta = obj["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), NAME_LABEL: meta.get("name", "")}  # no name: a 422 follows

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "finalize":
            new["spec"] = json_copy(old.get("spec", {}))
        new["metadata"].setdefault("labels", {})[NAME_LABEL] = new["metadata"]["name"]
        return new

    def after_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        if old is None:  # kube's service-account controller
            serviceaccounts.ensure_default(cluster, obj["metadata"]["name"])

    def before_delete(self, cluster: Cluster, obj: dict) -> None:
        if obj["metadata"]["name"] in PROTECTED_NAMESPACES:
            raise errors.forbidden(NAMESPACES, obj["metadata"]["name"], "this namespace may not be deleted")

    def on_terminating(self, cluster: Cluster, obj: dict) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"

    def after_terminating(self, cluster: Cluster, obj: dict) -> None:
        namespace = obj["metadata"]["name"]
        for rt in cluster.namespaced_types():
            for stored in list(cluster.objects(rt.group_resource, namespace)):
                cluster.delete(rt, namespace, stored.name)
        _finish(cluster, namespace)


def admit(cluster: Cluster, rt: ResourceType, obj: dict) -> None:
    """NamespaceLifecycle: a namespaced object needs its namespace, and one not terminating."""
    if not rt.namespaced:
        return
    namespace = obj["metadata"]["namespace"]
    stored = cluster.get(NAMESPACES, "", namespace)
    if stored is None:
        raise errors.not_found(NAMESPACES, namespace)
    if _TERMINATING in stored.raw:
        raise errors.forbidden(
            rt.group_resource,
            obj["metadata"].get("name", ""),
            f"unable to create new content in namespace {namespace} because it is being terminated",
        )


def content_deleted(cluster: Cluster, namespace: str) -> None:
    """After an object in ``namespace`` is gone: the namespace goes too if it was waiting for that."""
    _finish(cluster, namespace)


def _finish(cluster: Cluster, namespace: str) -> None:
    """Remove a Terminating namespace once nothing is left in it (the namespace controller)."""
    current = cluster.get(NAMESPACES, "", namespace)
    if current is None or _TERMINATING not in current.raw:
        return
    types = cluster.namespaced_types()
    for rt in types:
        if next(cluster.objects(rt.group_resource, namespace), None) is not None:
            return
    namespace_type = cluster.types.by_kind("", "v1", "Namespace")
    obj = current.load()
    obj.setdefault("spec", {})["finalizers"] = []
    if obj["metadata"].get("finalizers"):  # held by metadata finalizers: finalized, still there
        cluster.write(namespace_type, obj)
        return
    cluster.remove(namespace_type, obj)
