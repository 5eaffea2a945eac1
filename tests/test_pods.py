"""Pods in process: device-claim validation, what an update may change, binding, graceful
deletion, and the garbage collector's finalizers a DELETE's propagationPolicy adds."""

from __future__ import annotations

import orjson
import pytest

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry.options import DeleteOptions, WriteOptions


@pytest.fixture
def server():
    return app_.build(clock=FakeClock(), uids=SequentialUIDs())


@pytest.fixture
def pods(server):
    return server.types.by_kind("", "v1", "Pod")


def pod(name="p", claims=None, devices=None, **spec):
    container = {"name": "c", "image": "pause"}
    if devices is not None:
        container["devices"] = [{"name": d} for d in devices]
    body = {"metadata": {"name": name}, "spec": {"containers": [container], **spec}}
    if claims is not None:
        body["spec"]["deviceClaims"] = claims
    return body


def causes(exc: errors.StatusError) -> list[str]:
    return [f'{c["field"]}: {c["message"]}' for c in exc.details["causes"]]


def create(server, pods, body):
    return orjson.loads(server.registry.create(pods, "default", body, WriteOptions()).raw)


def test_each_claim_source_is_accepted(server, pods):
    claims = [
        {"name": "a", "claimName": "shared"},
        {"name": "b", "claimTemplateName": "tpl"},
        {"name": "c", "claim": {"claims": [{"deviceClass": "x"}]}},
    ]
    created = create(server, pods, pod(claims=claims, devices=["a", "b", "c"]))
    assert [e["name"] for e in created["spec"]["deviceClaims"]] == ["a", "b", "c"]


@pytest.mark.parametrize(
    "claims, devices, expected",
    [
        ([{"name": "a"}], None, ["spec.deviceClaims[0]: Invalid value: {\"name\":\"a\"}: must specify one of: `claim`, `claimName`, `claimTemplateName`"]),
        (
            [{"name": "a", "claimName": "x", "claimTemplateName": "y"}],
            None,
            ['spec.deviceClaims[0]: Invalid value: {"name":"a","claimName":"x","claimTemplateName":"y"}: at most one of `claim`, `claimName` or `claimTemplateName` may be specified'],
        ),
        ([{"name": "a", "claimName": "x"}, {"name": "a", "claimName": "y"}], None, ['spec.deviceClaims[1].name: Duplicate value: "a"']),
        ([{"name": "A_b", "claimName": "x"}], None, None),  # a DNS label: checked, message from names
        ([{"name": "a", "claimName": "Not_A_Name"}], None, None),
        ([{"name": "a", "claimName": "x"}], ["b"], ['spec.containers[0].devices[0].name: Not found: "b": must be one of the names in pod.spec.deviceClaims']),
        (None, ["b"], ['spec.containers[0].devices[0].name: Not found: "b": no claims defined in pod.spec.deviceClaims']),
        ([{"name": "a", "claimName": "x"}], ["a", "a"], ['spec.containers[0].devices[1].name: Duplicate value: "a"']),
    ],
)
def test_device_claims_are_validated_with_field_paths(server, pods, claims, devices, expected):
    with pytest.raises(errors.StatusError) as caught:
        create(server, pods, pod(claims=claims, devices=devices))
    assert caught.value.code == 422
    found = causes(caught.value)
    if expected is None:
        assert found and all(f.startswith("spec.deviceClaims[0].") and "Invalid value" in f for f in found)
    else:
        assert found == expected
    assert server.registry.store.get(pods.group_resource, "default", "p") is None


