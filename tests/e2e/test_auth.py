"""Authentication, impersonation, authorization and the audit log, driven by kubectl and the kubernetes
client against a live server (tokens from kube's token file and minted for test users)."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from mockapi import errors
from mockapi.auth.authz import Attributes, Decision
from mockapi.testing import MockAPIServer, connect

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


class Table:
    """alice may list and get pods in "default" and impersonate bob; nobody else may do anything."""

    def authorize(self, attrs: Attributes) -> Decision:
        if attrs.user.name == "alice":
            if attrs.verb in ("list", "get") and attrs.resource == "pods" and attrs.namespace == "default":
                return Decision(True, "alice reads pods")
            if attrs.verb == "impersonate" and (attrs.resource, attrs.name) in (("users", "bob"), ("groups", "testers")):
                return Decision(True)
        return Decision(False)


def last_line(result) -> str:
    """kubectl's verdict: its last line (discovery's retries may be logged before it)."""
    return result.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    tokens = tmp_path_factory.mktemp("auth") / "tokens.csv"
    tokens.write_text('alicetoken,alice,1001,"dev,qa"\n')
    with MockAPIServer(allocator=False, token_auth_file=tokens, authorizer=Table(), audit_log_path=str(tokens.parent / "audit.log")) as mockapi:
        yield mockapi


@pytest.fixture
def kubectl(secured, tmp_path):
    binary = shutil.which("kubectl")
    assert binary, "kubectl must be on PATH"

    def run(*args, kubeconfig=None):
        config = kubeconfig or secured.kubeconfig_path
        return subprocess.run([binary, "--kubeconfig", str(config), "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True, text=True, timeout=60)

    return run


def test_kubectl_with_the_token_from_the_token_file(kubectl, secured):
    listed = kubectl("get", "pods", "-n", "default", "--token", "alicetoken")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.strip() == "No resources found in default namespace."


def test_kubectl_with_a_bad_token_is_told_it_must_log_in(kubectl):
    refused = kubectl("get", "pods", "--token", "not-a-token")
    assert refused.returncode == 1
    # what kubectl says when discovery gets the 401 (as against kube-apiserver)
    assert last_line(refused) == "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
    raw = kubectl("get", "--raw", "/api/v1/pods", "--token", "not-a-token")
    assert last_line(raw) == "error: You must be logged in to the server (Unauthorized)"


def test_kubectl_without_permission_gets_kubes_403_message(kubectl):
    refused = kubectl("get", "pods", "-n", "kube-system", "--token", "alicetoken")
    assert refused.returncode == 1
    assert last_line(refused) == 'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "kube-system"'


def test_kubectl_as_someone_allowed_runs_as_them_and_auth_whoami_says_who(kubectl):
    whoami = kubectl("auth", "whoami", "-o", "json", "--token", "alicetoken", "--as", "bob", "--as-group", "testers")
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)["status"]["userInfo"] == {"username": "bob", "groups": ["testers", "system:authenticated"]}
    # bob himself may not list pods: the request ran as bob
    refused = kubectl("get", "pods", "--token", "alicetoken", "--as", "bob")
    assert 'User "bob" cannot list resource "pods"' in refused.stderr


def test_kubectl_as_someone_not_allowed_is_refused_with_kubes_impersonation_message(kubectl):
    # (`kubectl get pods` says "Forbidden: unknown": its discovery is refused first, as against kube-apiserver)
    refused = kubectl("get", "--raw", "/api/v1/namespaces/default/pods", "--token", "alicetoken", "--as", "carol")
    assert refused.returncode == 1
    assert last_line(refused) == 'Error from server (Forbidden): users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope'


def test_the_admin_kubeconfig_is_system_masters(kubectl):
    whoami = kubectl("auth", "whoami")
    assert whoami.returncode == 0, whoami.stderr
    assert "mockapi-admin" in whoami.stdout and "system:masters" in whoami.stdout
    assert kubectl("get", "pods", "-A").returncode == 0


def test_a_minted_user_and_a_service_account_kubeconfig(kubectl, secured):
    whoami = kubectl("auth", "whoami", "-o", "json", kubeconfig=secured.service_account_kubeconfig("team-a", "controller"))
    assert json.loads(whoami.stdout)["status"]["userInfo"] == {
        "username": "system:serviceaccount:team-a:controller",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"],
    }
    refused = kubectl("get", "nodes", kubeconfig=secured.kubeconfig_for("dave", groups=["ops"]))
    assert last_line(refused) == 'Error from server (Forbidden): nodes is forbidden: User "dave" cannot list resource "nodes" in API group "" at the cluster scope'


def test_the_python_client_gets_kubes_401_and_403_bodies(secured):
    configuration = client.Configuration()
    configuration.host = secured.url
    configuration.ssl_ca_cert = secured.ca_file
    with client.ApiClient(configuration) as anonymous:
        with pytest.raises(ApiException) as refused:
            client.CoreV1Api(anonymous).list_namespaced_pod("default")
    assert refused.value.status == 401 and json.loads(refused.value.body) == UNAUTHORIZED
    with secured.user_client("alice") as alice:
        core = client.CoreV1Api(alice)
        assert core.list_namespaced_pod("default").items == []
        with pytest.raises(ApiException) as forbidden:
            core.create_namespaced_config_map("default", {"metadata": {"name": "x"}})
    assert forbidden.value.status == 403
    assert json.loads(forbidden.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default"',
        "reason": "Forbidden", "details": {"kind": "configmaps"}, "code": 403,
    }  # fmt: skip


def test_the_control_api_is_for_system_masters_only(secured):
    alice = connect(secured.url, token=secured.user_token("alice"), ca_file=secured.ca_file)
    with pytest.raises(errors.StatusError) as refused:
        alice.reset()
    assert (refused.value.code, refused.value.message) == (403, 'forbidden: User "alice" cannot post path "/mockapi/v1/reset"')
    assert secured.reset() == 0  # the admin's handle may


def test_health_checks_answer_without_credentials(secured):
    context = ssl.create_default_context(cafile=secured.ca_file)
    with urllib.request.urlopen(secured.url + "/readyz", context=context) as response:
        assert response.read() == b"ok"


def test_the_audit_log_records_who_did_what_as_whom(kubectl, secured):
    secured.clear_audit()
    kubectl("get", "pods", "-n", "default", "--token", "alicetoken", "--as", "bob")
    events = [e for e in secured.audit_events() if e.get("objectRef", {}).get("resource") == "pods"]
    complete = [e for e in events if e["stage"] == "ResponseComplete"][-1]
    assert complete["user"]["username"] == "alice" and complete["impersonatedUser"]["username"] == "bob"
    assert complete["verb"] == "list" and complete["responseStatus"]["code"] == 403
    assert complete["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert complete["userAgent"].startswith("kubectl")
