"""RBAC in-process: rule matching (kube's RuleAllows), the authorizer over the store, the 403's
words, escalation checks on role and binding writes, aggregation, and binding validation."""

from __future__ import annotations

import time

import orjson
import pytest

from mockapi import app, errors
from mockapi.auth.authz import AlwaysAllow, Attributes, Decision, forbidden_error, forbidden_message
from mockapi.auth.rbac import RBACAuthorizer
from mockapi.auth.rules import compile_rule
from mockapi.auth.user import UserInfo
from mockapi.registry.options import WriteOptions

RBAC = "rbac.authorization.k8s.io"
ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))
BOB = UserInfo("bob", groups=("system:authenticated",))
ADMIN = UserInfo("root", groups=("system:masters", "system:authenticated"))


@pytest.fixture
def registry():
    return app.build().registry


@pytest.fixture
def rbac(registry):
    authorizer = RBACAuthorizer(registry)
    yield authorizer
    authorizer.close()


def kind(registry, name):
    return registry.types.by_kind(RBAC, "v1", name)


def create(registry, kind_name, obj, *, namespace="", user=None):
    namespaces = registry.types.by_kind("", "v1", "Namespace")
    if namespace and registry.store.get(namespaces.group_resource, "", namespace) is None:
        registry.create(namespaces, "", {"metadata": {"name": namespace}}, WriteOptions())
    return orjson.loads(registry.create(kind(registry, kind_name), namespace, obj, WriteOptions(user=user)).raw)


def role(name, rules, *, namespace="default"):
    return {"metadata": {"name": name, "namespace": namespace}, "rules": rules}


def bind(name, role_kind, role_name, *subjects, namespace=None):
    meta = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"metadata": meta, "roleRef": {"kind": role_kind, "name": role_name}, "subjects": [dict(s) for s in subjects]}


def user(name):
    return {"kind": "User", "name": name}


def can(rbac, who, verb, resource="", *, group="", namespace="", name="", subresource="", path=""):
    if path:
        return rbac.authorize(Attributes(who, verb, resource_request=False, path=path)).allowed
    return rbac.authorize(Attributes(who, verb, api_group=group, resource=resource, subresource=subresource, namespace=namespace, name=name)).allowed


