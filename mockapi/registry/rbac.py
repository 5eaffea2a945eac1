"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding (kube's
pkg/registry/rbac and pkg/apis/rbac/validation), and the ClusterRole aggregation controller.

- **Validation** as kube's: each rule has verbs; resource rules have apiGroups and resources;
  non-resource rules only in ClusterRoles and never mixed with resources; a binding's ``roleRef``
  is a Role or ClusterRole of this group (a ClusterRoleBinding's only a ClusterRole), named, and
  cannot change (``roleRef: Invalid value: rbac.RoleRef{...}: cannot change roleRef``); subjects
  are User, Group or ServiceAccount with a name. Defaults: ``roleRef.apiGroup`` and each subject's
  ``apiGroup`` (rbac's group for User and Group; a ServiceAccount's is "", left out).
- **Escalation** (kube's policy-based storage): who writes a role must already hold its rules
  (or may ``escalate``), who writes a binding must hold the role's rules (or may ``bind`` it).
  The decision belongs to the server's authorizer, the registry's ``access``
  (:class:`Access`, set by ``mockapi.auth.rbac.RBACAuthorizer``); without one, as with
  AlwaysAllow, and for a requester the registry does not know (in-process), nothing is refused.
- **Aggregation** (kube's clusterroleaggregation controller, run at write time): a ClusterRole with
  ``aggregationRule.clusterRoleSelectors`` has as ``rules`` the rules of every other ClusterRole
  one of its selectors matches (by name, each rule once), whatever it is written with; a change to
  any ClusterRole rewrites the aggregated ones it feeds, chains included (admin ← edit ← view).
"""

from __future__ import annotations

from typing import Any, Protocol

from mockapi import errors
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy, json_copy, not_supported
from mockapi.registry.workloads import matches

GROUP = "rbac.authorization.k8s.io"
CLUSTER_ROLES = errors.GroupResource(GROUP, "clusterroles")
CLUSTER_ROLE_BINDINGS = errors.GroupResource(GROUP, "clusterrolebindings")
# what kube labels its bootstrap policy with (mockapi.auth.roles): kept by a reset, as the cluster's own
BOOTSTRAP_LABEL = b'"kubernetes.io/bootstrapping":"rbac-defaults"'
SUBJECT_KINDS = ("User", "Group", "ServiceAccount")
_GC_FIELDS = ("ownerReferences", "finalizers", "managedFields", "resourceVersion")
_CHAIN_LIMIT = 100  # aggregation passes after one write (a cycle of selectors must end)


class Access(Protocol):
    """What the registry asks the server's authorizer (mockapi.auth implements it)."""

    def confirm_role(self, requester: Any, resource: str, obj: dict) -> str:
        """"" when the requester may write this role, else why not (the 403's text)."""

    def confirm_binding(self, requester: Any, resource: str, obj: dict) -> str:
        """"" when the requester may write this binding, else why not."""

    def review(self, kind: str, obj: dict, requester: Any) -> dict:
        """An access review's status."""


class RoleStrategy(Strategy):
    """Role and ClusterRole."""

    name_rule = "path-segment"  # kube's ValidateRBACName: system:discovery is a name

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        namespaced = self.rt.namespaced
        problems = []
        for i, rule in enumerate(obj.get("rules") or []):
            problems += _rule_errors(rule, f"rules[{i}]", namespaced=namespaced)
        aggregation = obj.get("aggregationRule")
        if isinstance(aggregation, dict) and not aggregation.get("clusterRoleSelectors"):
            problems.append(errors.FieldError("required", "aggregationRule.clusterRoleSelectors", "at least one clusterRoleSelector required if aggregationRule is non-nil"))
        return problems

    def check_requester(self, cluster: Cluster, obj: dict, old: dict | None, requester: Any, access: Access | None) -> None:
        if access is None or requester is None or (old is not None and _only_gc_fields(obj, old)):
            return
        refusal = access.confirm_role(requester, self.rt.plural, obj)
        if refusal:
            raise errors.forbidden(self.rt.group_resource, obj["metadata"].get("name", ""), refusal)

    def before_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        if not self.rt.namespaced and isinstance(obj.get("aggregationRule"), dict):
            obj["rules"] = aggregated_rules(cluster, obj)

    def after_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        if not self.rt.namespaced:
            reaggregate(cluster, self.rt)

    def after_delete(self, cluster: Cluster, obj: dict) -> None:
        if not self.rt.namespaced:
            reaggregate(cluster, self.rt)


class BindingStrategy(Strategy):
    """RoleBinding and ClusterRoleBinding."""

    name_rule = "path-segment"

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        _default_binding(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        _default_binding(new)
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems = _role_ref_errors(obj.get("roleRef"), namespaced=self.rt.namespaced)
        for i, subject in enumerate(obj.get("subjects") or []):
            problems += _subject_errors(subject, f"subjects[{i}]", namespaced=self.rt.namespaced)
        if old is not None and not problems and obj.get("roleRef") != old.get("roleRef"):
            problems.append(errors.FieldError("invalid", "roleRef", f"{go_role_ref(obj['roleRef'])}: cannot change roleRef"))
        return problems

    def check_requester(self, cluster: Cluster, obj: dict, old: dict | None, requester: Any, access: Access | None) -> None:
        if access is None or requester is None or (old is not None and _only_gc_fields(obj, old)):
            return
        refusal = access.confirm_binding(requester, self.rt.plural, obj)
        if refusal:
            raise errors.forbidden(self.rt.group_resource, obj["metadata"].get("name", ""), refusal)


# ------------------------------------------------------------------------------ validation
def _rule_errors(rule: Any, path: str, *, namespaced: bool) -> list[errors.FieldError]:
    """kube's ``ValidatePolicyRule``."""
    if not isinstance(rule, dict):
        return []
    problems = []
    if not rule.get("verbs"):
        problems.append(errors.FieldError("required", f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            problems.append(errors.FieldError("invalid", f"{path}.nonResourceURLs", "namespaced rules cannot apply to non-resource URLs", value=urls))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            problems.append(errors.FieldError("invalid", f"{path}.nonResourceURLs", "rules cannot apply to both regular resources and non-resource URLs", value=urls))
        return problems
    if not rule.get("apiGroups"):
        problems.append(errors.FieldError("required", f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        problems.append(errors.FieldError("required", f"{path}.resources", "resource rules must supply at least one resource"))
    return problems


def _role_ref_errors(ref: Any, *, namespaced: bool) -> list[errors.FieldError]:
    if not isinstance(ref, dict):
        return [errors.FieldError("required", "roleRef", "")]
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    problems = []
    if ref.get("apiGroup") != GROUP:
        problems.append(not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), (GROUP,)))
    if ref.get("kind") not in kinds:
        problems.append(not_supported("roleRef.kind", ref.get("kind", ""), kinds))
    if not ref.get("name"):
        problems.append(errors.FieldError("required", "roleRef.name", ""))
    return problems


def _subject_errors(subject: Any, path: str, *, namespaced: bool) -> list[errors.FieldError]:
    """kube's ``ValidateRoleBindingSubject`` (a ClusterRoleBinding's ServiceAccount names its namespace)."""
    if not isinstance(subject, dict):
        return []
    problems = []
    kind, group = subject.get("kind", ""), subject.get("apiGroup", "")
    if not subject.get("name"):
        problems.append(errors.FieldError("required", f"{path}.name", ""))
    if kind == "ServiceAccount":
        if group:
            problems.append(not_supported(f"{path}.apiGroup", group, ("",)))
        if not namespaced and not subject.get("namespace"):
            problems.append(errors.FieldError("required", f"{path}.namespace", ""))
    elif kind in ("User", "Group"):
        if group != GROUP:
            problems.append(not_supported(f"{path}.apiGroup", group, (GROUP,)))
    else:
        problems.append(not_supported(f"{path}.kind", kind, SUBJECT_KINDS))
    return problems


def _default_binding(obj: dict) -> None:
    """kube's SetDefaults_RoleBinding / _ClusterRoleBinding / _Subject."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for subject in obj.get("subjects") or []:
        # a ServiceAccount's is "", which kube leaves out of what it writes
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP
        elif isinstance(subject, dict) and subject.get("kind") == "ServiceAccount" and subject.get("apiGroup") == "":
            del subject["apiGroup"]


def go_role_ref(ref: dict) -> str:
    """The roleRef as Go's ``%#v`` prints it in kube's validation message."""
    return f'rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", Kind:"{ref.get("kind", "")}", Name:"{ref.get("name", "")}"}}'


def _only_gc_fields(obj: dict, old: dict) -> bool:
    """kube's ``IsOnlyMutatingGCFields``: an update that touches only owner references and
    finalizers (the garbage collector's) needs no escalation check."""
    def without(o: dict) -> dict:
        copy = dict(o)
        copy["metadata"] = {k: v for k, v in o.get("metadata", {}).items() if k not in _GC_FIELDS}
        return copy

    return without(obj) == without(old)


# ----------------------------------------------------------------------------- aggregation
def aggregated_rules(cluster: Cluster, role: dict) -> list[dict]:
    """The rules of every other ClusterRole a selector of ``role`` matches, sorted by name, each
    rule once (kube's ClusterRoleAggregationController.syncClusterRole)."""
    chosen = _selectors(role)
    rules: list[dict] = []
    name = role["metadata"].get("name")
    for stored in cluster.objects(CLUSTER_ROLES):
        if stored.name == name:
            continue
        other = stored.load()
        labels = other["metadata"].get("labels") or {}
        if any(matches(selector, labels) for selector in chosen):
            for rule in other.get("rules") or []:
                if rule not in rules:
                    rules.append(rule)
    return rules


def _selectors(role: dict) -> list[dict]:
    terms = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    return [term for term in terms if isinstance(term, dict)]


def reaggregate(cluster: Cluster, rt: Any) -> None:
    """After a ClusterRole changed: rewrite each aggregated ClusterRole whose rules are no longer
    what its selectors gather, until none changes (chains of aggregation settle in a few passes)."""
    for _ in range(_CHAIN_LIMIT):
        changed = False
        for stored in list(cluster.objects(CLUSTER_ROLES)):
            if b'"aggregationRule"' not in stored.raw:
                continue
            role = stored.load()
            if not isinstance(role.get("aggregationRule"), dict):
                continue
            rules = aggregated_rules(cluster, role)
            if rules != (role.get("rules") or []):
                updated = json_copy(role)
                updated["rules"] = rules
                cluster.write(rt, updated)
                changed = True
        if not changed:
            return
