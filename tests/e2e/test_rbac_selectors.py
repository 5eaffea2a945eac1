"""Access reviews with field and label selectors end to end (kube 1.31+): kubectl and the
kubernetes client send them, the server validates and parses them as kube does, and RBAC decides
without them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from mockapi.testing import MockAPIServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server():
    with MockAPIServer(allocator=False, rbac=True) as server:
        yield server


def review(api, **resource):
    body = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(user="bob", resource_attributes=client.V1ResourceAttributes(verb="list", resource="pods", namespace="default", **resource)))
    return client.AuthorizationV1Api(api).create_subject_access_review(body).status


def test_the_python_client_sends_selectors_and_gets_kubes_answer(server):
    with server.api_client() as api:
        status = review(api, field_selector=client.V1FieldSelectorAttributes(raw_selector="spec.nodeName=n1"),
                        label_selector=client.V1LabelSelectorAttributes(requirements=[client.V1LabelSelectorRequirement(key="app", operator="In", values=["web"])]))  # fmt: skip
        assert status.allowed is False and status.evaluation_error is None
        status = review(api, field_selector=client.V1FieldSelectorAttributes(raw_selector="key in value"))
        assert status.evaluation_error == "spec.resourceAttributes.fieldSelector ignored due to parse error"
        with pytest.raises(ApiException) as refused:
            review(api, label_selector=client.V1LabelSelectorAttributes())
    assert refused.value.status == 422
    assert json.loads(refused.value.body)["details"]["causes"] == [{
        "reason": "FieldValueRequired", "field": "spec.resourceAttributes.labelSelector.requirements",
        "message": "Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required",
    }]  # fmt: skip


def test_kubectl_creates_a_review_with_selectors(server, tmp_path):
    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"user": "bob", "groups": ["system:masters"], "resourceAttributes": {
        "verb": "list", "resource": "pods", "fieldSelector": {"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["n1"]}, {"key": "x", "operator": "Exists"}]}}}}  # fmt: skip
    (tmp_path / "sar.json").write_text(json.dumps(sar))
    created = subprocess.run([shutil.which("kubectl"), "--kubeconfig", str(server.kubeconfig_path), "create", "-f", str(tmp_path / "sar.json"), "-o", "json"], capture_output=True, text=True, timeout=60)
    assert created.returncode == 0, created.stderr
    answer = json.loads(created.stdout)
    assert answer["spec"]["resourceAttributes"]["fieldSelector"] == sar["spec"]["resourceAttributes"]["fieldSelector"]
    assert answer["status"] == {"allowed": True, "evaluationError": "spec.resourceAttributes.fieldSelector partially ignored due to parse error"}
