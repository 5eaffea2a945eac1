"""``--authorization-mode=Node,RBAC`` end to end: a kubelet's identity (``system:node:n1`` in
``system:nodes``, by token and by a client certificate as kubelets have) may read and write what
kube's Node authorizer and NodeRestriction let it — its own Node and its status, pods bound to it
and their status, what those pods reference, events — and nothing more, with kube's 403 reasons;
kubectl, the kubernetes client and access reviews agree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from mockapi.auth import tls
from mockapi.testing import MockAPIServer

pytestmark = pytest.mark.e2e
NODE = ("system:node:n1", ["system:nodes"])
POD = {"containers": [{"name": "c", "image": "i", "envFrom": [{"configMapRef": {"name": "settings"}}]}]}


@pytest.fixture(scope="module")
def server():
    with MockAPIServer(allocator=False, authorization_mode="Node,RBAC", authentication=True) as server:
        with server.api_client() as admin:
            core = client.CoreV1Api(admin)
            for name in ("n1", "n2"):
                core.create_node({"metadata": {"name": name}})
            for name in ("settings", "other"):
                core.create_namespaced_config_map("default", {"metadata": {"name": name}})
            core.create_namespaced_pod("default", {"metadata": {"name": "mine"}, "spec": {**POD, "nodeName": "n1"}})
            core.create_namespaced_pod("default", {"metadata": {"name": "theirs"}, "spec": {**POD, "nodeName": "n2"}})
        yield server


def refused(call) -> str:
    with pytest.raises(ApiException) as failed:
        call()
    assert failed.value.status == 403, failed.value.body
    return json.loads(failed.value.body)["message"]


def test_a_node_reads_and_writes_its_own_node_and_pods_only(server):
    with server.user_client(NODE[0], groups=NODE[1]) as api:
        core = client.CoreV1Api(api)
        assert core.read_node("n1").metadata.name == "n1"
        core.patch_node_status("n1", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        assert [p.metadata.name for p in core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n1").items] == ["mine"]
        assert core.read_namespaced_pod("mine", "default").spec.node_name == "n1"
        core.patch_namespaced_pod_status("mine", "default", {"status": {"phase": "Running"}})
        assert core.read_namespaced_config_map("settings", "default").metadata.name == "settings"  # its pod's envFrom
        core.create_namespaced_event("default", {"metadata": {"name": "n1.started"}, "involvedObject": {"kind": "Node", "name": "n1"}})

        user = 'User "system:node:n1"'
        assert refused(lambda: core.read_node("n2")) == f"nodes \"n2\" is forbidden: {user} cannot get resource \"nodes\" in API group \"\" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object"
        assert refused(lambda: core.list_node()).endswith("node 'n1' cannot read all nodes, only its own Node object")
        assert refused(lambda: core.patch_node_status("n2", {"status": {}})).endswith('node "n1" is not allowed to modify node "n2"')
        assert refused(lambda: core.list_pod_for_all_namespaces()) == f'pods is forbidden: {user} cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector'
        assert refused(lambda: core.read_namespaced_pod("theirs", "default")).endswith("no relationship found between node 'n1' and this object")
        assert refused(lambda: core.patch_namespaced_pod_status("theirs", "default", {"status": {}})).endswith('node "n1" can only update pod status for pods with spec.nodeName set to itself')
        assert refused(lambda: core.read_namespaced_config_map("other", "default")).endswith("no relationship found between node 'n1' and this object")
        assert refused(lambda: core.delete_namespaced_config_map("settings", "default")).endswith("can only read resources of this type")
        assert refused(lambda: core.list_namespaced_secret("default")).endswith("No Object name found")


def test_kubectl_as_a_node_with_a_client_certificate(server, tmp_path):
    """As a kubelet authenticates: a certificate with CN system:node:n1 and O system:nodes."""
    cert, key = tls.client_certificate(server._certificates, "system:node:n1", ("system:nodes",))
    base = [shutil.which("kubectl"), "--server", server.url, "--certificate-authority", server.ca_file, "--client-certificate", str(cert), "--client-key", str(key), "--cache-dir", str(tmp_path)]
    run = lambda *args: subprocess.run([*base, *args], capture_output=True, text=True, timeout=60)  # noqa: E731
    own = run("get", "node", "n1", "-o", "name")
    assert own.returncode == 0 and own.stdout.strip() == "node/n1", own.stderr
    pods = run("get", "pods", "-A", "--field-selector", "spec.nodeName=n1", "-o", "name")
    assert pods.returncode == 0 and pods.stdout.split() == ["pod/mine"], pods.stderr
    other = run("get", "node", "n2")
    assert other.returncode == 1
    assert "Error from server (Forbidden): nodes \"n2\" is forbidden: User \"system:node:n1\" cannot get resource \"nodes\" in API group \"\" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object" in other.stderr
    assert run("auth", "can-i", "get", "nodes/n1").stdout.strip() == "yes"
    assert run("auth", "can-i", "get", "nodes/n2").stdout.strip() == "no - node 'n1' cannot read 'n2', only its own Node object"


def test_access_reviews_ask_the_node_authorizer_with_the_field_selector(server):
    with server.api_client() as api:
        reviews = client.AuthorizationV1Api(api)

        def may_list_pods(selector):
            attributes = client.V1ResourceAttributes(verb="list", resource="pods", field_selector=selector)
            spec = client.V1SubjectAccessReviewSpec(user=NODE[0], groups=NODE[1], resource_attributes=attributes)
            return reviews.create_subject_access_review(client.V1SubjectAccessReview(spec=spec)).status

        assert may_list_pods(client.V1FieldSelectorAttributes(raw_selector="spec.nodeName=n1")).allowed is True
        assert may_list_pods(client.V1FieldSelectorAttributes(requirements=[client.V1FieldSelectorRequirement(key="spec.nodeName", operator="In", values=["n1"])])).allowed is True
        status = may_list_pods(None)
        assert status.allowed is False and status.reason == "can only list/watch pods with spec.nodeName field selector"


def test_users_who_are_not_nodes_are_rbacs_alone(server):
    with server.user_client("system:node:n1") as api:  # the name without the group is no node
        assert refused(lambda: client.CoreV1Api(api).read_node("n1")) == 'nodes "n1" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope'


def test_serve_accepts_node_rbac(tmp_path):
    process = subprocess.run([sys.executable, "-m", "mockapi", "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert "Node,RBAC" in process.stdout
