"""A pod made by ``kubectl run`` and by the kubernetes client, read back as a user reads it: what
kube-apiserver's defaulting and admission add (``tests/test_pod_defaults.py`` has the cases)."""

from __future__ import annotations

import re

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.conftest import running

pytestmark = pytest.mark.e2e
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


@pytest.fixture(scope="module")
def live():
    with running() as server:
        yield server


def test_kubectl_run_then_get_o_yaml(kubectl):
    kubectl("run", "web", "--image=nginx")
    pod = yaml.safe_load(kubectl("get", "pod", "web", "-o", "yaml").stdout)
    spec = pod["spec"]
    container = spec["containers"][0]
    assert (container["imagePullPolicy"], container["resources"]) == ("Always", {})
    volume = spec["volumes"][0]
    assert re.fullmatch(r"kube-api-access-[a-z0-9]{5}", volume["name"])
    assert container["volumeMounts"] == [{"mountPath": TOKEN_PATH, "name": volume["name"], "readOnly": True}]
    assert [s for source in volume["projected"]["sources"] for s in source] == ["serviceAccountToken", "configMap", "downwardAPI"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    assert [(t["key"], t["tolerationSeconds"]) for t in spec["tolerations"]] == [("node.kubernetes.io/not-ready", 300), ("node.kubernetes.io/unreachable", 300)]
    described = kubectl("describe", "pod", "web").stdout
    assert "kube-api-access-" in described and "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s" in described


def test_kubectl_run_with_an_unknown_service_account_is_refused(kubectl):
    result = kubectl("run", "lost", "--image=nginx", "--overrides", '{"spec":{"serviceAccountName":"robot"}}', check=False)
    assert result.returncode != 0
    assert 'pods "lost" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found' in result.stderr


def test_the_kubernetes_client_reads_the_defaults_as_typed_fields(core):
    core.create_namespaced_service_account("default", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="quiet"), automount_service_account_token=False))
    body = client.V1Pod(metadata=client.V1ObjectMeta(name="typed"), spec=client.V1PodSpec(
        service_account_name="quiet", containers=[client.V1Container(name="c", image="busybox:1.36")]))  # fmt: skip
    created = core.create_namespaced_pod("default", body)
    assert created.spec.containers[0].image_pull_policy == "IfNotPresent"
    assert created.spec.volumes is None and created.spec.containers[0].volume_mounts is None  # the account opts out
    assert created.spec.service_account == "quiet"
    assert {t.key for t in created.spec.tolerations} == {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod("default", client.V1Pod(metadata=client.V1ObjectMeta(name="other"), spec=client.V1PodSpec(
            service_account_name="nobody", containers=[client.V1Container(name="c", image="busybox")])))  # fmt: skip
    assert caught.value.status == 403
