"""``--authorization-mode=RBAC``: kube's RBAC authorizer (plugin/pkg/auth/authorizer/rbac) over the
Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in the store.

A request is allowed when a rule of a role bound to its user allows it: ClusterRoleBindings
grant everywhere, RoleBindings only in their namespace (a ClusterRole bound by a RoleBinding too).
Members of ``system:masters`` may do everything without asking (kube's privileged-group
authorizer, first in its chain). A denial has no reason unless a binding names a role that does not
exist (``RBAC: clusterrole.rbac.authorization.k8s.io "x" not found``), as kube words it.

Cost: nothing is read from the store per request. The four kinds are indexed by subject
(User name, Group name, ServiceAccount namespace/name) into the compiled rules they grant, and each
(user, groups, namespace) gets its list of grants once; a store watch on the four resources (which
costs the store one list append per RBAC write) tells when to rebuild. docs/rbac.md has the figures.

Constructing one makes it the registry's ``access``: RBAC's escalation checks on role and binding
writes (:mod:`.escalation`) and the access reviews (:mod:`.reviews`) then ask it; without one
they answer as AlwaysAllow would. It also creates kube's bootstrap roles (:mod:`.roles`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from mockapi import errors
from mockapi.auth import escalation, reviews, roles
from mockapi.auth.authz import Attributes, Decision
from mockapi.auth.rules import Rule, compile_rules
from mockapi.auth.user import MASTERS, UserInfo
from mockapi.schema.goformat import go_quote

GROUP = "rbac.authorization.k8s.io"
ROLES = errors.GroupResource(GROUP, "roles")
CLUSTER_ROLES = errors.GroupResource(GROUP, "clusterroles")
ROLE_BINDINGS = errors.GroupResource(GROUP, "rolebindings")
CLUSTER_ROLE_BINDINGS = errors.GroupResource(GROUP, "clusterrolebindings")
RESOURCES = (ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS)
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
_CACHE_LIMIT = 10_000


@dataclass(frozen=True)
class Grant:
    """What one binding gives one subject: the role's rules, and kube's words for where they come from."""

    binding: str  # its name (each binding grants a user once, whichever subjects match)
    source: str  # ClusterRoleBinding "x" of ClusterRole "y" to User "alice"
    rules: tuple[Rule, ...]
    error: str = ""  # the role it names does not exist
    allowed: Decision = field(init=False, compare=False, repr=False)  # its allow, worded once

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed", Decision(True, f"RBAC: allowed by {self.source}"))


@dataclass
class _Index:
    cluster: dict[tuple, list[Grant]]  # subject key → grants of ClusterRoleBindings
    namespaced: dict[str, dict[tuple, list[Grant]]]  # namespace → subject key → grants of RoleBindings


class RBACAuthorizer:
    def __init__(self, registry: Any, *, bootstrap: bool = True) -> None:
        self.store = registry.store
        self._watchers = [self.store.watch(resource, encode=_nothing) for resource in RESOURCES]
        self._index: _Index | None = None
        self._grants: dict[tuple, tuple[Grant, ...]] = {}
        self.rebuilds = 0
        registry.access = self
        if bootstrap:
            roles.bootstrap(registry)

    # ------------------------------------------------------------------ deciding
    def authorize(self, attrs: Attributes) -> Decision:
        if MASTERS in attrs.user.groups:
            return Decision(True)
        problems = []
        for grant in self.grants_for(attrs.user, attrs.namespace):
            if grant.error:
                problems.append(grant.error)
            for rule in grant.rules:
                if rule.allows(attrs):
                    return grant.allowed
        return Decision(False, f"RBAC: {_aggregate(problems)}" if problems else "")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """Every rule the user holds in the namespace ("": cluster-wide only), and the errors met
        (kube's ``RulesFor``), in kube's order: ClusterRoleBindings' first."""
        found, problems = [], []
        for grant in self.grants_for(user, namespace):
            found.extend(grant.rules)
            if grant.error:
                problems.append(grant.error)
        return found, problems

    def grants_for(self, user: UserInfo, namespace: str) -> tuple[Grant, ...]:
        index = self._current()
        key = (user.name, user.groups, namespace)
        grants = self._grants.get(key)
        if grants is None:
            if len(self._grants) >= _CACHE_LIMIT:
                self._grants.clear()
            subjects = _subject_keys(user)
            grants = _collect(index.cluster, subjects)
            if namespace:
                grants += _collect(index.namespaced.get(namespace, {}), subjects)
            grants = self._grants[key] = tuple(grants)
        return grants

    # -------------------------------------------------- escalation and reviews
    def confirm_role(self, requester: Any, resource: str, obj: dict) -> str:
        return escalation.confirm_role(self, requester, resource, obj)

    def confirm_binding(self, requester: Any, resource: str, obj: dict) -> str:
        return escalation.confirm_binding(self, requester, resource, obj)

    def review(self, kind: str, obj: dict, requester: Any) -> dict:
        return reviews.review(self, kind, obj, requester)

    # ----------------------------------------------------------------- the index
    def _current(self) -> _Index:
        index = self._index
        if index is not None:
            for watcher in self._watchers:  # a plain loop: this runs on every request
                if watcher.pending or watcher.overflowed or watcher.closed:
                    break
            else:
                return index
        for i, watcher in enumerate(self._watchers):
            if watcher.overflowed or watcher.closed:
                self.store.stop(watcher)
                self._watchers[i] = self.store.watch(RESOURCES[i], encode=_nothing)
            else:
                watcher.take()
        self._index = self._build()
        self._grants.clear()
        self.rebuilds += 1
        return self._index

    def close(self) -> None:
        for watcher in self._watchers:
            self.store.stop(watcher)

    def _build(self) -> _Index:
        cluster_roles = {s.name: compile_rules(s.load().get("rules")) for s in self.store.iterate(CLUSTER_ROLES)}
        ns_roles = {(s.namespace, s.name): compile_rules(s.load().get("rules")) for s in self.store.iterate(ROLES)}
        index = _Index(cluster={}, namespaced={})
        for stored in self.store.iterate(CLUSTER_ROLE_BINDINGS):
            binding = stored.load()
            ref = binding.get("roleRef") or {}
            rules, error = _role_rules(ref, "", cluster_roles, ns_roles)
            for subject, key in _subjects(binding, ""):
                source = f'ClusterRoleBinding {go_quote(stored.name)} of {ref.get("kind", "")} {go_quote(ref.get("name", ""))} to {_describe(subject, "")}'
                index.cluster.setdefault(key, []).append(Grant(stored.name, source, rules, error))
        for stored in self.store.iterate(ROLE_BINDINGS):
            binding, namespace = stored.load(), stored.namespace
            ref = binding.get("roleRef") or {}
            rules, error = _role_rules(ref, namespace, cluster_roles, ns_roles)
            for subject, key in _subjects(binding, namespace):
                source = f'RoleBinding {go_quote(stored.name + "/" + namespace)} of {ref.get("kind", "")} {go_quote(ref.get("name", ""))} to {_describe(subject, namespace)}'
                index.namespaced.setdefault(namespace, {}).setdefault(key, []).append(Grant(stored.name, source, rules, error))
        return index


def _nothing(event_type: str, raw: bytes) -> bytes:
    """The watch only says that something changed: no line is rendered."""
    return b""


def _role_rules(ref: dict, namespace: str, cluster_roles: dict, ns_roles: dict) -> tuple[tuple[Rule, ...], str]:
    name = ref.get("name", "")
    if ref.get("kind") == "ClusterRole":
        found = cluster_roles.get(name)
        return (tuple(found), "") if found is not None else ((), f"clusterrole.{GROUP} {go_quote(name)} not found")
    if ref.get("kind") == "Role" and namespace:
        found = ns_roles.get((namespace, name))
        return (tuple(found), "") if found is not None else ((), f"role.{GROUP} {go_quote(name)} not found")
    return (), ""


def _subjects(binding: dict, namespace: str) -> Iterable[tuple[dict, tuple]]:
    """Each subject with its index key; a ServiceAccount without a namespace is in the binding's."""
    for subject in binding.get("subjects") or ():
        if not isinstance(subject, dict):
            continue
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            sa_namespace = subject.get("namespace") or namespace
            if sa_namespace:
                yield subject, ("ServiceAccount", sa_namespace, name)
        elif kind in ("User", "Group"):
            yield subject, (kind, name)


def _subject_keys(user: UserInfo) -> list[tuple]:
    keys = [("User", user.name)] + [("Group", group) for group in user.groups]
    if user.name.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace, _, name = user.name[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
        if namespace and name and ":" not in name:
            keys.append(("ServiceAccount", namespace, name))
    return keys


def _collect(by_subject: dict[tuple, list[Grant]], subjects: list[tuple]) -> list[Grant]:
    """The grants of any of the subjects, each binding's once (its first subject's, as kube's
    ``appliesTo``), in the order of the bindings' names."""
    found: dict[str, Grant] = {}
    for key in subjects:
        for grant in by_subject.get(key, ()):
            found.setdefault(grant.binding, grant)
    return [found[name] for name in sorted(found)]


def _describe(subject: dict, namespace: str) -> str:
    """kube's ``describeSubject``: ``User "alice"``, ``ServiceAccount "default/ns"``."""
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} {go_quote(name + "/" + (subject.get("namespace") or namespace))}'
    return f"{kind} {go_quote(name)}"


def _aggregate(problems: list[str]) -> str:
    """utilerrors.NewAggregate's text: one error as is, several as ``[a, b]``."""
    unique = list(dict.fromkeys(problems))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
