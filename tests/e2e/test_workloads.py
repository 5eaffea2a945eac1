"""apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet end to end: kubectl (apply, create
deployment, get, describe, scale, set image, apply --server-side) and the kubernetes client; kube's
defaults, selector rules, generation and the scale subresource. No controller runs them: status
stays kube's zero status."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.e2e

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}
MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.27", ports: [{containerPort: 80}]}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: pg, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {nodeSelector: {kubernetes.io/os: linux}, containers: [{name: a, image: busybox}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 2
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec: {containers: [{name: a, image: busybox}]}
"""


@pytest.fixture
def apps(api):
    return client.AppsV1Api(api)


def deployment(name="web", **spec):
    return {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE, **spec}}


def invalid(call) -> str:
    with pytest.raises(ApiException) as caught:
        call()
    assert caught.value.status == 422, caught.value.body
    return caught.value.body


def test_kubectl_apply_of_ordinary_manifests_and_kubes_columns(kubectl):
    kubectl("apply", "-f", "-", stdin=MANIFESTS)
    out = kubectl("get", "deploy,rs,sts,ds", "-o", "wide").stdout
    blocks = [block.splitlines() for block in out.strip().split("\n\n")]
    heads = [block[0].split() for block in blocks]
    assert heads[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert heads[1] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert heads[2] == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert heads[3] == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    rows = [block[1].split() for block in blocks]
    assert rows[0][:4] == ["deployment.apps/web", "0/1", "0", "0"] and rows[0][-3:] == ["nginx", "nginx:1.27", "app=web"]
    assert rows[1][:4] == ["replicaset.apps/rs", "2", "0", "0"]
    assert rows[2][:2] == ["statefulset.apps/db", "0/1"]
    assert rows[3][:7] == ["daemonset.apps/agent", "0", "0", "0", "0", "0", "kubernetes.io/os=linux"]


def test_kubes_defaults_appear(apps):
    created = apps.create_namespaced_deployment("default", deployment()).to_dict()
    spec = created["spec"]
    assert (spec["replicas"], spec["revision_history_limit"], spec["progress_deadline_seconds"]) == (1, 10, 600)
    assert spec["strategy"] == {"type": "RollingUpdate", "rolling_update": {"max_surge": "25%", "max_unavailable": "25%"}}
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restart_policy"], pod_spec["dns_policy"], pod_spec["scheduler_name"], pod_spec["termination_grace_period_seconds"]) == (
        "Always", "ClusterFirst", "default-scheduler", 30)
    assert created["metadata"]["generation"] == 1 and created["status"] == {k: None for k in created["status"]}
    sts = apps.create_namespaced_stateful_set("default", {"metadata": {"name": "db"}, "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}})
    assert (sts.spec.replicas, sts.spec.pod_management_policy, sts.spec.revision_history_limit) == (1, "OrderedReady", 10)
    assert (sts.spec.update_strategy.type, sts.spec.update_strategy.rolling_update.partition) == ("RollingUpdate", 0)
    assert (sts.spec.persistent_volume_claim_retention_policy.when_deleted, sts.spec.persistent_volume_claim_retention_policy.when_scaled) == ("Retain", "Retain")
    assert (sts.status.replicas, sts.status.available_replicas) == (0, 0)
    ds = apps.create_namespaced_daemon_set("default", {"metadata": {"name": "agent"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}})
    assert (ds.spec.update_strategy.rolling_update.max_unavailable, ds.spec.update_strategy.rolling_update.max_surge, ds.spec.revision_history_limit) == (1, 0, 10)
    assert (ds.status.desired_number_scheduled, ds.status.number_ready) == (0, 0)
    rs = apps.create_namespaced_replica_set("default", {"metadata": {"name": "rs"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}})
    assert (rs.spec.replicas, rs.status.replicas) == (1, 0)


def test_the_selector_must_select_the_template_and_cannot_change(apps, http):
    missing = http.post("/apis/apps/v1/namespaces/default/deployments", json={"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {"template": TEMPLATE}})
    assert missing.status_code == 422 and "spec.selector: Required value" in missing.json()["message"]
    body = invalid(lambda: apps.create_namespaced_deployment("default", deployment(selector={"matchLabels": {"app": "other"}})))
    assert "spec.template.metadata.labels: Invalid value" in body and "`selector` does not match template `labels`" in body
    assert "empty selector is invalid for deployment" in invalid(lambda: apps.create_namespaced_deployment("default", deployment(selector={})))
    expressions = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}
    apps.create_namespaced_deployment("default", deployment(selector=expressions))
    body = invalid(lambda: apps.patch_namespaced_deployment("web", "default", {"spec": {"selector": {"matchLabels": {"app": "web"}}}}))
    assert "spec.selector: Invalid value" in body and "field is immutable" in body
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in invalid(lambda: apps.create_namespaced_deployment("default", deployment("neg", replicas=-1)))
    never = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}
    assert 'spec.template.spec.restartPolicy: Unsupported value: \\"Never\\": supported values: \\"Always\\"' in invalid(
        lambda: apps.create_namespaced_deployment("default", deployment("never", template=never)))


def test_generation_counts_spec_changes_and_status_writes_do_not_touch_the_spec(apps, http):
    apps.create_namespaced_deployment("default", deployment())
    apps.patch_namespaced_deployment("web", "default", {"metadata": {"labels": {"a": "b"}}})
    assert apps.read_namespaced_deployment("web", "default").metadata.generation == 1
    apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 4}})
    assert apps.read_namespaced_deployment("web", "default").metadata.generation == 2
    answer = http.patch("/apis/apps/v1/namespaces/default/deployments/web/status", json={"status": {"observedGeneration": 2, "readyReplicas": 4, "replicas": 4}, "spec": {"replicas": 9}},
                        headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    assert answer.status_code == 200, answer.text
    assert (answer.json()["spec"]["replicas"], answer.json()["status"]["observedGeneration"], answer.json()["metadata"]["generation"]) == (4, 2, 2)


def test_kubectl_create_deployment_scale_set_image_and_describe(kubectl, apps):
    kubectl("create", "deployment", "cd", "--image=nginx", "--port=80", "--replicas=3")
    created = apps.read_namespaced_deployment("cd", "default")
    assert created.spec.selector.match_labels == {"app": "cd"} and created.spec.template.spec.containers[0].ports[0].container_port == 80
    assert "deployment.apps/cd scaled" in kubectl("scale", "deployment", "cd", "--replicas=5").stdout
    kubectl("scale", "deployment", "cd", "--current-replicas=5", "--replicas=2")
    kubectl("set", "image", "deployment/cd", "nginx=nginx:1.27")
    after = apps.read_namespaced_deployment("cd", "default")
    assert (after.spec.replicas, after.spec.template.spec.containers[0].image, after.metadata.generation) == (2, "nginx:1.27", 4)
    described = kubectl("describe", "deployment", "cd").stdout
    assert "Replicas:               2 desired | 0 updated | 0 total | 0 available | 0 unavailable" in described
    assert "RollingUpdateStrategy:  25% max unavailable, 25% max surge" in described


def test_the_scale_subresource_reads_and_writes_spec_replicas(apps, http):
    apps.create_namespaced_deployment("default", deployment(replicas=3))
    scale = apps.read_namespaced_deployment_scale("web", "default")
    assert (scale.kind, scale.api_version, scale.spec.replicas, scale.status.replicas, scale.status.selector) == ("Scale", "autoscaling/v1", 3, 0, "app=web")
    scale.spec.replicas = 7
    assert apps.replace_namespaced_deployment_scale("web", "default", scale).spec.replicas == 7
    stale = {"metadata": {"name": "web", "resourceVersion": scale.metadata.resource_version}, "spec": {"replicas": 1}}
    assert http.put("/apis/apps/v1/namespaces/default/deployments/web/scale", json=stale).status_code == 409
    negative = http.patch("/apis/apps/v1/namespaces/default/deployments/web/scale", json={"spec": {"replicas": -2}}, headers={"Content-Type": "application/merge-patch+json"})
    assert negative.status_code == 422 and "spec.replicas: Invalid value: -2: must be greater than or equal to 0" in negative.json()["message"]
    discovery = http.get("/apis/apps/v1").json()
    entry = next(r for r in discovery["resources"] if r["name"] == "deployments/scale")
    assert (entry["group"], entry["version"], entry["kind"]) == ("autoscaling", "v1", "Scale")
    assert not any(r["name"] == "daemonsets/scale" for r in discovery["resources"])


def test_server_side_apply_creates_and_updates_a_deployment(kubectl, apps):
    first = MANIFESTS.split("---")[0]
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=first).stdout
    kubectl("apply", "--server-side", "-f", "-", stdin=first.replace("nginx:1.27", "nginx:1.28"))
    deployed = apps.read_namespaced_deployment("web", "default")
    assert deployed.spec.template.spec.containers[0].image == "nginx:1.28" and deployed.metadata.generation == 2
