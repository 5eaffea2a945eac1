"""core/v1 PersistentVolumeClaim, PersistentVolume, Endpoints, ReplicationController, PodTemplate,
LimitRange, ResourceQuota and apps/v1 ControllerRevision in-process: kube's defaults, the
validation clients meet in kube's words, the printers' cells and the RC's scale subresource."""

from __future__ import annotations

from datetime import datetime, timezone

import orjson
import pytest

from mockapi import app, errors
from mockapi.registry import printers
from mockapi.registry.options import WriteOptions

NOW = datetime(2024, 5, 1, 10, 0, 0, tzinfo=timezone.utc)
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "a", "image": "busybox"}]}}


@pytest.fixture(scope="module")
def registry():
    return app.build().registry


def rt(registry, kind, group=""):
    return registry.types.by_kind(group, "v1", kind)


def create(registry, kind, obj, group=""):
    kind_type = rt(registry, kind, group)
    return orjson.loads(registry.create(kind_type, "default" if kind_type.namespaced else "", obj, WriteOptions()).raw)


def update(registry, kind, obj, group=""):
    kind_type = rt(registry, kind, group)
    namespace = "default" if kind_type.namespaced else ""
    return orjson.loads(registry.update(kind_type, namespace, obj["metadata"]["name"], obj, WriteOptions()).raw)


def refused(call) -> str:
    with pytest.raises(errors.StatusError) as caught:
        call()
    assert caught.value.code == 422, caught.value
    return caught.value.message


def claim(name, **spec):
    return {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}


