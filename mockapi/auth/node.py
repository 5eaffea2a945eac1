"""``--authorization-mode=Node,RBAC``: kube's Node authorizer (plugin/pkg/auth/authorizer/node)
in front of RBAC, and the checks of kube's NodeRestriction admission plugin that can be made on the
stored objects.

A node is the user ``system:node:<name>`` in the group ``system:nodes`` (kube's
``NodeIdentity``); anyone else gets no opinion and RBAC decides. For a node, as kube's authorizer
with ``AuthorizeNodeWithSelectors`` (beta, on since 1.32):

- **nodes**: get/list/watch its own Node only (by name: ``node 'n1' cannot read all nodes, only
  its own Node object``); create, update and patch (NodeRestriction: only its own — checked here
  by name on update and patch); ``nodes/status`` update and patch (its own).
- **pods**: list/watch with ``fieldSelector=spec.nodeName=<name>`` (``can only list/watch pods
  with spec.nodeName field selector`` otherwise); get a pod bound to it (the stored pod's
  ``spec.nodeName`` stands in for kube's graph); create and delete (mirror pods); ``pods/status``
  update and patch and ``pods/eviction`` create — for pods bound to it (NodeRestriction).
- **leases** in ``kube-node-lease`` named after it; **csinodes** named after it;
  **resourceslices**: create, and get/update/patch/delete of a slice whose ``spec.nodeName`` is it,
  list/watch/deletecollection with ``fieldSelector=spec.nodeName=<name>``.
- everything else: kube's static node rules (``bootstrappolicy.NodeRules``: events, services,
  endpoints, runtimeclasses, CSRs, token and access reviews, ...).

- **secrets, configmaps** (get/list/watch one by name), **persistentvolumeclaims**,
  **persistentvolumes**, **resourceclaims**, **volumeattachments** (get) and
  **serviceaccounts/token** (create): when a pod bound to the node references the object (its
  volumes and projected sources, its containers' env and envFrom, image pull secrets, its claims and
  ServiceAccount; a PV through a referenced claim's ``spec.volumeName``; an attachment by its
  ``spec.nodeName``), found by reading the pods bound to the node where kube keeps a graph; else
  kube's ``no relationship found between node 'n1' and this object``.

Left out: what kube's graph also links (secrets of PersistentVolumes, a Node's configSource,
ResourceClaims' generated names through ``resourceClaimTemplateName`` before the pod's status
names them), and NodeRestriction's checks of a created object's body (a node creating another
Node, a mirror pod bound elsewhere, a slice for another node, the node labels a kubelet may not
set); NodeRestriction's refusals come as the authorizer's 403 with its reason, where kube's
admission words them as its own 403.

:class:`Union` is kube's union authorizer: the first that allows wins, the reasons of those with
no opinion are joined with a newline.
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.auth import reviews
from mockapi.auth.authz import Attributes, Decision
from mockapi.auth.rules import compile_rules

NODE_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
NODE_LEASE_NAMESPACE = "kube-node-lease"
_READ = ["get", "list", "watch"]
_PODS = errors.GroupResource("", "pods")
_SLICES = errors.GroupResource("resource.k8s.io", "resourceslices")

# kube's bootstrappolicy.NodeRules (v1.32), the rules for what the authorizer does not subdivide.
NODE_RULES = compile_rules([
    {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"]},
    {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews", "localsubjectaccessreviews"]},
    {"verbs": _READ, "apiGroups": [""], "resources": ["services"]},
    {"verbs": ["create", "get", "list", "watch"], "apiGroups": [""], "resources": ["nodes"]},
    {"verbs": ["update", "patch"], "apiGroups": [""], "resources": ["nodes/status"]},
    {"verbs": ["update", "patch"], "apiGroups": [""], "resources": ["nodes"]},
    {"verbs": ["create", "update", "patch"], "apiGroups": [""], "resources": ["events"]},
    {"verbs": _READ, "apiGroups": [""], "resources": ["pods"]},
    {"verbs": ["create", "delete"], "apiGroups": [""], "resources": ["pods"]},
    {"verbs": ["update", "patch"], "apiGroups": [""], "resources": ["pods/status"]},
    {"verbs": ["create"], "apiGroups": [""], "resources": ["pods/eviction"]},
    {"verbs": _READ, "apiGroups": [""], "resources": ["secrets", "configmaps"]},
    {"verbs": ["get"], "apiGroups": [""], "resources": ["persistentvolumeclaims", "persistentvolumes"]},
    {"verbs": ["get"], "apiGroups": [""], "resources": ["endpoints"]},
    {"verbs": ["create", "get", "list", "watch"], "apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"]},
    {"verbs": ["get", "create", "update", "patch", "delete"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]},
    {"verbs": ["get"], "apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"]},
    {"verbs": ["create"], "apiGroups": [""], "resources": ["serviceaccounts/token"]},
    {"verbs": ["get", "update", "patch"], "apiGroups": [""], "resources": ["persistentvolumeclaims/status"]},
    {"verbs": _READ, "apiGroups": ["storage.k8s.io"], "resources": ["csidrivers"]},
    {"verbs": ["get", "create", "update", "patch", "delete"], "apiGroups": ["storage.k8s.io"], "resources": ["csinodes"]},
    {"verbs": _READ, "apiGroups": ["node.k8s.io"], "resources": ["runtimeclasses"]},
    {"verbs": ["get"], "apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"]},
    {"verbs": ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"], "apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"]},
])  # fmt: skip

# What kube's authorizer decides with its graph of pods and what they reference: (group, resource).
_GRAPH = {
    ("", "secrets"), ("", "configmaps"), ("", "persistentvolumeclaims"), ("", "persistentvolumes"),
    ("resource.k8s.io", "resourceclaims"), ("storage.k8s.io", "volumeattachments"), ("", "serviceaccounts"),
}  # fmt: skip


def node_name(user) -> str | None:
    """kube's ``NodeIdentity``: the node's name ("" for an unidentifiable node), None for a non-node."""
    if user is None or not user.name.startswith(NODE_PREFIX) or NODES_GROUP not in user.groups:
        return None
    return user.name[len(NODE_PREFIX) :]


class NodeAuthorizer:
    """Decides for nodes only; ``store`` (the registry's) answers which pods and slices are bound where."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def authorize(self, attrs: Attributes) -> Decision:
        node = node_name(attrs.user)
        if node is None:
            return Decision(False)
        if not node:
            return Decision(False, f"unknown node for user {_go(attrs.user.name)}")
        if attrs.resource_request:
            decide = _SUBDIVIDED.get((attrs.api_group, attrs.resource))
            if decide is not None:
                return decide(self, node, attrs)
        return Decision(any(rule.allows(attrs) for rule in NODE_RULES))

    # ------------------------------------------------------------------ per resource
    def _node(self, node: str, attrs: Attributes) -> Decision:
        verb = attrs.verb
        if not attrs.subresource:
            if verb == "create":
                return Decision(True)
            if verb in ("update", "patch"):  # NodeRestriction: its own Node only
                return _only_own(node, attrs)
            if verb in ("get", "list", "watch"):
                if attrs.name == node:
                    return Decision(True)
                if not attrs.name:
                    return Decision(False, f"node '{node}' cannot read all nodes, only its own Node object")
                return Decision(False, f"node '{node}' cannot read '{attrs.name}', only its own Node object")
        elif attrs.subresource == "status" and verb in ("update", "patch"):
            return _only_own(node, attrs)
        return Decision(False)

    def _pod(self, node: str, attrs: Attributes) -> Decision:
        verb, sub = attrs.verb, attrs.subresource
        if not sub:
            if verb == "get":
                return self._bound(node, _PODS, attrs)
            if verb in ("list", "watch"):
                if _selects_node(attrs, "spec.nodeName", node):
                    return Decision(True)
                if attrs.name:
                    return self._bound(node, _PODS, attrs)
                return Decision(False, "can only list/watch pods with spec.nodeName field selector")
            if verb in ("create", "delete"):
                return Decision(True)
        elif sub == "status" and verb in ("update", "patch"):  # NodeRestriction: pods bound to it
            return self._bound(node, _PODS, attrs, f"node {_go(node)} can only update pod status for pods with spec.nodeName set to itself")
        elif sub == "eviction" and verb == "create":
            return self._bound(node, _PODS, attrs, f"node {_go(node)} can only evict pods with spec.nodeName set to itself")
        return Decision(False)

    def _lease(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return Decision(False, "can only get, create, update, patch, or delete a node lease")
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return Decision(False, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')
        if attrs.verb != "create" and attrs.name != node:
            return Decision(False, "can only access node lease with the same name as the requesting node")
        return Decision(True)

    def _csinode(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return Decision(False, "can only get, create, update, patch, or delete a CSINode")
        if attrs.subresource:
            return Decision(False, "cannot authorize CSINode subresources")
        if attrs.verb != "create" and attrs.name != node:
            return Decision(False, "can only access CSINode with the same name as the requesting node")
        return Decision(True)

    def _slice(self, node: str, attrs: Attributes) -> Decision:
        if attrs.subresource:
            return Decision(False, "cannot authorize ResourceSlice subresources")
        verb = attrs.verb
        if verb == "create":
            return Decision(True)
        if verb in ("get", "update", "patch", "delete"):
            return self._bound(node, _SLICES, attrs)
        if verb in ("watch", "list", "deletecollection"):
            if _selects_node(attrs, "spec.nodeName", node):
                return Decision(True)
            return Decision(False, "can only list/watch/deletecollection resourceslices with nodeName field selector")
        return Decision(False, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection")

    def _graph(self, node: str, attrs: Attributes) -> Decision:
        """What kube decides on its graph of pods and what they reference: its checks of the verb,
        then whether a pod bound to the node references the object — found by reading the pods
        (kube keeps the graph up to date from informers instead)."""
        refusal = _graph_refusal(attrs)
        if refusal:
            return Decision(False, refusal)
        if not attrs.name:
            return Decision(False, "No Object name found")
        if self._related(node, attrs.resource, attrs.namespace, attrs.name):
            return Decision(True)
        return Decision(False, f"no relationship found between node '{node}' and this object")

    def _related(self, node: str, resource: str, namespace: str, name: str) -> bool:
        if resource == "volumeattachments":
            stored = self.store.get(errors.GroupResource("storage.k8s.io", "volumeattachments"), "", name)
            return stored is not None and (stored.load().get("spec") or {}).get("nodeName") == node
        if resource == "persistentvolumes":
            claims = errors.GroupResource("", "persistentvolumeclaims")
            for pod in self._pods_on(node, None):
                for claim in _references(pod, "persistentvolumeclaims"):
                    stored = self.store.get(claims, pod["metadata"].get("namespace", ""), claim)
                    if stored is not None and (stored.load().get("spec") or {}).get("volumeName") == name:
                        return True
            return False
        return any(name in _references(pod, resource) for pod in self._pods_on(node, namespace))

    def _pods_on(self, node: str, namespace: str | None):
        for stored in self.store.iterate(_PODS, namespace):
            pod = stored.load()
            if (pod.get("spec") or {}).get("nodeName") == node:
                yield pod

    def _bound(self, node: str, resource: errors.GroupResource, attrs: Attributes, refusal: str = "") -> Decision:
        """The stored object names the node in ``spec.nodeName`` (a pod bound to it, its slice)."""
        if not attrs.name:
            return Decision(False, "No Object name found")
        stored = self.store.get(resource, attrs.namespace, attrs.name)
        spec = stored.load().get("spec") if stored is not None else None
        if isinstance(spec, dict) and spec.get("nodeName") == node:
            return Decision(True)
        return Decision(False, refusal or f"no relationship found between node '{node}' and this object")


def _references(pod: dict, resource: str) -> set[str]:
    """The names of ``resource`` a pod references (kube's graph_populator: volumes, projected
    sources, env and envFrom of every container, image pull secrets, its ServiceAccount, its
    claims)."""
    spec = pod.get("spec") or {}
    found: set[str] = set()
    volumes = [v for v in spec.get("volumes") or () if isinstance(v, dict)]
    containers = [c for key in ("containers", "initContainers", "ephemeralContainers") for c in spec.get(key) or () if isinstance(c, dict)]
    if resource in ("secrets", "configmaps"):
        kind, ref_key, env_key, from_key = ("secret", "secretName", "secretKeyRef", "secretRef") if resource == "secrets" else ("configMap", "name", "configMapKeyRef", "configMapRef")
        for volume in volumes:
            found.add((volume.get(kind) or {}).get(ref_key))
            for source in (volume.get("projected") or {}).get("sources") or ():
                found.add(((source or {}).get(kind) or {}).get("name"))
        for container in containers:
            for env in container.get("env") or ():
                found.add((((env or {}).get("valueFrom") or {}).get(env_key) or {}).get("name"))
            for source in container.get("envFrom") or ():
                found.add(((source or {}).get(from_key) or {}).get("name"))
        if resource == "secrets":
            found.update((ref or {}).get("name") for ref in spec.get("imagePullSecrets") or ())
    elif resource == "persistentvolumeclaims":
        for volume in volumes:
            found.add((volume.get("persistentVolumeClaim") or {}).get("claimName"))
            if volume.get("ephemeral") is not None:
                found.add(f"{pod['metadata'].get('name', '')}-{volume.get('name', '')}")
    elif resource == "resourceclaims":
        found.update((claim or {}).get("resourceClaimName") for claim in spec.get("resourceClaims") or ())
        found.update((claim or {}).get("resourceClaimName") for claim in (pod.get("status") or {}).get("resourceClaimStatuses") or ())
    elif resource == "serviceaccounts":
        found.add(spec.get("serviceAccountName") or "default")
    found.discard(None)
    found.discard("")
    return found


def _graph_refusal(attrs: Attributes) -> str:
    """kube's authorizeReadNamespacedObject / authorizeGet / authorizeStatusUpdate /
    authorizeCreateToken checks before the graph is asked."""
    verb, sub = attrs.verb, attrs.subresource
    if attrs.resource in ("secrets", "configmaps"):
        if verb not in ("get", "list", "watch"):
            return "can only read resources of this type"
        if sub:
            return "cannot read subresource"
        return "" if attrs.namespace else "can only read namespaced object of this type"
    if attrs.resource == "serviceaccounts":
        if verb != "create" or not attrs.name:
            return "can only create tokens for individual service accounts"
        return "" if sub == "token" else "can only create token subresource of serviceaccount"
    if attrs.resource == "persistentvolumeclaims" and sub == "status":
        return "" if verb in ("update", "patch") else "can only get/update/patch this type"
    if verb != "get":
        return "can only get individual resources of this type"
    return "cannot get subresource" if sub else ""


def _only_own(node: str, attrs: Attributes) -> Decision:
    """NodeRestriction's check of a Node update, on the name."""
    if attrs.name == node:
        return Decision(True)
    return Decision(False, f"node {_go(node)} is not allowed to modify node {_go(attrs.name)}")


def _selects_node(attrs: Attributes, field: str, node: str) -> bool:
    return any(term == (field, "=", node) for term in attrs.field_selector)


def _go(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_SUBDIVIDED = {
    ("", "nodes"): NodeAuthorizer._node,
    ("", "pods"): NodeAuthorizer._pod,
    ("coordination.k8s.io", "leases"): NodeAuthorizer._lease,
    ("storage.k8s.io", "csinodes"): NodeAuthorizer._csinode,
    ("resource.k8s.io", "resourceslices"): NodeAuthorizer._slice,
    **{key: NodeAuthorizer._graph for key in _GRAPH},
}


class Union:
    """kube's union authorizer over ``authorizers`` (``--authorization-mode=Node,RBAC``). It takes
    RBAC's place as the registry's ``access``: access reviews are answered by the union, role and
    binding escalation checks and rules reviews by RBAC (as kube's RBAC rule resolver)."""

    def __init__(self, registry: Any, authorizers: list, rbac: Any) -> None:
        self.authorizers = authorizers
        self.rbac = rbac
        registry.access = self

    def authorize(self, attrs: Attributes) -> Decision:
        reasons = []
        for authorizer in self.authorizers:
            decision = authorizer.authorize(attrs)
            if decision.allowed:
                return decision
            if decision.reason:
                reasons.append(decision.reason)
        return Decision(False, "\n".join(reasons))

    def rules_for(self, user, namespace: str):
        return self.rbac.rules_for(user, namespace)

    def confirm_role(self, requester: Any, resource: str, obj: dict) -> str:
        return self.rbac.confirm_role(requester, resource, obj)

    def confirm_binding(self, requester: Any, resource: str, obj: dict) -> str:
        return self.rbac.confirm_binding(requester, resource, obj)

    def review(self, kind: str, obj: dict, requester: Any) -> dict:
        return reviews.review(self, kind, obj, requester)
