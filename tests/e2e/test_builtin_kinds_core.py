"""core/v1 PersistentVolumeClaim, PersistentVolume, Endpoints, ReplicationController, PodTemplate,
LimitRange, ResourceQuota and apps/v1 ControllerRevision end to end, on one server for the module:
kubectl (apply, get with kube's columns, describe, apply --server-side, create quota, scale,
explain, api-resources) and the kubernetes client (kube's defaults, 422s in kube's words, the
RC's scale subresource). No controller runs: claims stay Pending, an RC makes no pods, a quota's
status stays empty."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.conftest import running

pytestmark = pytest.mark.e2e

MANIFESTS = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: standard
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-data}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  hostPath: {path: /srv/data}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}]
  ports: [{port: 80}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: a, image: "busybox:1.36"}]}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: tmpl}
template:
  metadata: {labels: {app: tmpl}}
  spec: {containers: [{name: a, image: busybox}]}
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - {type: Container, max: {cpu: "2"}, min: {memory: 64Mi}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: quota}
spec:
  hard: {pods: "10", limits.cpu: "4"}
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: rev}
revision: 1
data: {spec: {template: {metadata: {labels: {app: db}}}}}
"""
KINDS = "pvc,pv,ep,rc,podtemplate,limits,quota,controllerrevision"


@pytest.fixture(scope="module")
def live():
    """One server for the module: each test uses names of its own."""
    with running() as server:
        yield server