def volume(name, **spec):
    return {"metadata": {"name": name}, "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}, **spec}}


# ------------------------------------------------------------------------- PVC and PV
def test_a_claim_gets_kubes_defaults(registry):
    created = create(registry, "PersistentVolumeClaim", claim("c-defaults"))
    assert created["spec"]["volumeMode"] == "Filesystem" and created["status"] == {"phase": "Pending"}


def test_a_claim_needs_an_access_mode_and_a_storage_request(registry):
    body = {"metadata": {"name": "c-bad"}, "spec": {"accessModes": [], "resources": {"requests": {"cpu": "1"}}}}
    message = refused(lambda: create(registry, "PersistentVolumeClaim", body))
    assert "spec.accessModes: Required value: at least 1 access mode is required" in message
    assert "spec.resources[storage]: Required value" in message
    message = refused(lambda: create(registry, "PersistentVolumeClaim", claim("c-mode", accessModes=["ReadWriteSometimes"])))
    assert 'spec.accessModes: Unsupported value: "ReadWriteSometimes"' in message


def test_a_claims_spec_is_immutable_but_for_binding_and_a_bound_claims_requests(registry):
    created = create(registry, "PersistentVolumeClaim", claim("c-update"))
    created["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert "spec: Forbidden: spec is immutable after creation" in refused(lambda: update(registry, "PersistentVolumeClaim", created))
    created["spec"]["resources"]["requests"]["storage"] = "1Gi"
    created["spec"]["volumeName"] = "pv-1"  # binding: unset to set
    created = update(registry, "PersistentVolumeClaim", created)
    kind_type = rt(registry, "PersistentVolumeClaim")
    created["status"] = {"phase": "Bound"}
    created = orjson.loads(registry.update(kind_type, "default", "c-update", created, WriteOptions(), subresource="status").raw)
    created["spec"]["resources"]["requests"]["storage"] = "2Gi"  # expansion of a bound claim
    created = update(registry, "PersistentVolumeClaim", created)
    created["spec"]["storageClassName"] = "fast"
    assert "spec: Forbidden: spec is immutable after creation" in refused(lambda: update(registry, "PersistentVolumeClaim", created))
    created["spec"].pop("storageClassName")
    created["spec"]["volumeName"] = "pv-2"
    assert "spec: Forbidden" in refused(lambda: update(registry, "PersistentVolumeClaim", created))


def test_claims_and_volumes_carry_their_protection_finalizer_until_deleted_unused(registry):
    from mockapi.registry.options import DeleteOptions

    claims, volumes = rt(registry, "PersistentVolumeClaim"), rt(registry, "PersistentVolume")
    assert create(registry, "PersistentVolumeClaim", claim("c-free"))["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    registry.delete(claims, "default", "c-free", DeleteOptions())
    assert registry.store.get(claims.group_resource, "default", "c-free") is None  # not in use: gone at once
    create(registry, "PersistentVolumeClaim", claim("c-used"))
    create(registry, "Pod", {"metadata": {"name": "uses-claim"}, "spec": {"nodeName": "node-1",
        "containers": [{"name": "a", "image": "busybox"}], "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c-used"}}]}})  # fmt: skip
    registry.delete(claims, "default", "c-used", DeleteOptions())
    held = orjson.loads(registry.get(claims, "default", "c-used").raw)
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert create(registry, "PersistentVolume", volume("pv-free"))["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    registry.delete(volumes, "", "pv-free", DeleteOptions())
    assert registry.store.get(volumes.group_resource, "", "pv-free") is None


def test_a_volume_gets_kubes_defaults(registry):
    created = create(registry, "PersistentVolume", volume("pv-defaults"))
    assert (created["spec"]["persistentVolumeReclaimPolicy"], created["spec"]["volumeMode"], created["status"]) == ("Retain", "Filesystem", {"phase": "Pending"})


def test_a_volume_needs_capacity_modes_and_exactly_one_source(registry):
    message = refused(lambda: create(registry, "PersistentVolume", {"metadata": {"name": "pv-empty"}, "spec": {}}))
    assert "spec.accessModes: Required value" in message and "spec.capacity: Required value" in message
    assert "spec: Required value: must specify a volume type" in message
    two = volume("pv-two", nfs={"server": "nfs", "path": "/x"})
    assert "spec.nfs: Forbidden: may not specify more than 1 volume type" in refused(lambda: create(registry, "PersistentVolume", two))
    policy = volume("pv-policy", persistentVolumeReclaimPolicy="Keep")
    assert 'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep"' in refused(lambda: create(registry, "PersistentVolume", policy))


def test_a_volumes_source_cannot_change(registry):
    created = create(registry, "PersistentVolume", volume("pv-source"))
    created["spec"]["hostPath"]["path"] = "/elsewhere"
    assert "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation" in refused(
        lambda: update(registry, "PersistentVolume", created))


# ------------------------------------------------------------------------------- Endpoints
def test_endpoints_ports_default_to_tcp_and_are_checked(registry):
    created = create(registry, "Endpoints", {"metadata": {"name": "ep"}, "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]})
    assert created["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    bad = {"metadata": {"name": "ep-bad"}, "subsets": [{"addresses": [{"ip": "not-an-ip"}], "ports": [{"port": 0, "name": "a"}, {"port": 81}]}]}
    message = refused(lambda: create(registry, "Endpoints", bad))
    assert 'subsets[0].addresses[0].ip: Invalid value: "not-an-ip": must be a valid IP address' in message
    assert "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive" in message
    assert "subsets[0].ports[1].name: Required value" in message


# ------------------------------------------------------------------- ReplicationController
def test_a_replication_controller_takes_selector_labels_and_replicas_from_its_template(registry):
    created = create(registry, "ReplicationController", {"metadata": {"name": "rc-defaults"}, "spec": {"template": TEMPLATE}})
    assert created["spec"]["selector"] == {"app": "web"} and created["metadata"]["labels"] == {"app": "web"}
    assert created["spec"]["replicas"] == 1 and created["status"] == {"replicas": 0} and created["metadata"]["generation"] == 1
    assert created["spec"]["template"]["spec"]["restartPolicy"] == "Always"  # the pod template's defaults


def test_a_replication_controllers_selector_must_select_its_template(registry):
    body = {"metadata": {"name": "rc-bad"}, "spec": {"selector": {"app": "other"}, "replicas": -1, "template": TEMPLATE}}
    message = refused(lambda: create(registry, "ReplicationController", body))
    assert "spec.template.metadata.labels: Invalid value" in message and "`selector` does not match template `labels`" in message
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in message
    unlabelled = {"metadata": {"name": "rc-none"}, "spec": {"template": {"spec": TEMPLATE["spec"]}}}
    assert "spec.selector: Required value" in refused(lambda: create(registry, "ReplicationController", unlabelled))
    never = {"metadata": {"name": "rc-never"}, "spec": {"template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}}
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"' in refused(
        lambda: create(registry, "ReplicationController", never))


def test_a_replication_controller_scales_with_its_selector_as_a_string(registry):
    kind_type = rt(registry, "ReplicationController")
    create(registry, "ReplicationController", {"metadata": {"name": "rc-scale"}, "spec": {"template": TEMPLATE}})
    scale = registry.get_scale(kind_type, "default", "rc-scale")
    assert (scale["spec"], scale["status"]) == ({"replicas": 1}, {"replicas": 0, "selector": "app=web"})
    scaled = registry.update_scale(kind_type, "default", "rc-scale", {"spec": {"replicas": 4}}, WriteOptions())
    assert scaled["spec"] == {"replicas": 4}
    assert orjson.loads(registry.get(kind_type, "default", "rc-scale").raw)["metadata"]["generation"] == 2


# -------------------------------------------------------------------------------- LimitRange
def test_a_container_limit_range_item_defaults_its_limits_and_requests(registry):
    body = {"metadata": {"name": "lr"}, "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}, "default": {"memory": "1Gi"}},
        {"type": "Pod", "max": {"cpu": "4"}},
    ]}}  # fmt: skip
    container, pod = create(registry, "LimitRange", body)["spec"]["limits"]
    assert container["default"] == {"cpu": "2", "memory": "1Gi"}
    assert container["defaultRequest"] == {"cpu": "2", "memory": "1Gi"}
    assert "default" not in pod and "defaultRequest" not in pod


def test_a_limit_range_keeps_its_bounds_in_order(registry):
    body = {"metadata": {"name": "lr-bad"}, "spec": {"limits": [
        {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
        {"type": "Pod", "default": {"cpu": "1"}},
        {"type": "Container"},
    ]}}  # fmt: skip
    message = refused(lambda: create(registry, "LimitRange", body))
    assert 'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1' in message
    assert "spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod'" in message
    assert 'spec.limits[2].type: Duplicate value: "Container"' in message


# ----------------------------------------------------------------------------- ResourceQuota
def test_a_quota_refuses_negative_limits_and_unknown_scopes(registry):
    created = create(registry, "ResourceQuota", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "10"}}})
    assert "status" not in created  # no quota controller fills it
    body = {"metadata": {"name": "q-bad"}, "spec": {"hard": {"cpu": "-1"}, "scopes": ["Sometimes"]}}
    message = refused(lambda: create(registry, "ResourceQuota", body))
    assert 'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0' in message
    assert 'spec.scopes[0]: Invalid value: "Sometimes": unsupported scope' in message


# ------------------------------------------------------------------------ ControllerRevision
def test_a_controller_revisions_data_is_immutable_and_its_revision_not_negative(registry):
    created = create(registry, "ControllerRevision", {"metadata": {"name": "rev"}, "revision": 1, "data": {"spec": {"x": 1}}}, "apps")
    assert created["data"] == {"spec": {"x": 1}}  # kept whole: any embedded object
    created["revision"] = 2
    created = update(registry, "ControllerRevision", created, "apps")
    created["data"] = {"spec": {"x": 2}}
    assert "data: Invalid value" in refused(lambda: update(registry, "ControllerRevision", created, "apps"))
    negative = {"metadata": {"name": "rev-neg"}, "revision": -1}
    assert "revision: Invalid value: -1: must be greater than or equal to 0" in refused(lambda: create(registry, "ControllerRevision", negative, "apps"))


# ---------------------------------------------------------------------------------- printers
def cells(registry, kind, obj, group=""):
    _, row = printers.table_for(rt(registry, kind, group))
    obj = {"metadata": {"name": "x", "creationTimestamp": "2024-05-01T09:00:00Z", **obj.pop("metadata", {})}, **obj}
    return row(obj, NOW)


def test_claim_and_volume_rows_are_kubes(registry):
    bound = {"spec": {"volumeName": "pv", "storageClassName": "fast", "volumeMode": "Block"},
             "status": {"phase": "Bound", "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"]}}  # fmt: skip
    assert cells(registry, "PersistentVolumeClaim", bound) == ["x", "Bound", "pv", "5Gi", "RWO,RWX", "fast", "<unset>", "60m", "Block"]
    pv = {"spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadOnlyMany"], "persistentVolumeReclaimPolicy": "Delete",
                   "claimRef": {"namespace": "ns", "name": "c"}}, "status": {"phase": "Bound"}}  # fmt: skip
    assert cells(registry, "PersistentVolume", pv) == ["x", "5Gi", "ROX", "Delete", "Bound", "ns/c", "", "<unset>", "", "60m", "<unset>"]


