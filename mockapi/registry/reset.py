"""Reset: back to a fresh cluster, for the control API (``POST /mockapi/v1/reset``) and test fixtures.

Every object goes except the default namespaces, what a cluster makes for itself (the system
PriorityClasses, each namespace's ``default`` ServiceAccount, RBAC's bootstrap roles and bindings, the local APIServices) and, unless asked otherwise, the
CustomResourceDefinitions (and so the kinds they serve). Each deletion is a real one, with a
DELETED event at a new resourceVersion, so watchers and controllers see the objects go and the
resourceVersion keeps counting up, as it would on a cluster. Finalizers do not hold anything back:
a reset is a force delete. The default namespaces lose the labels and annotations added since
start-up; our own CRDs are put back as generated when CRDs are not kept.
"""

from __future__ import annotations

from typing import Callable, Iterable

from mockapi import errors
from mockapi.registry import apiservices, rbac, scheduling, serviceaccounts
from mockapi.registry.crds import CRDS, GROUP as CRD_GROUP, KIND as CRD_KIND
from mockapi.registry.namespaces import NAME_LABEL, NAMESPACES, PROTECTED_NAMESPACES
from mockapi.registry.options import WriteOptions
from mockapi.registry.rest import Registry

SERVICE_ACCOUNTS = errors.GroupResource("", "serviceaccounts")


def reset(registry: Registry, *, keep_crds: bool = True, keep_namespaces: bool = False, seed_crds: Callable[[], Iterable[dict]] = list) -> int:
    """Delete what a test left behind; returns how many objects were deleted.

    ``keep_crds``: keep every CRD (ours and those applied since) and the kinds they serve, empty.
    Otherwise CRDs applied since start-up are deleted and ``seed_crds()`` (ours) are restored.
    ``keep_namespaces``: keep namespaces created since start-up, empty.
    """
    store = registry.store
    deleted = 0
    for resource in store.resources():
        if resource not in (NAMESPACES, CRDS):
            deleted += _delete_all(registry, resource)
    if not keep_crds:
        deleted += _restore_crds(registry, list(seed_crds()))
    for stored in list(store.iterate(NAMESPACES)):
        if stored.name in PROTECTED_NAMESPACES:
            _restore_namespace(registry, stored)
        elif not keep_namespaces:
            deleted += registry.force_delete(_namespace_type(registry), "", stored.name)
    return deleted


def _delete_all(registry: Registry, resource) -> int:
    rt = next((t for t in registry.types.all() if t.group_resource == resource), None)
    victims = [s for s in registry.store.iterate(resource) if not system_object(resource, s.name, raw=s.raw)]
    for stored in victims:
        if rt is None:  # objects of a kind no longer served: nothing to run for them
            registry.store.delete(resource, stored.namespace, stored.name)
        else:
            registry.force_delete(rt, stored.namespace, stored.name)
    return len(victims)


def system_object(resource, name: str, *, raw: bytes = b"") -> bool:
    """Objects a fresh cluster has beside the namespaces: a reset keeps them (with ``raw``, the
    stored object, also RBAC's bootstrap roles and bindings, labelled as kube labels them)."""
    if resource == SERVICE_ACCOUNTS:
        return name == serviceaccounts.DEFAULT
    if resource in (rbac.CLUSTER_ROLES, rbac.CLUSTER_ROLE_BINDINGS):
        return rbac.BOOTSTRAP_LABEL in raw
    if resource == apiservices.APISERVICES:
        return apiservices.system_apiservice(raw)
    return resource == scheduling.PRIORITY_CLASSES and name in scheduling.SYSTEM_CLASSES


def _namespace_type(registry: Registry):
    return registry.types.by_kind("", "v1", "Namespace")


def _restore_crds(registry: Registry, seed: list[dict]) -> int:
    crd_type = registry.types.by_kind(CRD_GROUP, "v1", CRD_KIND)
    ours = {crd["metadata"]["name"]: crd for crd in seed}
    deleted = 0
    for stored in list(registry.store.iterate(CRDS)):
        if stored.name not in ours:
            deleted += registry.force_delete(crd_type, "", stored.name)
    for name, crd in ours.items():
        body = _copy(crd)
        current = registry.store.get(CRDS, "", name)
        if current is None:
            registry.create(crd_type, "", body, WriteOptions(field_validation="Strict"))
            continue
        body["metadata"]["resourceVersion"] = current.load()["metadata"]["resourceVersion"]
        registry.update(crd_type, "", name, body, WriteOptions(field_validation="Strict"))
    return deleted


def _restore_namespace(registry: Registry, stored) -> None:
    obj = stored.load()
    meta = obj["metadata"]
    pristine = {NAME_LABEL: stored.name}
    if meta.get("labels") == pristine and not meta.get("annotations"):
        return
    meta["labels"] = pristine
    meta.pop("annotations", None)
    registry.cluster.write(_namespace_type(registry), obj)


def _copy(obj: dict) -> dict:
    import orjson

    return orjson.loads(orjson.dumps(obj))
