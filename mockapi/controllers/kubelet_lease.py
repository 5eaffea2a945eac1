"""A simulated kubelet's node Lease (kube's ``pkg/kubelet/nodelease``, the NodeLease heartbeat).

Since NodeLease a kubelet proves it is alive by renewing a ``coordination.k8s.io/v1`` Lease named
after its Node in ``kube-node-lease`` every renew interval (a quarter of the lease's 40 s
duration), and writes the Node's status only when something in it changes or every
``nodeStatusReportFrequency`` (5 minutes): a small object every 10 s instead of the Node — which
every scheduler, allocator and kubelet informer reads — every 10 s. This module builds the Lease
and renews it; :mod:`mockapi.controllers.kubelet` decides when.
"""

from __future__ import annotations

from mockapi import errors
from mockapi.client import Client, Kind

LEASES, NAMESPACES, NODES = Kind("coordination.k8s.io/v1", "Lease"), Kind("v1", "Namespace"), Kind("v1", "Node")
NODE_LEASE_NAMESPACE = "kube-node-lease"  # kube-apiserver makes it at start-up (its system namespaces)
RENEW_FRACTION = 0.25  # kube's renewIntervalFraction: renew interval = 0.25 × leaseDurationSeconds


def duration_seconds(renew_interval: float) -> int:
    """``spec.leaseDurationSeconds`` for a lease renewed every ``renew_interval`` seconds: 40 for
    kube's 10 s."""
    return max(1, round(renew_interval / RENEW_FRACTION))


def lease(node: str, node_uid: str, *, renew_interval: float, now: str) -> dict:
    """A new Node Lease as the kubelet creates it: held by the node, owned by the Node (so the
    garbage collector removes it with the Node)."""
    meta: dict = {"name": node, "namespace": NODE_LEASE_NAMESPACE}
    if node_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid}]
    spec = {"holderIdentity": node, "leaseDurationSeconds": duration_seconds(renew_interval), "renewTime": now}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}


def renewed(found: dict, node: str, node_uid: str, *, renew_interval: float, now: str) -> dict:
    """``found`` (the last Lease written or read) with a new ``renewTime``, the holder and
    duration the kubelet keeps, and the Node's ownerReference added if missing (kube's
    ``setNodeOwnerFunc``)."""
    meta = dict(found["metadata"])
    owners = meta.get("ownerReferences") or []
    if node_uid and not any(o.get("kind") == "Node" and o.get("uid") == node_uid for o in owners):
        meta["ownerReferences"] = [*owners, {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid}]
    spec = {**(found.get("spec") or {}), "holderIdentity": node, "leaseDurationSeconds": duration_seconds(renew_interval), "renewTime": now}
    return {**found, "metadata": meta, "spec": spec}


async def renew(client: Client, last: dict | None, node: str, node_uid: str, *, renew_interval: float, now: str) -> dict | None:
    """Renew the node's Lease: an update of the last one written (no read, as kube's controller
    keeps ``latestLease``); when that is gone or stale (404, 409), read it again, or create it —
    and ``kube-node-lease`` with it if that namespace is missing. Returns the Lease written (None:
    the Node is gone meanwhile, say by a reset, and nothing was made)."""
    if last is not None:
        try:
            return await client.update(LEASES, renewed(last, node, node_uid, renew_interval=renew_interval, now=now))
        except errors.StatusError as exc:
            if exc.code not in (404, 409):
                raise
    try:
        current = await client.get(LEASES, NODE_LEASE_NAMESPACE, node)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        return await _create(client, lease(node, node_uid, renew_interval=renew_interval, now=now))
    return await client.update(LEASES, renewed(current, node, node_uid, renew_interval=renew_interval, now=now))


async def _create(client: Client, body: dict) -> dict | None:
    try:
        return await client.create(LEASES, body)
    except errors.StatusError as exc:
        if exc.code != 404:  # the namespace is missing (a reset, a server without it)
            raise
    try:
        await client.get(NODES, "", body["spec"]["holderIdentity"])
    except errors.StatusError as exc:
        if exc.code == 404:  # the Node went too (its deletion not seen yet): make nothing
            return None
        raise
    try:
        await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NODE_LEASE_NAMESPACE}})
    except errors.StatusError as exc:
        if exc.code != 409:
            raise
    return await client.create(LEASES, body)