def test_endpoints_rows_show_three_pairs_then_how_many_more(registry):
    subsets = [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 4)], "ports": [{"port": 80}, {"port": 443}]}]
    assert cells(registry, "Endpoints", {"subsets": subsets})[1] == "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 3 more..."
    assert cells(registry, "Endpoints", {})[1] == "<none>"
    assert cells(registry, "Endpoints", {"subsets": [{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]}]})[1] == "[fd00::1]:80"


def test_the_other_rows_are_kubes(registry):
    rc = {"spec": {"replicas": 3, "selector": {"b": "2", "a": "1"}, "template": TEMPLATE}, "status": {"replicas": 1, "readyReplicas": 1}}
    assert cells(registry, "ReplicationController", rc) == ["x", 3, 1, 1, "60m", "a", "busybox", "a=1,b=2"]
    assert cells(registry, "PodTemplate", {"template": TEMPLATE}) == ["x", "a", "busybox", "app=web"]
    quota = {"status": {"hard": {"pods": "10", "limits.cpu": "4", "cpu": "2"}, "used": {"pods": "1"}}}
    assert cells(registry, "ResourceQuota", quota) == ["x", "60m", "cpu: 0/2, pods: 1/10", "limits.cpu: 0/4"]
    owned = {"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}]}, "revision": 2}
    assert cells(registry, "ControllerRevision", owned, "apps") == ["x", "statefulset.apps/db", 2, "60m"]
    assert cells(registry, "ControllerRevision", {"revision": 1}, "apps")[1] == "<none>"
    assert cells(registry, "LimitRange", {}) == ["x", "2024-05-01T09:00:00Z"]


def test_a_terminating_namespace_lets_its_claims_go(registry):
    from mockapi.registry.options import DeleteOptions

    namespaces = rt(registry, "Namespace")
    registry.create(namespaces, "", {"metadata": {"name": "doomed"}}, WriteOptions())
    claims = rt(registry, "PersistentVolumeClaim")
    registry.create(claims, "doomed", claim("held"), WriteOptions())
    registry.create(rt(registry, "Pod"), "doomed", {"metadata": {"name": "p"}, "spec": {"nodeName": "node-1",
        "containers": [{"name": "a", "image": "busybox"}], "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "held"}}]}}, WriteOptions())  # fmt: skip
    registry.delete(namespaces, "", "doomed", DeleteOptions())
    assert registry.store.get(claims.group_resource, "doomed", "held") is None
