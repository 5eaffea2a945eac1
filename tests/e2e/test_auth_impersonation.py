"""With RBAC deciding: impersonation is what an `impersonate` grant allows, anonymous requests are
`system:anonymous`, and whoami works for anyone authenticated — driven by kubectl and the client."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from mockapi.testing import MockAPIServer

GRANTS = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-bob}
rules:
- apiGroups: [""]
  resources: ["users"]
  resourceNames: ["bob"]
  verbs: ["impersonate"]
- apiGroups: [""]
  resources: ["groups"]
  resourceNames: ["viewers"]
  verbs: ["impersonate"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-impersonates-bob}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-bob}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-views, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: bob}]
"""


@pytest.fixture(scope="module")
def rbac():
    with MockAPIServer(rbac=True, allocator=False, anonymous_auth=True, load=GRANTS) as mockapi:
        yield mockapi


@pytest.fixture(scope="module")
def alice(rbac):
    return rbac.kubeconfig_for("alice")


def kubectl(kubeconfig, *args, tmp_path):
    binary = shutil.which("kubectl")
    assert binary, "kubectl must be on PATH"
    return subprocess.run([binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True, text=True, timeout=60)


def test_an_impersonate_grant_lets_alice_act_as_bob_with_bobs_permissions(rbac, alice, tmp_path):
    listed = kubectl(alice, "get", "pods", "-n", "default", "--as", "bob", tmp_path=tmp_path)
    assert listed.returncode == 0, listed.stderr
    whoami = kubectl(alice, "auth", "whoami", "-o", "json", "--as", "bob", "--as-group", "viewers", tmp_path=tmp_path)
    assert json.loads(whoami.stdout)["status"]["userInfo"] == {"username": "bob", "groups": ["viewers", "system:authenticated"]}


def test_without_a_grant_impersonation_is_kubes_403(rbac, alice, tmp_path):
    refused = kubectl(alice, "get", "--raw", "/api/v1/namespaces/default/pods", "--as", "carol", tmp_path=tmp_path)
    assert refused.stderr.strip().splitlines()[-1] == (
        'Error from server (Forbidden): users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope'
    )
    group = kubectl(alice, "get", "--raw", "/api/v1/namespaces/default/pods", "--as", "bob", "--as-group", "system:masters", tmp_path=tmp_path)
    assert 'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups"' in group.stderr


def test_bob_may_view_but_not_write_and_alice_alone_may_do_nothing(rbac, alice, tmp_path):
    refused = kubectl(alice, "create", "configmap", "x", "-n", "default", "--as", "bob", tmp_path=tmp_path)
    assert refused.stderr.strip().splitlines()[-1].startswith('error: failed to create configmap: configmaps is forbidden: User "bob" cannot create resource "configmaps"')
    alone = kubectl(alice, "get", "--raw", "/api/v1/namespaces/default/pods", tmp_path=tmp_path)
    assert 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"' in alone.stderr
    assert kubectl(alice, "auth", "whoami", tmp_path=tmp_path).returncode == 0  # whoami is open to anyone authenticated


def test_anonymous_requests_are_system_anonymous_when_allowed(rbac):
    configuration = client.Configuration()
    configuration.host = rbac.url
    configuration.ssl_ca_cert = rbac.ca_file
    with client.ApiClient(configuration) as anonymous:
        with pytest.raises(ApiException) as refused:
            client.CoreV1Api(anonymous).list_namespaced_pod("default")
        body = json.loads(refused.value.body)
        refused.value.body = None  # let the kept connection go
    assert refused.value.status == 403
    assert body["message"] == 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"'
