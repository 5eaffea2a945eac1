"""RBAC's privilege-escalation rules on writing roles and bindings (kube's
pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased and
pkg/registry/rbac/validation), decided for :mod:`mockapi.registry.rbac`.

- A Role or ClusterRole may be written by who already holds every rule in it, where it applies
  (the Role's namespace; cluster-wide for a ClusterRole), or who may ``escalate`` roles /
  clusterroles. Setting or changing an ``aggregationRule`` needs ``*`` on everything.
- A RoleBinding or ClusterRoleBinding may be written by who holds every rule of the role it
  names, or who may ``bind`` that role (``bind`` on ``roles``/``clusterroles`` named by the
  roleRef, in the binding's namespace).
- ``system:masters`` may do all of it (kube's ``EscalationAllowed``).

The refusal is kube's text: ``user "alice" (groups=["system:authenticated"]) is attempting to grant
RBAC permissions not currently held:`` then each missing permission, compacted and sorted, one a
line (``{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}``).
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.auth.authz import Attributes
from mockapi.auth.rules import compact, compact_string, go_strings, uncovered
from mockapi.auth.user import MASTERS
from mockapi.schema.goformat import go_quote

GROUP = "rbac.authorization.k8s.io"
_ROLES = {"ClusterRole": errors.GroupResource(GROUP, "clusterroles"), "Role": errors.GroupResource(GROUP, "roles")}
FULL_AUTHORITY = [
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
]


def confirm_role(rbac: Any, requester: Any, resource: str, obj: dict) -> str:
    """"" when ``requester`` may write this Role/ClusterRole, else the reason it may not."""
    meta = obj["metadata"]
    namespace = meta.get("namespace", "")
    if MASTERS in requester.groups or _may(rbac, requester, "escalate", resource, meta.get("name", ""), namespace):
        return ""
    refusal = not_held(rbac, requester, namespace, obj.get("rules") or [])
    if refusal:
        return refusal
    if obj.get("aggregationRule") and not_held(rbac, requester, namespace, FULL_AUTHORITY):
        return "must have cluster-admin privileges to use the aggregationRule"
    return ""


def confirm_binding(rbac: Any, requester: Any, resource: str, obj: dict) -> str:
    """"" when ``requester`` may write this RoleBinding/ClusterRoleBinding, else the reason."""
    namespace = obj["metadata"].get("namespace", "")
    ref = obj.get("roleRef") or {}
    role_resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(ref.get("kind", ""), "")
    if MASTERS in requester.groups or (role_resource and _may(rbac, requester, "bind", role_resource, ref.get("name", ""), namespace, group=ref.get("apiGroup", ""))):
        return ""
    stored = _role(rbac, ref, namespace)
    if stored is None:
        return f"{role_resource or 'roles'}.{GROUP} {go_quote(ref.get('name', ''))} not found"
    return not_held(rbac, requester, namespace, stored.get("rules") or [])


def _may(rbac: Any, requester: Any, verb: str, resource: str, name: str, namespace: str, *, group: str = GROUP) -> bool:
    attrs = Attributes(requester, verb, api_group=group, api_version="*", resource=resource, name=name, namespace=namespace)
    return rbac.authorize(attrs).allowed


def _role(rbac: Any, ref: dict, namespace: str) -> dict | None:
    """The role a roleRef names, or None (rbac is the RBACAuthorizer: its store)."""
    kind = ref.get("kind", "")
    if kind not in _ROLES or (kind == "Role" and not namespace):
        return None
    stored = rbac.store.get(_ROLES[kind], namespace if kind == "Role" else "", ref.get("name", ""))
    return stored.load() if stored is not None else None


def not_held(rbac: Any, requester: Any, namespace: str, wanted: list) -> str:
    """kube's ``ConfirmNoEscalation``: "" when the requester holds every rule wanted in the namespace."""
    owned, problems = rbac.rules_for(requester, namespace)
    missing = uncovered(owned, wanted)
    if not missing:
        return ""
    lines = sorted(set(compact_string(rule) for rule in compact(missing)))
    message = f"user {go_quote(requester.name)} (groups={go_strings(requester.groups)}) is attempting to grant RBAC permissions not currently held:\n" + "\n".join(lines)
    if problems:
        message += f"; resolution errors: [{' '.join(problems)}]"  # Go's %v of a []error
    return message