@pytest.fixture(scope="module")
def applied(live):
    result = subprocess.run([shutil.which("kubectl"), "--kubeconfig", str(live.kubeconfig), "apply", "-f", "-"],
                            input=MANIFESTS, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def apps(api):
    return client.AppsV1Api(api)


def blocks(out: str) -> list[list[list[str]]]:
    """`kubectl get a,b` output: per kind, its rows split on runs of 2+ spaces."""
    return [[re.split(r"\s{2,}", line.strip()) for line in block.splitlines()] for block in out.strip().split("\n\n")]


def invalid(call) -> str:
    with pytest.raises(ApiException) as caught:
        call()
    assert caught.value.status == 422, caught.value.body
    return caught.value.body


def test_kubectl_apply_and_get_with_kubes_columns(applied, kubectl):
    assert "controllerrevision.apps/rev created" in applied and "persistentvolumeclaim/data created" in applied
    pvc, pv, ep, rc, template, limits, quota, revision = blocks(kubectl("get", KINDS, "-o", "wide").stdout)
    assert pvc[0] == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE", "VOLUMEMODE"]
    assert pvc[1][:2] == ["persistentvolumeclaim/data", "Pending"] and pvc[1][-1] == "Filesystem"
    assert pv[0] == ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE", "VOLUMEMODE"]
    assert pv[1][:5] == ["persistentvolume/pv-data", "5Gi", "RWO,ROX", "Retain", "Pending"]
    assert ep == [["NAME", "ENDPOINTS", "AGE"], ["endpoints/web", "10.0.0.1:80,10.0.0.2:80", ep[1][2]]]
    assert rc[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rc[1][:4] == ["replicationcontroller/legacy", "2", "0", "0"] and rc[1][-3:] == ["a", "busybox:1.36", "app=legacy"]
    assert template == [["NAME", "CONTAINERS", "IMAGES", "POD LABELS"], ["podtemplate/tmpl", "a", "busybox", "app=tmpl"]]
    assert limits[0] == ["NAME", "CREATED AT"] and limits[1][0] == "limitrange/limits"
    assert quota[0] == ["NAME", "AGE", "REQUEST", "LIMIT"] and quota[1][0] == "resourcequota/quota"
    assert revision[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"] and revision[1][:3] == ["controllerrevision.apps/rev", "<none>", "1"]
    assert "replicationcontroller/legacy" in kubectl("get", "all").stdout  # category all


def test_kubectl_describe_each_kind(applied, kubectl):
    out = kubectl("describe", "pvc", "data").stdout
    assert "VolumeMode:    Filesystem" in out and "Finalizers:    [kubernetes.io/pvc-protection]" in out
    assert "Reclaim Policy:  Retain" in kubectl("describe", "pv", "pv-data").stdout
    assert "10.0.0.1,10.0.0.2" in kubectl("describe", "ep", "web").stdout
    assert "Replicas:     0 current / 2 desired" in kubectl("describe", "rc", "legacy").stdout
    out = kubectl("describe", "limits", "limits").stdout
    assert "Container   cpu       -     2    2                2" in out and "64Mi" in out
    assert "Resource" in kubectl("describe", "quota", "quota").stdout
    assert "Revision:" in kubectl("describe", "controllerrevision", "rev").stdout
    assert "busybox" in kubectl("describe", "podtemplate", "tmpl").stdout


def test_kubectl_apply_server_side_creates_and_reapplies(live, kubectl):
    manifests = MANIFESTS.replace("name: ", "name: ssa-")
    first = kubectl("apply", "--server-side", "-f", "-", stdin=manifests).stdout
    assert first.count("serverside-applied") == 8, first
    again = kubectl("apply", "--server-side", "-f", "-", stdin=manifests.replace("storageClassName: standard", "storageClassName: standard\n  volumeMode: Filesystem")).stdout
    assert again.count("serverside-applied") == 8, again
    out = kubectl("get", "pvc", "ssa-data", "-o", "jsonpath={.spec.resources.requests.storage} {.spec.volumeMode} {.metadata.managedFields[0].manager}").stdout
    assert out == "1Gi Filesystem kubectl"
    grown = kubectl("apply", "--server-side", "-f", "-", stdin=manifests.replace("storage: 1Gi", "storage: 2Gi"), check=False)
    assert grown.returncode != 0 and "spec is immutable after creation" in grown.stderr  # a Pending claim cannot grow


def test_kubectl_create_quota_scale_rc_and_field_selectors(applied, kubectl):
    kubectl("create", "quota", "made", "--hard=cpu=1,pods=2,limits.memory=1Gi", "--scopes=NotTerminating")
    out = kubectl("get", "quota", "made", "-o", "jsonpath={.spec.hard.cpu} {.spec.hard.limits\\.memory} {.spec.scopes[0]}").stdout
    assert out == "1 1Gi NotTerminating"
    assert "replicationcontroller/legacy scaled" in kubectl("scale", "rc", "legacy", "--replicas=3").stdout
    assert kubectl("get", "rc", "legacy", "-o", "jsonpath={.spec.replicas} {.metadata.generation}").stdout == "3 2"
    assert "legacy" in kubectl("get", "rc", "--field-selector", "status.replicas=0").stdout
    refused = kubectl("get", "pvc", "--field-selector", "spec.volumeName=x", check=False)
    assert refused.returncode != 0 and 'field label not supported: spec.volumeName' in refused.stderr


def test_discovery_and_explain(applied, kubectl):
    resources = kubectl("api-resources", "--api-group=").stdout
    for line in ("persistentvolumeclaims  pvc", "persistentvolumes  pv", "endpoints  ep", "replicationcontrollers  rc", "limitranges  limits", "resourcequotas  quota"):
        name, short = line.split()
        assert any(row.split()[:2] == [name, short] for row in resources.splitlines()), line
    assert "podtemplates" in resources
    assert "controllerrevisions" in kubectl("api-resources", "--api-group=apps").stdout
    assert "Filesystem is implied" in kubectl("explain", "pvc.spec.volumeMode").stdout


def test_the_client_sees_kubes_defaults(core, apps):
    claim = core.create_namespaced_persistent_volume_claim("default", {"metadata": {"name": "client-claim"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})  # fmt: skip
    assert (claim.spec.volume_mode, claim.status.phase) == ("Filesystem", "Pending")
    volume = core.create_persistent_volume({"metadata": {"name": "client-pv"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "nfs": {"server": "nfs.example", "path": "/x"}}})  # fmt: skip
    assert (volume.spec.persistent_volume_reclaim_policy, volume.spec.volume_mode, volume.status.phase) == ("Retain", "Filesystem", "Pending")
    endpoints = core.create_namespaced_endpoints("default", {"metadata": {"name": "client-ep"}, "subsets": [{"addresses": [{"ip": "10.1.0.1"}], "ports": [{"port": 53}]}]})
    assert endpoints.subsets[0].ports[0].protocol == "TCP"
    template = {"metadata": {"labels": {"app": "c"}}, "spec": {"containers": [{"name": "a", "image": "busybox"}]}}
    rc = core.create_namespaced_replication_controller("default", {"metadata": {"name": "client-rc"}, "spec": {"template": template}})
    assert (rc.spec.replicas, rc.spec.selector, rc.metadata.labels, rc.status.replicas) == (1, {"app": "c"}, {"app": "c"}, 0)
    assert rc.spec.template.spec.restart_policy == "Always"
    scale = core.read_namespaced_replication_controller_scale("client-rc", "default")
    assert (scale.spec.replicas, scale.status.selector) == (1, "app=c")
    assert core.patch_namespaced_replication_controller_scale("client-rc", "default", {"spec": {"replicas": 5}}).spec.replicas == 5
    pod_template = core.create_namespaced_pod_template("default", {"metadata": {"name": "client-pt"}, "template": template})
    assert pod_template.template.spec.dns_policy == "ClusterFirst"
    limits = core.create_namespaced_limit_range("default", {"metadata": {"name": "client-lr"}, "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}}]}})
    assert (limits.spec.limits[0].default, limits.spec.limits[0].default_request) == ({"memory": "1Gi"}, {"memory": "1Gi"})
    quota = core.create_namespaced_resource_quota("default", {"metadata": {"name": "client-quota"}, "spec": {"hard": {"pods": "3"}}})
    assert quota.spec.hard == {"pods": "3"} and quota.status is None
    revision = apps.create_namespaced_controller_revision("default", {"metadata": {"name": "client-rev"}, "revision": 3, "data": {"a": {"b": 1}}})
    assert (revision.revision, revision.data) == (3, {"a": {"b": 1}})


def test_the_client_meets_kubes_validation(core, apps):
    message = invalid(lambda: core.create_namespaced_persistent_volume_claim("default", {"metadata": {"name": "bad-claim"}, "spec": {"resources": {}}}))
    assert "spec.accessModes: Required value: at least 1 access mode is required" in message and "spec.resources[storage]: Required value" in message
    assert "must specify a volume type" in invalid(lambda: core.create_persistent_volume({"metadata": {"name": "bad-pv"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}}))
    body = {"metadata": {"name": "bad-rc"}, "spec": {"selector": {"app": "x"}, "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": [{"name": "a", "image": "b"}]}}}}
    assert "`selector` does not match template `labels`" in invalid(lambda: core.create_namespaced_replication_controller("default", body))
    assert "must be greater than or equal to 0" in invalid(lambda: core.create_namespaced_resource_quota("default", {"metadata": {"name": "bad-q"}, "spec": {"hard": {"pods": "-1"}}}))
    apps.create_namespaced_controller_revision("default", {"metadata": {"name": "frozen"}, "revision": 1, "data": {"a": 1}})
    assert "field is immutable" in invalid(lambda: apps.patch_namespaced_controller_revision("frozen", "default", {"data": {"a": 2}}))


def test_kubectl_delete_of_an_unused_claim_and_volume_returns_once_they_are_gone(live, kubectl):
    kubectl("apply", "-f", "-", stdin=MANIFESTS.split("---")[0].replace("name: data", "name: short-lived"))
    assert 'persistentvolumeclaim "short-lived" deleted' in kubectl("delete", "pvc", "short-lived", "--timeout=10s").stdout
    assert kubectl("get", "pvc", "short-lived", check=False).returncode != 0