# --------------------------------------------------------------------------- rule matching
RULE_CASES = [
    # rule, attributes, allowed
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, dict(verb="get", resource="pods"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, dict(verb="list", resource="pods"), False),
    ({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}, dict(verb="deletecollection", resource="pods"), True),
    ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, dict(verb="get", resource="pods"), False),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["deployments"]}, dict(verb="get", api_group="apps", resource="deployments"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, dict(verb="get", resource="pods", subresource="status"), False),
    ({"verbs": ["update"], "apiGroups": ["devmgmtproto.k8s.io"], "resources": ["deviceclaims/status"]},
     dict(verb="update", api_group="devmgmtproto.k8s.io", resource="deviceclaims", subresource="status"), True),
    ({"verbs": ["update"], "apiGroups": ["devmgmtproto.k8s.io"], "resources": ["deviceclaims/status"]},
     dict(verb="update", api_group="devmgmtproto.k8s.io", resource="deviceclaims"), False),
    ({"verbs": ["create"], "apiGroups": [""], "resources": ["*/binding"]}, dict(verb="create", resource="pods", subresource="binding"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]}, dict(verb="get", resource="pods", subresource="log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["web"]}, dict(verb="get", resource="pods", name="web"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["web"]}, dict(verb="get", resource="pods", name="db"), False),
    ({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["web"]}, dict(verb="list", resource="pods"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/metrics"]}, dict(verb="get", resource_request=False, path="/metrics"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/metrics"]}, dict(verb="get", resource_request=False, path="/metrics/x"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/api/*"]}, dict(verb="get", resource_request=False, path="/api/v1"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, dict(verb="get", resource_request=False, path="/anything"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, dict(verb="get", resource="pods"), False),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]}, dict(verb="get", resource_request=False, path="/healthz"), False),
]


@pytest.mark.parametrize("rule, attrs, allowed", RULE_CASES)
def test_a_rule_allows_what_kubes_rule_allows_does(rule, attrs, allowed):
    assert compile_rule(rule).allows(Attributes(ALICE, **attrs)) is allowed


# ---------------------------------------------------------------------------- the authorizer
def test_masters_may_do_anything_and_nobody_else_without_a_binding(rbac):
    assert can(rbac, ADMIN, "delete", "nodes", name="n1")
    assert can(rbac, ADMIN, "get", path="/metrics")
    assert not can(rbac, ALICE, "list", "pods", namespace="default")


def test_every_authenticated_user_may_discover_and_review_itself(rbac):
    assert can(rbac, BOB, "get", path="/apis/apps/v1")
    assert can(rbac, BOB, "create", "selfsubjectaccessreviews", group="authorization.k8s.io")
    assert can(rbac, BOB, "create", "selfsubjectrulesreviews", group="authorization.k8s.io")
    assert not can(rbac, BOB, "create", "subjectaccessreviews", group="authorization.k8s.io")
    anonymous = UserInfo("system:anonymous", groups=("system:unauthenticated",))
    assert can(rbac, anonymous, "get", path="/version")
    assert not can(rbac, anonymous, "get", path="/apis")


def test_a_role_binding_grants_in_its_namespace_only(registry, rbac):
    create(registry, "Role", role("reader", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]), namespace="default")
    create(registry, "RoleBinding", bind("alice-reads", "Role", "reader", user("alice")), namespace="default")
    assert can(rbac, ALICE, "list", "pods", namespace="default")
    assert can(rbac, ALICE, "watch", "pods", namespace="default")
    assert not can(rbac, ALICE, "list", "pods", namespace="other")
    assert not can(rbac, ALICE, "list", "pods")  # all namespaces is cluster scope
    assert not can(rbac, ALICE, "delete", "pods", namespace="default", name="web")
    assert not can(rbac, BOB, "list", "pods", namespace="default")


def test_a_cluster_role_bound_by_a_role_binding_grants_only_in_that_namespace(registry, rbac):
    create(registry, "RoleBinding", bind("devs-view", "ClusterRole", "view", {"kind": "Group", "name": "devs"}), namespace="team")
    assert can(rbac, ALICE, "get", "configmaps", namespace="team", name="x")
    assert can(rbac, ALICE, "list", "deployments", group="apps", namespace="team")
    assert not can(rbac, ALICE, "get", "configmaps", namespace="default", name="x")
    assert not can(rbac, ALICE, "get", "secrets", namespace="team", name="x")  # view does not read secrets


def test_a_cluster_role_binding_grants_everywhere(registry, rbac):
    create(registry, "ClusterRoleBinding", bind("alice-edit", "ClusterRole", "edit", user("alice")))
    assert can(rbac, ALICE, "create", "pods", namespace="a")
    assert can(rbac, ALICE, "list", "pods")
    assert can(rbac, ALICE, "patch", "deviceclaims", group="devmgmtproto.k8s.io", namespace="b", name="c")
    assert not can(rbac, ALICE, "create", "roles", group=RBAC, namespace="a")  # admin's, not edit's


def test_service_account_subjects_default_to_the_bindings_namespace(registry, rbac):
    create(registry, "RoleBinding", bind("sa-view", "ClusterRole", "view", {"kind": "ServiceAccount", "name": "robot"}), namespace="ci")
    robot = UserInfo("system:serviceaccount:ci:robot", groups=("system:serviceaccounts", "system:serviceaccounts:ci"))
    other = UserInfo("system:serviceaccount:prod:robot", groups=("system:serviceaccounts",))
    assert can(rbac, robot, "list", "pods", namespace="ci")
    assert not can(rbac, other, "list", "pods", namespace="ci")


def test_resource_names_and_subresources(registry, rbac):
    create(registry, "ClusterRole", {"metadata": {"name": "binder"}, "rules": [
        {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["get", "update"]},
    ]})
    create(registry, "ClusterRoleBinding", bind("alice-binder", "ClusterRole", "binder", user("alice")))
    assert can(rbac, ALICE, "create", "pods", subresource="binding", namespace="default", name="web")
    assert not can(rbac, ALICE, "create", "pods", namespace="default")
    assert can(rbac, ALICE, "update", "configmaps", namespace="x", name="settings")
    assert not can(rbac, ALICE, "update", "configmaps", namespace="x", name="other")


def test_the_reason_names_the_binding_and_a_missing_role(registry, rbac):
    create(registry, "ClusterRoleBinding", bind("alice-view", "ClusterRole", "view", user("alice")))
    decision = rbac.authorize(Attributes(ALICE, "get", resource="pods", namespace="default", name="web"))
    assert decision == Decision(True, 'RBAC: allowed by ClusterRoleBinding "alice-view" of ClusterRole "view" to User "alice"')
    create(registry, "RoleBinding", bind("ghost", "Role", "missing", user("bob")), namespace="default")
    decision = rbac.authorize(Attributes(BOB, "get", resource="pods", namespace="default"))
    assert decision == Decision(False, f'RBAC: role.{RBAC} "missing" not found')


def test_changes_are_seen_at_once_and_unrelated_writes_do_not_rebuild(registry, rbac):
    assert not can(rbac, ALICE, "list", "pods", namespace="default")
    before = rbac.rebuilds
    registry.create(registry.types.by_kind("", "v1", "ConfigMap"), "default", {"metadata": {"name": "c"}}, WriteOptions())
    assert not can(rbac, ALICE, "list", "pods", namespace="default")
    assert rbac.rebuilds == before
    create(registry, "ClusterRoleBinding", bind("alice-view", "ClusterRole", "view", user("alice")))
    assert can(rbac, ALICE, "list", "pods", namespace="default")
    registry.delete(kind(registry, "ClusterRoleBinding"), "", "alice-view", _delete_options())
    assert not can(rbac, ALICE, "list", "pods", namespace="default")


def _delete_options():
    from mockapi.registry.options import DeleteOptions

    return DeleteOptions()


def test_a_check_costs_microseconds_with_thousands_of_bindings(registry, rbac):
    for i in range(2000):
        create(registry, "RoleBinding", bind(f"b{i}", "ClusterRole", "view", user(f"user{i}")), namespace=f"ns{i % 50}")
    attrs = Attributes(UserInfo("user7", groups=("system:authenticated",)), "list", resource="pods", namespace="ns7")
    assert rbac.authorize(attrs).allowed
    started = time.perf_counter()
    for _ in range(2000):
        rbac.authorize(attrs)
    per_check = (time.perf_counter() - started) / 2000
    assert per_check < 200e-6, f"{per_check * 1e6:.1f} µs per check"


# ------------------------------------------------------------------------------ the 403
@pytest.mark.parametrize("attrs, message", [
    (dict(verb="list", resource="pods", namespace="default"),
     'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"'),
    (dict(verb="get", resource="pods", namespace="default", name="web"),
     'pods "web" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "default"'),
    (dict(verb="create", resource="pods", subresource="binding", namespace="default", name="web"),
     'pods "web" is forbidden: User "alice" cannot create resource "pods/binding" in API group "" in the namespace "default"'),
    (dict(verb="list", api_group="apps", resource="deployments"),
     'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" at the cluster scope'),
    (dict(verb="watch", api_group="devmgmtproto.k8s.io", resource="deviceclaims", namespace="x"),
     'deviceclaims.devmgmtproto.k8s.io is forbidden: User "alice" cannot watch resource "deviceclaims" in API group "devmgmtproto.k8s.io" in the namespace "x"'),
    (dict(verb="get", resource_request=False, path="/metrics"), 'forbidden: User "alice" cannot get path "/metrics"'),
])
def test_the_403_message_is_kube_apiservers(attrs, message):
    assert forbidden_message(Attributes(ALICE, **attrs), Decision(False)) == message


def test_the_403_status_names_group_kind_and_name_and_carries_the_reason():
    attrs = Attributes(ALICE, "get", api_group="apps", resource="deployments", namespace="d", name="web")
    status = forbidden_error(attrs, Decision(False, "RBAC: role.rbac.authorization.k8s.io \"x\" not found")).status()
    assert status["code"] == 403 and status["reason"] == "Forbidden"
    assert status["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert status["message"].endswith('in the namespace "d": RBAC: role.rbac.authorization.k8s.io "x" not found')


# --------------------------------------------------------------------------------- escalation
def refused(call) -> str:
    with pytest.raises(errors.StatusError) as caught:
        call()
    assert caught.value.code == 403, caught.value.message
    return caught.value.message


def test_a_role_with_rules_the_writer_does_not_hold_is_refused(registry, rbac):
    create(registry, "Role", role("role-writer", [{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["create"]},
                                                  {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]), namespace="default")
    create(registry, "RoleBinding", bind("alice-writes", "Role", "role-writer", user("alice")), namespace="default")
    wanted = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "delete"]}, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]
    message = refused(lambda: create(registry, "Role", role("greedy", wanted), namespace="default", user=ALICE))
    assert message == (
        'roles.rbac.authorization.k8s.io "greedy" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant '
        "RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["list" "delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )
    create(registry, "Role", role("modest", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]), namespace="default", user=ALICE)


def test_escalate_lets_a_writer_grant_what_it_does_not_hold(registry, rbac):
    create(registry, "ClusterRole", {"metadata": {"name": "escalator"}, "rules": [{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["create", "escalate"]}]})
    create(registry, "ClusterRoleBinding", bind("alice-escalates", "ClusterRole", "escalator", user("alice")))
    create(registry, "ClusterRole", {"metadata": {"name": "everything"}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}, user=ALICE)


def test_an_aggregation_rule_needs_full_authority(registry, rbac):
    create(registry, "ClusterRoleBinding", bind("alice-edit", "ClusterRole", "edit", user("alice")))
    aggregated = {"metadata": {"name": "mine"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}
    message = refused(lambda: create(registry, "ClusterRole", aggregated, user=ALICE))
    assert message == 'clusterroles.rbac.authorization.k8s.io "mine" is forbidden: must have cluster-admin privileges to use the aggregationRule'


def test_binding_a_role_the_writer_does_not_hold_is_refused_unless_it_may_bind_it(registry, rbac):
    create(registry, "Role", role("binder", [{"apiGroups": [RBAC], "resources": ["rolebindings"], "verbs": ["create"]}]), namespace="default")
    create(registry, "RoleBinding", bind("alice-binds", "Role", "binder", user("alice")), namespace="default")
    message = refused(lambda: create(registry, "RoleBinding", bind("bob-admin", "ClusterRole", "admin", user("bob")), namespace="default", user=ALICE))
    assert message.startswith(
        'rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:["
    )
    message = refused(lambda: create(registry, "RoleBinding", bind("bob-ghost", "ClusterRole", "ghost", user("bob")), namespace="default", user=ALICE))
    assert message == 'rolebindings.rbac.authorization.k8s.io "bob-ghost" is forbidden: clusterroles.rbac.authorization.k8s.io "ghost" not found'
    create(registry, "ClusterRole", {"metadata": {"name": "admin-binder"}, "rules": [{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["admin"]}]})
    create(registry, "RoleBinding", bind("alice-binds-admin", "ClusterRole", "admin-binder", user("alice")), namespace="default")
    create(registry, "RoleBinding", bind("bob-admin", "ClusterRole", "admin", user("bob")), namespace="default", user=ALICE)
    # bind on admin in "default" does not reach another namespace
    refused(lambda: create(registry, "RoleBinding", bind("bob-admin", "ClusterRole", "admin", user("bob")), namespace="other", user=ALICE))


def test_a_binding_to_rules_the_writer_holds_is_allowed(registry, rbac):
    create(registry, "ClusterRoleBinding", bind("alice-admin", "ClusterRole", "admin", user("alice")))
    create(registry, "RoleBinding", bind("bob-view", "ClusterRole", "view", user("bob")), namespace="default", user=ALICE)


def test_masters_and_unknown_requesters_are_not_checked(registry, rbac):
    everything = {"metadata": {"name": "all"}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
    create(registry, "ClusterRole", everything, user=ADMIN)
    create(registry, "ClusterRoleBinding", bind("all", "ClusterRole", "all", user("bob")))  # in-process: no requester


def test_with_always_allow_nothing_is_refused(registry):
    assert registry.access is None
    everything = {"metadata": {"name": "all"}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
    create(registry, "ClusterRole", everything, user=ALICE)
    assert AlwaysAllow().authorize(Attributes(ALICE, "delete", resource="nodes")).allowed


# ----------------------------------------------------------------------- aggregation, validation
def cluster_role(registry, name):
    return orjson.loads(registry.get(kind(registry, "ClusterRole"), "", name).raw)


def test_view_edit_and_admin_aggregate_as_kube_bootstraps_them(registry, rbac):
    view, edit, admin = (cluster_role(registry, n) for n in ("view", "edit", "admin"))
    assert {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]} in view["rules"]
    assert all(rule in edit["rules"] for rule in view["rules"])
    assert all(rule in admin["rules"] for rule in edit["rules"])
    assert {"apiGroups": [RBAC], "resources": ["rolebindings", "roles"], "verbs": ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]} in admin["rules"]
    assert not any("secrets" in rule.get("resources", []) for rule in view["rules"])


def test_a_labelled_cluster_role_joins_the_aggregate_and_leaves_it(registry, rbac):
    crd_view = {"metadata": {"name": "widgets-view", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}]}
    create(registry, "ClusterRole", crd_view)
    widget_rule = crd_view["rules"][0]
    assert widget_rule in cluster_role(registry, "view")["rules"]
    assert widget_rule in cluster_role(registry, "admin")["rules"]  # through edit
    registry.delete(kind(registry, "ClusterRole"), "", "widgets-view", _delete_options())
    assert widget_rule not in cluster_role(registry, "view")["rules"]
    assert widget_rule not in cluster_role(registry, "admin")["rules"]


def test_rules_written_to_an_aggregated_role_are_replaced(registry, rbac):
    rt = kind(registry, "ClusterRole")
    view = cluster_role(registry, "view")
    rules = view["rules"]
    view["rules"] = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    registry.update(rt, "", "view", view, WriteOptions())
    assert cluster_role(registry, "view")["rules"] == rules


def test_the_role_ref_cannot_change(registry):
    create(registry, "RoleBinding", bind("b", "ClusterRole", "view", user("alice")), namespace="default")
    changed = bind("b", "ClusterRole", "edit", user("alice"))
    with pytest.raises(errors.StatusError) as caught:
        registry.update(kind(registry, "RoleBinding"), "default", "b", changed, WriteOptions())
    assert caught.value.code == 422
    assert caught.value.message == (
        'RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: '
        'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef'
    )


def test_bindings_are_defaulted_and_validated(registry):
    stored = create(registry, "RoleBinding", bind("b", "Role", "r", user("alice"), {"kind": "ServiceAccount", "name": "sa"}), namespace="default")
    assert stored["roleRef"] == {"apiGroup": RBAC, "kind": "Role", "name": "r"}
    assert stored["subjects"] == [{"apiGroup": RBAC, "kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "sa"}]
    with pytest.raises(errors.StatusError) as caught:
        create(registry, "ClusterRoleBinding", bind("c", "Role", "r", {"kind": "Robot", "name": "x"}))
    assert 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"' in caught.value.message
    assert 'subjects[0].kind: Unsupported value: "Robot": supported values: "User", "Group", "ServiceAccount"' in caught.value.message
    with pytest.raises(errors.StatusError) as caught:
        create(registry, "ClusterRoleBinding", bind("d", "ClusterRole", "view", {"kind": "ServiceAccount", "name": "robot"}))
    assert caught.value.message.endswith("subjects[0].namespace: Required value")
    with pytest.raises(errors.StatusError) as caught:
        create(registry, "ClusterRole", {"metadata": {"name": "e"}, "aggregationRule": {}})
    assert "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil" in caught.value.message


def test_rules_are_validated(registry):
    with pytest.raises(errors.StatusError) as caught:
        create(registry, "Role", role("r", [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/x"]}]), namespace="default")
    assert "rules[0].verbs: Required value: verbs must contain at least one value" in caught.value.message
    assert 'rules[1].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs' in caught.value.message
    create(registry, "ClusterRole", {"metadata": {"name": "system:metrics-reader"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]})


def test_a_reset_keeps_the_bootstrap_policy_and_drops_the_rest(registry, rbac):
    from mockapi.registry import reset

    create(registry, "ClusterRole", {"metadata": {"name": "widgets-view", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                                     "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}]})
    create(registry, "ClusterRoleBinding", bind("alice-view", "ClusterRole", "view", user("alice")))
    reset.reset(registry)
    names = {s.name for s in registry.store.iterate(kind(registry, "ClusterRole").group_resource)}
    assert {"cluster-admin", "view", "edit", "admin", "system:basic-user"} <= names and "widgets-view" not in names
    assert not any(rule.get("apiGroups") == ["example.com"] for rule in cluster_role(registry, "view")["rules"])
    assert not can(rbac, ALICE, "list", "pods", namespace="default")
    assert can(rbac, BOB, "create", "selfsubjectaccessreviews", group="authorization.k8s.io")


def test_reviews_are_answered_not_stored_and_have_no_other_verb(registry):
    from mockapi.registry.options import ListOptions

    rt = registry.types.by_kind("authorization.k8s.io", "v1", "SubjectAccessReview")
    before = registry.resource_version
    body = {"spec": {"user": "alice", "nonResourceAttributes": {"verb": "get", "path": "/metrics"}}}
    answer = orjson.loads(registry.create(rt, "", body, WriteOptions()).raw)
    assert answer == {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {},
                      "spec": {"user": "alice", "nonResourceAttributes": {"verb": "get", "path": "/metrics"}}, "status": {"allowed": True}}
    assert registry.resource_version == before
    for call in (lambda: registry.list(rt, "", ListOptions()), lambda: registry.get(rt, "", "x"), lambda: registry.delete(rt, "", "x", _delete_options())):
        with pytest.raises(errors.StatusError) as caught:
            call()
        assert caught.value.code == 405 and caught.value.message == "the server does not allow this method on the requested resource"


def test_a_review_needs_a_user_and_one_kind_of_attributes(registry):
    rt = registry.types.by_kind("authorization.k8s.io", "v1", "SubjectAccessReview")
    with pytest.raises(errors.StatusError) as caught:
        registry.create(rt, "", {"spec": {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"verb": "get", "path": "/"}}}, WriteOptions())
    assert caught.value.code == 422
    assert caught.value.message.startswith('SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.nonResourceAttributes: Invalid value: '
                                           'authorization.NonResourceAttributes{Path:"/", Verb:"get"}: cannot be specified in combination with resourceAttributes, ')
    assert 'spec.user: Invalid value: "": at least one of user or group must be specified' in caught.value.message


def test_discovery_lists_reviews_as_create_only(registry):
    from mockapi.http.discovery import Discovery

    discovery = Discovery(registry.types)
    listed = orjson.loads(discovery.resource_list("authorization.k8s.io", "v1"))["resources"]
    assert {r["name"]: r["verbs"] for r in listed} == {
        "localsubjectaccessreviews": ["create"], "selfsubjectaccessreviews": ["create"],
        "selfsubjectrulesreviews": ["create"], "subjectaccessreviews": ["create"],
    }
    aggregated = orjson.loads(discovery.aggregated(core=False))
    group = next(g for g in aggregated["items"] if g["metadata"]["name"] == "authorization.k8s.io")
    assert {r["verbs"] == ["create"] for r in group["versions"][0]["resources"]} == {True}
    roles = orjson.loads(discovery.resource_list("rbac.authorization.k8s.io", "v1"))["resources"]
    assert "create" in roles[0]["verbs"] and "list" in roles[0]["verbs"]
