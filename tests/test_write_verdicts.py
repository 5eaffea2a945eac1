"""Create verdicts (registry/verdicts.py): a create that takes a remembered verdict answers exactly
as the full computation does — the stored bytes, errors, warnings — and a verdict is forgotten
when the schema it was made under changes."""

from __future__ import annotations

import copy
import random

import orjson
import pytest

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import serviceaccounts
from mockapi.registry.options import WriteOptions

DEVICES = "devmgmtproto.k8s.io"


def _server(*, remembering: bool):
    server = app_.build(clock=FakeClock(), uids=SequentialUIDs())
    if not remembering:
        server.registry.verdicts.take = lambda *args: None
        server.registry.verdicts.remember = lambda *args: None
    return server


def _pod(name: str, **spec) -> dict:
    return {
        "metadata": {"name": name, "labels": {"app": "web"}, "annotations": {"a": "b"}},
        "spec": {
            "containers": [{
                "name": "web", "image": "nginx:1.27",
                "ports": [{"name": "http", "containerPort": 80}],
                "resources": {"limits": {"cpu": "1", "memory": "64Mi"}},
                "readinessProbe": {"httpGet": {"port": 80}},
                "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            }],
            "volumes": [{"name": "config", "configMap": {"name": "c"}}],
            **spec,
        },
    }


def _bodies() -> list[tuple[str, str, str, dict]]:
    """(group, kind, namespace, body) of a series of creates: repeats, variants, key orders."""
    out = []
    for i in range(3):
        out.append(("", "Pod", "default", _pod(f"p{i}")))
        out.append(("", "Pod", "default", _pod(f"q{i}", automountServiceAccountToken=False)))
        spec_first = _pod(f"r{i}")
        out.append(("", "Pod", "default", {"spec": spec_first["spec"], "kind": "Pod", "metadata": spec_first["metadata"]}))
        with_status = _pod(f"s{i}")
        with_status["status"] = {"phase": "Running"}  # dropped by the strategy: not additions alone
        out.append(("", "Pod", "default", with_status))
        out.append((DEVICES, "DevicePool", "", {"metadata": {"name": f"pool{i}"}, "spec": {"driver": "d", "devices": [{"name": "a"}]}}))
        out.append((DEVICES, "DeviceClaim", "default", {"metadata": {"name": f"c{i}"}, "spec": {"claims": [{"deviceClass": "x"}]}}))
    return out


def _run(server, bodies) -> list[bytes]:
    serviceaccounts._rng.seed(7)  # the token volume's random name
    out = []
    for group, kind, namespace, body in bodies:
        rt = server.types.by_kind(group, "v1" if not group else "v1alpha1", kind)
        out.append(server.registry.create(rt, namespace, copy.deepcopy(body), WriteOptions()).raw)
    return out


def test_creates_that_take_a_verdict_store_exactly_what_the_full_path_stores():
    remembering, computing = _server(remembering=True), _server(remembering=False)
    bodies = _bodies()
    assert _run(remembering, bodies) == _run(computing, bodies)
    verdicts = remembering.registry.verdicts
    assert verdicts.hits == len(bodies) - 2 * len(verdicts) and len(verdicts) == 6  # kept from the second on


def test_a_verdict_that_was_more_than_additions_rebuilds_the_object_in_its_key_order():
    bodies = []
    for i in range(3):
        body = _pod(f"p{i}")  # status first, then changed by the strategy: the object's own order kept
        bodies.append(("", "Pod", "default", {"status": {"phase": "Running"}, "spec": body["spec"], "metadata": body["metadata"]}))
    remembering = _server(remembering=True)
    stored = _run(remembering, bodies)
    assert stored == _run(_server(remembering=False), bodies)
    assert list(orjson.loads(stored[2])) == ["status", "spec", "metadata", "apiVersion", "kind"]
    (verdict,) = remembering.registry.verdicts._table.values()
    assert verdict.additions is None and remembering.registry.verdicts.hits == 1


def _refusal(server, rt, namespace, body, opts) -> tuple:
    try:
        written = server.registry.create(rt, namespace, body, opts)
    except errors.StatusError as exc:
        return exc.code, exc.message, exc.details
    return written.raw, tuple(opts.warnings)


@pytest.mark.parametrize("meta, validation", [
    ({"name": "Bad_Name"}, "Warn"),
    ({"name": "ok", "labels": {"bad key!": "x"}}, "Warn"),
    ({"name": "ok", "bogus": 1}, "Strict"),
    ({"name": "ok", "bogus": 1}, "Warn"),
    ({"name": "ok", "finalizers": ["short"]}, "Warn"),
    ({"generateName": "g-"}, "Ignore"),
])
@pytest.mark.parametrize("group, kind, namespace", [("", "Pod", "default"), (DEVICES, "DeviceClaim", "default")])
def test_errors_and_warnings_after_a_remembered_verdict_are_the_full_paths(meta, validation, group, kind, namespace):
    remembering, computing = _server(remembering=True), _server(remembering=False)
    version = "v1" if not group else "v1alpha1"
    spec = _pod("x")["spec"] if kind == "Pod" else {"claims": [{"deviceClass": "x"}]}
    answers = []
    for server in (remembering, computing):
        rt = server.types.by_kind(group, version, kind)
        serviceaccounts._rng.seed(3)
        server.registry._rng.seed(3)  # generateName's suffix
        for name in ("first", "second"):  # a verdict is kept from the second clean create on
            server.registry.create(rt, namespace, {"metadata": {"name": name}, "spec": copy.deepcopy(spec)}, WriteOptions())
        body = {"metadata": copy.deepcopy(meta), "spec": copy.deepcopy(spec)}
        answers.append(_refusal(server, rt, namespace, body, WriteOptions(field_validation=validation)))
    assert len(remembering.registry.verdicts) == 1
    assert answers[0][0] != b"" and answers[0] == answers[1]
    assert remembering.registry.verdicts.hits == 1


def test_an_invalid_spec_is_never_remembered_and_refused_every_time():
    server = _server(remembering=True)
    pods = server.types.by_kind("", "v1", "Pod")
    for i in range(2):
        body = _pod(f"p{i}")
        body["spec"]["containers"][0]["ports"][0]["containerPort"] = 70000
        with pytest.raises(errors.StatusError) as refused:
            server.registry.create(pods, "default", body, WriteOptions())
        assert refused.value.code == 422
    assert len(server.registry.verdicts) == 0


def test_what_a_caller_or_admission_does_to_a_created_object_never_reaches_the_verdict():
    server = _server(remembering=True)
    pods = server.types.by_kind("", "v1", "Pod")
    server.registry.create(pods, "default", _pod("p"), WriteOptions())
    first = _pod("p0")
    server.registry.create(pods, "default", first, WriteOptions())  # the verdict is made of this one
    first["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "99"  # the caller's body, changed afterwards
    first["spec"]["enableServiceLinks"] = False
    first["status"]["phase"] = "Poisoned"
    second = orjson.loads(server.registry.create(pods, "default", _pod("p1"), WriteOptions()).raw)
    second["spec"]["tolerations"].append({"key": "mutated"})  # a verdict is copied out, never shared
    third = orjson.loads(server.registry.create(pods, "default", _pod("p2"), WriteOptions()).raw)
    assert server.registry.verdicts.hits == 2
    spec = third["spec"]
    assert spec["containers"][0]["resources"]["limits"]["cpu"] == "1" and spec["enableServiceLinks"] is True
    assert third["status"]["phase"] == "Pending"
    assert [t["key"] for t in spec["tolerations"]] == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    assert [v["name"].startswith("kube-api-access-") for v in spec["volumes"]] == [False, True]  # one token volume


def _crd(default: str) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer"}, "color": {"type": "string", "default": default}}}}}}}],
        },
    }


def test_a_changed_crd_schema_forgets_the_verdicts_made_under_the_old_one():
    server = _server(remembering=True)
    registry = server.registry
    crds = server.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    registry.create(crds, "", _crd("red"), WriteOptions())
    widgets = server.types.by_kind("example.com", "v1", "Widget")
    colors = [orjson.loads(registry.create(widgets, "default", {"metadata": {"name": f"w{i}"}, "spec": {"size": 1}}, WriteOptions()).raw)["spec"]["color"]
              for i in range(3)]
    assert colors == ["red", "red", "red"] and registry.verdicts.hits == 1
    current = orjson.loads(registry.get(crds, "", "widgets.example.com").raw)
    changed = _crd("blue")
    changed["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    registry.update(crds, "", "widgets.example.com", changed, WriteOptions())
    widgets = server.types.by_kind("example.com", "v1", "Widget")
    again = orjson.loads(registry.create(widgets, "default", {"metadata": {"name": "w9"}, "spec": {"size": 1}}, WriteOptions()).raw)
    assert again["spec"]["color"] == "blue"


def test_a_verdict_is_used_only_under_the_type_and_schema_it_was_made_under():
    server = _server(remembering=True)
    registry = server.registry
    pools = server.types.by_kind(DEVICES, "v1alpha1", "DevicePool")
    body = {"metadata": {"name": "p0"}, "spec": {"driver": "d", "devices": []}}
    registry.create(pools, "", copy.deepcopy(body), WriteOptions())
    registry.create(pools, "", {**copy.deepcopy(body), "metadata": {"name": "p1"}}, WriteOptions())

    def request():  # as create() has it when it looks the verdict up
        return {"metadata": {}, "spec": copy.deepcopy(body["spec"]), "apiVersion": f"{DEVICES}/v1alpha1", "kind": "DevicePool"}

    key = registry.verdicts.key(request())
    claims = server.types.by_kind(DEVICES, "v1alpha1", "DeviceClaim")
    assert registry.verdicts.take(claims, key, request()) is None
    assert registry.verdicts.take(pools, key, request()) is not None


def _deep(levels: int):
    value: object = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize("levels", [60, 92, 93, 94, 97, 98])
def test_the_depth_bound_after_a_verdict_is_the_full_paths(levels):
    """A verdict's fields are not encoded again for the stored-depth bound: the answer at the
    edge of the bound (a preserve-unknown-fields spec nested ``levels`` deep) is the same."""
    answers = []
    for server in (_server(remembering=True), _server(remembering=False)):
        crds = server.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
        crd = _crd("red")
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        server.registry.create(crds, "", crd, WriteOptions())
        widgets = server.types.by_kind("example.com", "v1", "Widget")
        for i in range(3):
            body = {"metadata": {"name": f"w{i}", "labels": {"a": "b"}}, "spec": _deep(levels)}
            answers.append(_refusal(server, widgets, "default", body, WriteOptions())[0])
    assert answers[:3] == answers[3:]


def test_an_update_leaving_the_validated_fields_as_stored_is_not_validated_by_the_kind_again(monkeypatch):
    from mockapi.registry import pods as pod_rules

    server = _server(remembering=True)
    registry, pods = server.registry, server.types.by_kind("", "v1", "Pod")
    calls = []
    validate = pod_rules.PodStrategy.validate
    monkeypatch.setattr(pod_rules.PodStrategy, "validate", lambda self, obj, old: calls.append(old is not None) or validate(self, obj, old))
    stored = orjson.loads(registry.create(pods, "default", _pod("p"), WriteOptions()).raw)
    stored["metadata"]["labels"]["app"] = "other"  # the spec as stored
    relabelled = orjson.loads(registry.update(pods, "default", "p", copy.deepcopy(stored), WriteOptions()).raw)
    assert calls == [False] and relabelled["metadata"]["labels"]["app"] == "other"
    relabelled["spec"]["containers"][0]["ports"][0]["containerPort"] = 70000  # a changed spec is validated
    with pytest.raises(errors.StatusError) as refused:
        registry.update(pods, "default", "p", relabelled, WriteOptions())
    assert calls == [False, True] and refused.value.code == 422


def test_an_update_whose_defaults_make_the_stored_spec_again_is_answered_as_when_validated(monkeypatch):
    """A PUT of the spec as the user wrote it (no server defaults): equal to the stored spec once
    defaulted, so the kind does not validate it again — and the answer is the validating one."""
    from mockapi.registry import pods as pod_rules

    answers, calls = [], []
    validate = pod_rules.PodStrategy.validate
    monkeypatch.setattr(pod_rules.PodStrategy, "validate", lambda self, obj, old: calls.append(old is not None) or validate(self, obj, old))
    for fields in (("spec",), None):
        monkeypatch.setattr(pod_rules.PodStrategy, "validated_fields", fields)
        server = _server(remembering=True)
        pods = server.types.by_kind("", "v1", "Pod")
        written = _pod("p", automountServiceAccountToken=False, serviceAccountName="default")
        stored = orjson.loads(server.registry.create(pods, "default", copy.deepcopy(written), WriteOptions()).raw)
        written["metadata"]["labels"]["app"] = "other"
        written["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
        answers.append(server.registry.update(pods, "default", "p", written, WriteOptions()).raw)
    assert calls == [False, False, True] and answers[0] == answers[1]
    assert orjson.loads(answers[0])["spec"] == stored["spec"]


def test_values_json_decoding_never_makes_are_not_known_by_their_json():
    """An in-process caller's datetime or str subclass would encode as a plain string: such a
    create takes the full path, as it would without verdicts."""
    import datetime

    from mockapi.registry.verdicts import Verdicts

    class Text(str):
        pass

    verdicts = Verdicts()
    assert verdicts.key({"metadata": {}, "spec": {"at": datetime.datetime(2024, 1, 1)}}) is None
    assert verdicts.key({"metadata": {}, "spec": {"name": Text("x")}}) is None
    assert verdicts.key({"metadata": {}, "spec": {"name": "x"}}).fields == b'{"spec":{"name":"x"}}'


def test_what_pod_admission_adds_nests_within_the_depth_its_strategy_declares():
    """PodStrategy.admission_depth bounds what a create's admission adds (the token volume and
    mounts, tolerations, pull secrets, priority): a settled create's depth bound relies on it."""
    from mockapi import decoding
    from mockapi.registry.pods import PodStrategy

    server = _server(remembering=False)
    accounts = server.types.by_kind("", "v1", "ServiceAccount")
    server.registry.create(accounts, "default", {"metadata": {"name": "pulls"}, "imagePullSecrets": [{"name": "registry"}]}, WriteOptions())
    pods = server.types.by_kind("", "v1", "Pod")
    body = {"metadata": {"name": "shallow"}, "spec": {"serviceAccountName": "pulls", "initContainers": [{"name": "i", "image": "busybox"}],
                                                      "containers": [{"name": "c", "image": "busybox"}]}}
    stored = orjson.loads(server.registry.create(pods, "default", body, WriteOptions()).raw)
    assert stored["spec"]["imagePullSecrets"] and stored["spec"]["tolerations"] and stored["spec"]["volumes"][0]["projected"]
    own = {key: value for key, value in stored.items() if key != "metadata"}
    assert not decoding.depth_exceeds(own, PodStrategy.admission_depth) and decoding.depth_exceeds(own, PodStrategy.admission_depth - 1)


def test_an_admission_depth_counts_only_from_the_class_that_defines_admit():
    from mockapi.registry import rest
    from mockapi.registry.pods import PodStrategy
    from mockapi.registry.strategy import Strategy

    class Plain(Strategy):
        pass

    class Admitting(Strategy):
        def admit(self, cluster, obj):
            obj["spec"] = {"deep": [[[[]]]]}

    class MorePod(PodStrategy):
        def admit(self, cluster, obj):
            super().admit(cluster, obj)

    assert [rest._admission_depth(kind) for kind in (Plain, Admitting, PodStrategy, MorePod)] == [0, None, 11, None]
