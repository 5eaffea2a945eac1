"""ServiceAccounts (core/v1) and what kube's service-account controller does for them: every
namespace has a ``default`` ServiceAccount, made when the namespace is and made again when
deleted, for as long as the namespace is not terminating.

Left out: the ServiceAccount admission plugin's changes to pods (``serviceAccountName: default``,
the projected ``kube-api-access-*`` token volume) and tokens (mockapi has no authentication).
"""

from __future__ import annotations

from mockapi import errors
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy

DEFAULT = "default"
NAMESPACES = errors.GroupResource("", "namespaces")


class ServiceAccountStrategy(Strategy):
    def after_delete(self, cluster: Cluster, obj: dict) -> None:
        if obj["metadata"]["name"] == DEFAULT:
            ensure_default(cluster, obj["metadata"].get("namespace", ""))


def ensure_default(cluster: Cluster, namespace: str) -> None:
    """The service-account controller: the namespace's ``default`` ServiceAccount, if the
    namespace is there and active."""
    stored = cluster.get(NAMESPACES, "", namespace)
    if stored is None or b'"phase":"Terminating"' in stored.raw:
        return
    rt = cluster.types.by_kind("", "v1", "ServiceAccount")
    cluster.create(rt, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": namespace}})
