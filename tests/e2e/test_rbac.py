"""RBAC and access reviews end to end, with kubectl and the kubernetes client: ``kubectl auth
can-i`` (also ``--list`` and ``--as``), 403 bodies as kube writes them, escalation refused.

Two servers for the module: the default one (no authentication, AlwaysAllow: every review says
yes) and one with ``--authorization-mode=RBAC`` (tokens minted by the test server)."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess

import pytest
from kubernetes import client

from mockapi.testing import MockAPIServer

pytestmark = pytest.mark.e2e
RBAC = "rbac.authorization.k8s.io"


_CLIENTS: list = []  # closed before their server stops (an open keep-alive connection holds a TLS server's shutdown up)


def admin_api(server):
    _CLIENTS.append(server.api_client())
    return _CLIENTS[-1]


def user_api(server, name):
    _CLIENTS.append(server.user_client(name))
    return _CLIENTS[-1]


def _close_clients():
    # A refused call's ApiException keeps its response, and so its connection, until collected.
    gc.collect()
    while _CLIENTS:
        api = _CLIENTS.pop()
        api.rest_client.pool_manager.clear()  # close() leaves the pooled connections open
        api.close()


@pytest.fixture(scope="module")
def open_server():
    with MockAPIServer(allocator=False) as server:
        yield server
        _close_clients()


@pytest.fixture(scope="module")
def rbac_server():
    with MockAPIServer(allocator=False, rbac=True) as server:
        yield server
        _close_clients()


def kubectl(kubeconfig, *args, check=True):
    binary = shutil.which("kubectl")
    assert binary, "kubectl must be on PATH"
    result = subprocess.run([binary, "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True, timeout=60)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


# ------------------------------------------------------------------------- AlwaysAllow (default)
def test_kubectl_auth_can_i_says_yes_without_authentication(open_server):
    assert kubectl(open_server.kubeconfig_path, "auth", "can-i", "list", "pods").stdout.strip() == "yes"
    assert kubectl(open_server.kubeconfig_path, "auth", "can-i", "create", "deviceclaims.devmgmtproto.k8s.io", "-n", "x").stdout.strip() == "yes"


def test_kubectl_auth_can_i_list_shows_everything_without_authentication(open_server):
    out = kubectl(open_server.kubeconfig_path, "auth", "can-i", "--list").stdout
    assert out.split("\n")[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert "*.*" in out and "[*]" in out


def test_reviews_through_the_kubernetes_client_are_answered_and_not_stored(open_server):
    authz = client.AuthorizationV1Api(admin_api(open_server))
    review = authz.create_subject_access_review(client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user="alice", resource_attributes=client.V1ResourceAttributes(verb="get", resource="pods", namespace="default"))))
    assert review.status.allowed is True
    own = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(
        non_resource_attributes=client.V1NonResourceAttributes(verb="get", path="/metrics"))))
    assert own.status.allowed is True
    rules = authz.create_self_subject_rules_review(client.V1SelfSubjectRulesReview(spec=client.V1SelfSubjectRulesReviewSpec(namespace="default")))
    assert rules.status.resource_rules[0].verbs == ["*"] and rules.status.incomplete is False


def test_a_review_without_attributes_is_invalid(open_server):
    authz = client.AuthorizationV1Api(admin_api(open_server))
    with pytest.raises(client.ApiException) as caught:
        authz.create_subject_access_review({"spec": {"user": "alice"}})
    assert caught.value.status == 422
    assert "spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified" in json.loads(caught.value.body)["message"]


def test_rbac_kinds_are_served_and_role_refs_cannot_change(open_server):
    rbac = client.RbacAuthorizationV1Api(admin_api(open_server))
    names = {r.metadata.name for r in rbac.list_cluster_role().items}
    rbac.create_namespaced_role_binding("default", {"metadata": {"name": "b"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"},
                                                    "subjects": [{"kind": "User", "name": "alice"}]})
    with pytest.raises(client.ApiException) as caught:
        rbac.patch_namespaced_role_binding("b", "default", {"roleRef": {"name": "edit"}})
    assert caught.value.status == 422
    assert json.loads(caught.value.body)["message"] == (
        'RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: '
        'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef'
    )
    assert isinstance(names, set)


# ----------------------------------------------------------------------------------- RBAC mode
def test_the_admin_can_and_a_stranger_cannot(rbac_server):
    assert kubectl(rbac_server.kubeconfig_path, "auth", "can-i", "list", "pods").stdout.strip() == "yes"
    alice = rbac_server.kubeconfig_for("alice")
    result = kubectl(alice, "auth", "can-i", "list", "pods", check=False)
    assert result.returncode == 1 and result.stdout.strip() == "no"
    assert kubectl(alice, "auth", "can-i", "create", "selfsubjectaccessreviews.authorization.k8s.io").stdout.strip() == "yes"


def test_kubectl_auth_can_i_as_another_user(rbac_server):
    admin = rbac_server.kubeconfig_path
    result = kubectl(admin, "auth", "can-i", "list", "pods", "--as", "carol", check=False)
    assert result.stdout.strip() == "no"
    kubectl(admin, "create", "rolebinding", "carol-view", "--clusterrole=view", "--user=carol", "-n", "default")
    assert kubectl(admin, "auth", "can-i", "list", "pods", "--as", "carol", "-n", "default").stdout.strip() == "yes"
    assert kubectl(admin, "auth", "can-i", "list", "pods", "--as", "carol", "-n", "kube-system", check=False).stdout.strip() == "no"
    listed = kubectl(admin, "auth", "can-i", "--list", "--as", "carol", "-n", "default").stdout
    assert any(line.split()[:1] == ["pods"] and "[get list watch]" in line for line in listed.splitlines())


def test_kubectl_auth_can_i_list_for_a_user(rbac_server):
    out = kubectl(rbac_server.kubeconfig_for("dave"), "auth", "can-i", "--list").stdout
    assert "selfsubjectaccessreviews.authorization.k8s.io" in out
    assert "[/api/*]" in out


def test_the_403_body_is_kube_apiservers(rbac_server):
    core = client.CoreV1Api(user_api(rbac_server, "erin"))
    with pytest.raises(client.ApiException) as caught:
        core.list_namespaced_pod("default")
    assert caught.value.status == 403
    assert json.loads(caught.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods is forbidden: User "erin" cannot list resource "pods" in API group "" in the namespace "default"',
        "reason": "Forbidden", "details": {"kind": "pods"}, "code": 403,
    }
    with pytest.raises(client.ApiException) as caught:
        core.read_namespace("default")
    assert json.loads(caught.value.body)["message"] == (
        # kube's RequestInfo puts a namespace's own name in its namespace attribute
        'namespaces "default" is forbidden: User "erin" cannot get resource "namespaces" in API group "" in the namespace "default"'
    )
    with pytest.raises(client.ApiException) as caught:
        core.list_node()
    assert json.loads(caught.value.body)["message"] == (
        'nodes is forbidden: User "erin" cannot list resource "nodes" in API group "" at the cluster scope'
    )
    result = kubectl(rbac_server.kubeconfig_for("erin"), "get", "pods", check=False)
    assert 'pods is forbidden: User "erin" cannot list resource "pods" in API group "" in the namespace "default"' in result.stderr


def test_escalation_is_refused_through_the_api(rbac_server):
    admin = client.RbacAuthorizationV1Api(admin_api(rbac_server))
    admin.create_namespaced_role("default", {"metadata": {"name": "role-writer"}, "rules": [
        {"apiGroups": [RBAC], "resources": ["roles", "rolebindings"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
    ]})
    admin.create_namespaced_role_binding("default", {"metadata": {"name": "frank-writes"}, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "role-writer"},
                                                     "subjects": [{"kind": "User", "name": "frank"}]})
    frank = client.RbacAuthorizationV1Api(user_api(rbac_server, "frank"))
    with pytest.raises(client.ApiException) as caught:
        frank.create_namespaced_role("default", {"metadata": {"name": "secrets"}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]})
    assert caught.value.status == 403
    body = json.loads(caught.value.body)
    assert body["reason"] == "Forbidden" and body["details"] == {"name": "secrets", "group": RBAC, "kind": "roles"}
    assert body["message"] == (
        'roles.rbac.authorization.k8s.io "secrets" is forbidden: user "frank" (groups=["system:authenticated"]) is attempting to grant '
        'RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}'
    )
    frank.create_namespaced_role("default", {"metadata": {"name": "cm"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]})
    with pytest.raises(client.ApiException) as caught:
        frank.create_namespaced_role_binding("default", {"metadata": {"name": "g-admin"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "admin"},
                                                         "subjects": [{"kind": "User", "name": "grace"}]})
    assert caught.value.status == 403
    assert "is attempting to grant RBAC permissions not currently held" in json.loads(caught.value.body)["message"]


def test_subject_access_reviews_under_rbac(rbac_server):
    authz = client.AuthorizationV1Api(admin_api(rbac_server))
    rbac = client.RbacAuthorizationV1Api(admin_api(rbac_server))
    rbac.create_cluster_role_binding({"metadata": {"name": "henry-view"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"},
                                      "subjects": [{"kind": "User", "name": "henry"}]})
    review = authz.create_subject_access_review({"spec": {"user": "henry", "resourceAttributes": {"verb": "list", "resource": "deployments", "group": "apps"}}})
    assert review.status.allowed is True
    assert review.status.reason == 'RBAC: allowed by ClusterRoleBinding "henry-view" of ClusterRole "view" to User "henry"'
    review = authz.create_subject_access_review({"spec": {"user": "henry", "resourceAttributes": {"verb": "delete", "resource": "pods", "namespace": "x"}}})
    assert review.status.allowed is False and not review.status.denied
    local = authz.create_namespaced_local_subject_access_review("default", {"metadata": {"namespace": "default"}, "spec": {
        "user": "henry", "resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "default"}}})
    assert local.status.allowed is True
    henry = client.AuthorizationV1Api(user_api(rbac_server, "henry"))
    rules = henry.create_self_subject_rules_review({"spec": {"namespace": "default"}})
    assert any("pods" in (rule.resources or []) and rule.verbs == ["get", "list", "watch"] for rule in rules.status.resource_rules)
    with pytest.raises(client.ApiException) as caught:  # only admins may ask about others
        henry.create_subject_access_review({"spec": {"user": "x", "resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert caught.value.status == 403


def test_kubectl_creates_and_shows_rbac_objects(open_server):
    config = open_server.kubeconfig_path
    kubectl(config, "create", "clusterrole", "pod-reader", "--verb=get,list,watch", "--resource=pods,pods/status")
    kubectl(config, "create", "role", "cm-editor", "--verb=update", "--resource=configmaps", "--resource-name=settings", "-n", "default")
    kubectl(config, "create", "clusterrolebinding", "readers", "--clusterrole=pod-reader", "--group=readers", "--serviceaccount=default:robot")
    role = json.loads(kubectl(config, "get", "clusterrole", "pod-reader", "-o", "json").stdout)
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods", "pods/status"], "verbs": ["get", "list", "watch"]}]
    role = json.loads(kubectl(config, "get", "role", "cm-editor", "-n", "default", "-o", "json").stdout)
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["update"]}]
    binding = json.loads(kubectl(config, "get", "clusterrolebinding", "readers", "-o", "json").stdout)
    assert binding["subjects"] == [{"apiGroup": RBAC, "kind": "Group", "name": "readers"}, {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]
    assert "pod-reader" in kubectl(config, "get", "clusterroles").stdout


def test_kubectl_get_prints_kubes_columns(open_server):
    config = open_server.kubeconfig_path
    kubectl(config, "create", "rolebinding", "printed", "--clusterrole=view", "--user=ann", "--group=ops", "--serviceaccount=default:bot", "-n", "default")
    assert kubectl(config, "get", "clusterroles").stdout.split("\n")[0].split() == ["NAME", "CREATED", "AT"]
    header, row = kubectl(config, "get", "rolebinding", "printed", "-n", "default", "-o", "wide").stdout.strip().split("\n")
    assert header.split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert row.split()[:2] == ["printed", "ClusterRole/view"] and row.split()[3:] == ["ann", "ops", "default/bot"]


def test_kubectl_auth_can_i_for_a_service_account_a_subresource_and_a_name(rbac_server):
    admin = rbac_server.kubeconfig_path
    kubectl(admin, "create", "role", "binder", "--verb=create", "--resource=pods/binding", "-n", "default")
    kubectl(admin, "create", "role", "one-cm", "--verb=get", "--resource=configmaps", "--resource-name=settings", "-n", "default")
    kubectl(admin, "create", "rolebinding", "robot-binds", "--role=binder", "--serviceaccount=default:robot", "-n", "default")
    kubectl(admin, "create", "rolebinding", "robot-cm", "--role=one-cm", "--serviceaccount=default:robot", "-n", "default")
    robot = ("--as", "system:serviceaccount:default:robot", "-n", "default")
    assert kubectl(admin, "auth", "can-i", "create", "pods", "--subresource=binding", *robot).stdout.strip() == "yes"
    assert kubectl(admin, "auth", "can-i", "create", "pods", *robot, check=False).stdout.strip() == "no"
    assert kubectl(admin, "auth", "can-i", "get", "configmaps/settings", *robot).stdout.strip() == "yes"
    assert kubectl(admin, "auth", "can-i", "get", "configmaps/other", *robot, check=False).stdout.strip() == "no"
    assert kubectl(admin, "auth", "can-i", "create", "pods", "--subresource=binding", "--as", "system:serviceaccount:kube-system:robot", "-n", "default", check=False).stdout.strip() == "no"
