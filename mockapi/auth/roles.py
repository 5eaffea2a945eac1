"""The ClusterRoles and ClusterRoleBindings every kube cluster starts with that matter here
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go and its testdata, Kubernetes v1.32):
``cluster-admin`` bound to ``system:masters``; ``system:discovery``, ``system:basic-user`` and
``system:public-info-viewer`` for every user; the user-facing ``admin``, ``edit`` and ``view``,
aggregated from ``system:aggregate-to-*`` (rules limited to the kinds kube ships, plus a
devmgmtproto.k8s.io pair so ``view`` and ``edit`` cover the prototype's kinds as a CRD author's
aggregated roles would).

:func:`bootstrap` creates those that are missing (kube's post-start hook reconciles them).
"""

from __future__ import annotations

from typing import Any

from mockapi.registry.options import WriteOptions

GROUP = "rbac.authorization.k8s.io"
API_VERSION = f"{GROUP}/v1"
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
READ_WRITE = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
DEVICES = "devmgmtproto.k8s.io"
DEVICE_KINDS = ["deviceclaims", "deviceclaimtemplates", "deviceclasses", "devicedrivers", "devicepools", "deviceprivilegedclaims"]


def rule(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None, *, urls: list[str] | None = None) -> dict:
    out: dict = {"verbs": list(verbs)}
    if urls:
        out["nonResourceURLs"] = list(urls)
    else:
        out["apiGroups"], out["resources"] = list(groups or []), list(resources or [])
    return out


def cluster_role(name: str, rules: list[dict], *, labels: dict | None = None, aggregate: str = "") -> dict:
    role: dict = {
        "apiVersion": API_VERSION, "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {**_LABELS, **(labels or {})}, "annotations": dict(_ANNOTATIONS)},
        "rules": rules,
    }
    if aggregate:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate: "true"}}]}
    return role


def binding(name: str, role: str, groups: list[str]) -> dict:
    return {
        "apiVersion": API_VERSION, "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": dict(_LABELS), "annotations": dict(_ANNOTATIONS)},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": group} for group in groups],
    }


def _to(aggregate: str) -> dict:
    return {AGGREGATE_TO + aggregate: "true"}


def cluster_roles() -> list[dict]:
    discovery = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]
    return [
        cluster_role("cluster-admin", [rule(["*"], ["*"], ["*"]), rule(["*"], urls=["*"])]),
        cluster_role("system:discovery", [rule(["get"], urls=discovery)]),
        cluster_role("system:public-info-viewer", [rule(["get"], urls=["/healthz", "/livez", "/readyz", "/version", "/version/"])]),
        cluster_role("system:basic-user", [
            rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
        ]),
        cluster_role("admin", [], aggregate="admin"),
        cluster_role("edit", [], labels=_to("admin"), aggregate="edit"),
        cluster_role("view", [], labels=_to("edit"), aggregate="view"),
        cluster_role("system:aggregate-to-admin", [
            rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
            rule(READ_WRITE, [GROUP], ["rolebindings", "roles"]),
        ], labels=_to("admin")),
        cluster_role("system:aggregate-to-edit", [
            rule(READ, [""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"]),
            rule(["impersonate"], [""], ["serviceaccounts"]),
            rule(WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
            rule(["create"], [""], ["pods/eviction"]),
            rule(WRITE, [""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"]),
            rule(["create"], [""], ["serviceaccounts/token"]),
            rule(WRITE, ["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]),
            rule(WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
            rule(WRITE, ["batch"], ["cronjobs", "jobs"]),
            rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
            rule(WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
            rule(WRITE, ["coordination.k8s.io"], ["leases"]),
        ], labels=_to("edit")),
        cluster_role("system:aggregate-to-view", [
            rule(READ, [""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"]),
            rule(READ, [""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"]),
            rule(READ, [""], ["namespaces"]),
            rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
            rule(READ, ["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]),
            rule(READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
            rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
            rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
            rule(READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
        ], labels=_to("view")),
        # devmgmtproto.k8s.io's own aggregated roles (what a CRD author ships beside the CRDs).
        cluster_role("devmgmtproto:aggregate-to-edit", [rule(WRITE, [DEVICES], ["deviceclaims", "deviceclaimtemplates", "deviceprivilegedclaims"])], labels=_to("edit")),
        cluster_role("devmgmtproto:aggregate-to-view", [rule(READ, [DEVICES], DEVICE_KINDS + ["deviceclaims/status"])], labels=_to("view")),
    ]


def cluster_role_bindings() -> list[dict]:
    return [
        binding("cluster-admin", "cluster-admin", ["system:masters"]),
        binding("system:discovery", "system:discovery", ["system:authenticated"]),
        binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        binding("system:public-info-viewer", "system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
    ]


def bootstrap(registry: Any) -> None:
    """Create the bootstrap roles and bindings that are not there (a user's changes are kept)."""
    for kind, objects in (("ClusterRole", cluster_roles()), ("ClusterRoleBinding", cluster_role_bindings())):
        rt = registry.types.by_kind(GROUP, "v1", kind)
        if rt is None:
            return
        for obj in objects:
            if registry.store.get(rt.group_resource, "", obj["metadata"]["name"]) is None:
                registry.create(rt, "", obj, WriteOptions(field_validation="Strict"))