def test_an_update_may_change_images_and_add_tolerations_only(server, pods):
    created = create(server, pods, pod(claims=[{"name": "a", "claimName": "x"}]))
    changed = {**created, "spec": {**created["spec"], "containers": [{**created["spec"]["containers"][0], "image": "pause:2"}]}}
    changed["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    updated = orjson.loads(server.registry.update(pods, "default", "p", changed, WriteOptions()).raw)
    assert updated["spec"]["containers"][0]["image"] == "pause:2"
    for field, value in (("deviceClaims", [{"name": "a", "claimName": "y"}]), ("nodeName", "n1")):
        body = {**updated, "spec": {**updated["spec"], field: value}}
        with pytest.raises(errors.StatusError) as caught:
            server.registry.update(pods, "default", "p", body, WriteOptions())
        assert caught.value.code == 422
        (message,) = causes(caught.value)
        assert message.startswith("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`")
        assert message.endswith(f"this update changes spec.{field}")


def test_binding_sets_the_node_and_the_condition_once(server, pods):
    create(server, pods, pod())
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    answer = orjson.loads(server.registry.bind(pods, "default", "p", body, WriteOptions()))
    assert answer == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    bound = server.registry.get(pods, "default", "p").load()
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["status"]["conditions"] == [{"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2024-01-01T00:00:00Z"}]
    with pytest.raises(errors.StatusError) as caught:
        server.registry.bind(pods, "default", "p", {**body, "target": {"kind": "Node", "name": "n2"}}, WriteOptions())
    assert (caught.value.code, caught.value.reason) == (409, "Conflict")
    assert caught.value.message == 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'


@pytest.mark.parametrize(
    "body, code, message",
    [
        ({"metadata": {"name": "other"}, "target": {"name": "n"}}, 400, "name in URL does not match name in Binding object"),
        ({"target": {"kind": "Pod", "name": "n"}}, 422, 'Binding "p" is invalid: target.kind: Invalid value: "Pod": must be empty or \'Node\''),
        ({"target": {}}, 422, 'Binding "p" is invalid: target.name: Required value'),
        ({"metadata": {"uid": "nope"}, "target": {"name": "n"}}, 409, None),
    ],
)
def test_a_bad_binding_is_refused_and_changes_nothing(server, pods, body, code, message):
    rv = create(server, pods, pod())["metadata"]["resourceVersion"]
    with pytest.raises(errors.StatusError) as caught:
        server.registry.bind(pods, "default", "p", body, WriteOptions())
    assert caught.value.code == code
    if message:
        assert caught.value.message == message
    assert server.registry.get(pods, "default", "p").load()["metadata"]["resourceVersion"] == rv


def test_a_bound_pod_is_deleted_gracefully_only_when_a_kubelet_runs(server, pods):
    create(server, pods, pod("now", nodeName="n1"))
    _, gone = server.registry.delete(pods, "default", "now", DeleteOptions())
    assert gone
    server.registry.kubelet = True
    create(server, pods, pod("unbound"))
    assert server.registry.delete(pods, "default", "unbound", DeleteOptions())[1]
    create(server, pods, pod("graceful", nodeName="n1", terminationGracePeriodSeconds=20))
    written, gone = server.registry.delete(pods, "default", "graceful", DeleteOptions())
    meta = orjson.loads(written.raw)["metadata"]
    assert not gone and meta["deletionGracePeriodSeconds"] == 20 and meta["deletionTimestamp"] == "2024-01-01T00:00:20Z"
    shorter, gone = server.registry.delete(pods, "default", "graceful", DeleteOptions(grace_period_seconds=5))
    assert not gone and orjson.loads(shorter.raw)["metadata"]["deletionGracePeriodSeconds"] == 5
    assert server.registry.delete(pods, "default", "graceful", DeleteOptions(grace_period_seconds=0))[1]


@pytest.mark.parametrize(
    "policy, finalizers",
    [
        ("Foreground", ["example.com/keep", "foregroundDeletion"]),
        ("Orphan", ["example.com/keep", "orphan"]),
        ("Background", ["example.com/keep"]),
        ("", ["example.com/keep", "orphan"]),
    ],
)
def test_propagation_policy_sets_the_garbage_collectors_finalizers(server, pods, policy, finalizers):
    body = pod()
    body["metadata"]["finalizers"] = ["example.com/keep", "orphan"] if not policy else ["example.com/keep"]
    create(server, pods, body)
    written, gone = server.registry.delete(pods, "default", "p", DeleteOptions(propagation_policy=policy))
    assert not gone
    assert orjson.loads(written.raw)["metadata"]["finalizers"] == finalizers


def test_foreground_on_an_object_without_finalizers_waits_for_the_collector(server, pods):
    create(server, pods, pod())
    written, gone = server.registry.delete(pods, "default", "p", DeleteOptions(propagation_policy="Foreground"))
    assert not gone and orjson.loads(written.raw)["metadata"]["finalizers"] == ["foregroundDeletion"]
    # asking again with Background drops the collector's finalizer: nothing holds the pod any more
    _, gone = server.registry.delete(pods, "default", "p", DeleteOptions(propagation_policy="Background"))
    assert gone and server.registry.store.get(pods.group_resource, "default", "p") is None
