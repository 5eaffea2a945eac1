"""A merge patch writes from one load of the stored object, and the object it writes shares with that
load the top-level fields the patch leaves alone (``rest.Registry._shares_untouched``). Two things
must hold: nothing on the update path changes a shared field in place (the stored object's load is
as it was after the write), and every answer is the two-load path's, byte for byte."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import pods, rest
from mockapi.registry.options import WriteOptions

MERGE = rest.MERGE_PATCH

_POD = {"metadata": {"name": "p", "labels": {"app": "a"}, "annotations": {"note": "x"}},
        "spec": {"automountServiceAccountToken": False, "priority": 0,
                 "containers": [{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80}]}]}}
_CONFIGMAP = {"metadata": {"name": "p", "labels": {"app": "a"}}, "data": {"a": "1", "b": "2"}}
_CLAIM = {"metadata": {"name": "p"}, "spec": {"claims": [{"deviceClass": "gpu", "limits": {"count": 1}}]}}
_DEPLOYMENT = {"metadata": {"name": "p"}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {
    "metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}

# (group, version, kind, namespace, body, merge patches as (subresource, document))
KINDS = {
    "pod": ("", "v1", "Pod", "default", _POD, [
        ("", {"metadata": {"labels": {"app": "b"}}}),
        ("", {"metadata": {"labels": {"app": None, "tier": "web"}, "annotations": None}}),
        ("", {"metadata": {"finalizers": ["example.com/f"]}}),
        ("", {"metadata": {"finalizers": None}}),
        ("", {"spec": {"activeDeadlineSeconds": 30}}),
        ("", {"spec": {"containers": [{"name": "c", "image": "nginx:2", "ports": [{"containerPort": 80, "protocol": ""}]}]}}),
        ("", {"spec": {"containers": [{"name": "c", "image": 7}]}}),  # a type error: 400 from both
        ("", {"status": {"phase": "Running"}}),  # the main resource leaves status alone
        ("status", {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
        ("status", {"status": {"conditions": None}, "metadata": {"labels": {"via": "status"}}}),
        ("", {"metadata": {"name": "other"}}),  # a rename: 400
        ("", {}),
    ]),
    "configmap": ("", "v1", "ConfigMap", "default", _CONFIGMAP, [
        ("", {"data": {"a": "3"}}),
        ("", {"data": {"b": None, "c": "4"}, "metadata": {"labels": {"app": "b"}}}),
        ("", {"binaryData": {"k": "aGk="}}),
        ("", {"metadata": {"annotations": {"n": "1"}}}),
        ("", {"immutable": False}),
        ("", {"data": "not a map"}),
    ]),
    "claim": ("devmgmtproto.k8s.io", "v1alpha1", "DeviceClaim", "default", _CLAIM, [
        ("", {"metadata": {"labels": {"x": "1"}}}),
        ("", {"spec": {"claims": [{"deviceClass": "gpu", "limits": {"count": 2}}]}}),
        ("", {"spec": {"unknownField": 1}}),
        ("status", {"status": {"nodeName": "n1", "allocations": [{"devicePoolName": "p", "deviceName": "d"}]}}),
        ("status", {"status": {"nodeName": "n2"}}),
        ("status", {"status": None}),
    ]),
    "node": ("", "v1", "Node", "", {"metadata": {"name": "p", "labels": {"zone": "a"}}, "spec": {"podCIDR": "10.0.0.0/24"}}, [
        ("", {"metadata": {"labels": {"zone": "b"}}}),
        ("", {"spec": {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]}}),
        ("", {"spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}}),
        ("status", {"status": {"capacity": {"cpu": "4"}, "conditions": [{"type": "Ready", "status": "True"}]}}),
    ]),
    "lease": ("coordination.k8s.io", "v1", "Lease", "default", {"metadata": {"name": "p"}, "spec": {"holderIdentity": "a"}}, [
        ("", {"spec": {"holderIdentity": "b", "leaseDurationSeconds": 15}}),
        ("", {"metadata": {"annotations": {"x": "y"}}}),
        ("", {"spec": {"leaseDurationSeconds": -1}}),
    ]),
    "deployment": ("apps", "v1", "Deployment", "default", _DEPLOYMENT, [  # its hooks are its own: two loads
        ("", {"metadata": {"labels": {"x": "1"}}}),
        ("", {"spec": {"replicas": 3}}),
        ("status", {"status": {"replicas": 1}}),
    ]),
}


def _server(*, sharing: bool):
    server = app_.build(clock=FakeClock(), uids=SequentialUIDs())
    if not sharing:
        server.registry._shares_untouched = lambda rt, old: False
    return server


def _outcome(call) -> tuple:
    try:
        return ("ok", call().raw)
    except errors.StatusError as exc:
        return ("error", exc.code, str(exc))


def _watch_shared_loads(server, checked: list) -> None:
    """After each update that writes from a shared load of the stored object, check that load is as
    it was before the update ran (also when the update is refused)."""
    update = server.registry._update

    def checking(rt, obj, current, opts, **kwargs):
        old = kwargs.get("old")
        if old is None:
            return update(rt, obj, current, opts, **kwargs)
        before = orjson.dumps(old)
        try:
            return update(rt, obj, current, opts, **kwargs)
        finally:
            checked.append(orjson.dumps(old) == before)

    server.registry._update = checking


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(sorted(KINDS)), picks=st.lists(st.integers(0, 11), min_size=1, max_size=6))
def test_a_sharing_merge_patch_answers_as_two_loads_do_and_never_changes_the_stored_load(kind, picks):
    group, version, kind_name, namespace, body, patches = KINDS[kind]
    sharing, reference = _server(sharing=True), _server(sharing=False)
    checked: list = []
    _watch_shared_loads(sharing, checked)
    rt = sharing.types.by_kind(group, version, kind_name)
    assert rt == reference.types.by_kind(group, version, kind_name)
    outcomes = [_outcome(lambda s=s: s.registry.create(rt, namespace, orjson.loads(orjson.dumps(body)), WriteOptions())) for s in (sharing, reference)]
    assert outcomes[0] == outcomes[1]
    reached = False
    for pick in picks:
        subresource, document = patches[pick % len(patches)]
        answers = [
            _outcome(lambda s=s: s.registry.patch(rt, namespace, "p", MERGE, orjson.loads(orjson.dumps(document)), WriteOptions(), subresource=subresource))
            for s in (sharing, reference)
        ]
        assert answers[0] == answers[1], (subresource, document)
        reached = reached or answers[0][0] == "ok"
    assert all(checked), "the update path changed a shared load of the stored object in place"
    if kind == "deployment":
        assert not checked  # its own hooks: two loads
    elif reached:
        assert checked  # written from one load


def test_a_label_patch_of_a_pod_writes_from_one_load_sharing_the_spec():
    server = _server(sharing=True)
    rt = server.types.by_kind("", "v1", "Pod")
    server.registry.create(rt, "default", orjson.loads(orjson.dumps(_POD)), WriteOptions())
    loads = []
    load = server.registry._load_for_write
    server.registry._load_for_write = lambda rt, stored: loads.append(stored) or load(rt, stored)
    seen = {}
    update = server.registry._update

    def spying(rt, obj, current, opts, **kwargs):
        seen["shared spec"] = kwargs.get("old") is not None and obj["spec"] is kwargs["old"]["spec"]
        return update(rt, obj, current, opts, **kwargs)

    server.registry._update = spying
    written = server.registry.patch(rt, "default", "p", MERGE, {"metadata": {"labels": {"app": "b"}}}, WriteOptions())
    assert len(loads) == 1 and seen == {"shared spec": True}
    assert orjson.loads(written.raw)["metadata"]["labels"] == {"app": "b"}


def test_kinds_with_their_own_update_hooks_do_not_share_unless_they_say_so():
    class Hooked(rest.strategies.Strategy):
        def before_store(self, cluster, obj, old):
            obj.setdefault("spec", {})["touched"] = True

    class Declared(Hooked):
        keeps_untouched = True

    class Inherited(Declared):
        def prepare_for_update(self, new, old, *, subresource):
            return new

    class After(rest.strategies.Strategy):
        def after_store(self, cluster, obj, old):
            obj["spec"]["seen"] = True

    assert rest._keeps_untouched(rest.strategies.Strategy)
    assert not rest._keeps_untouched(Hooked) and not rest._keeps_untouched(After)
    assert rest._keeps_untouched(Declared) and rest._keeps_untouched(pods.PodStrategy)
    assert not rest._keeps_untouched(Inherited)


def test_a_pod_update_defaults_a_spec_sent_but_leaves_the_stored_spec_itself_alone():
    stored = {"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 1, "protocol": ""}]}]}}
    strategy = pods.PodStrategy(_server(sharing=True).types.by_kind("", "v1", "Pod"))
    shared = strategy.prepare_for_update({"spec": stored["spec"]}, stored, subresource="")
    assert shared["spec"] is stored["spec"] and stored["spec"]["containers"][0]["ports"][0]["protocol"] == ""
    sent = strategy.prepare_for_update({"spec": orjson.loads(orjson.dumps(stored["spec"]))}, stored, subresource="")
    assert sent["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"
    assert stored["spec"]["containers"][0]["ports"][0]["protocol"] == ""


def test_a_status_write_copies_the_stored_object_but_its_managed_fields_list():
    from mockapi.registry import strategy as strategies

    managed = [{"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
    old = {"metadata": {"name": "p", "managedFields": managed, "labels": {"a": "b"}}, "spec": {"x": [1]}, "status": {"s": 1}}
    result = strategies._status_only({"status": {"s": 2}, "spec": {"x": [2]}}, old)
    assert result == {"metadata": {"name": "p", "managedFields": managed, "labels": {"a": "b"}}, "spec": {"x": [1]}, "status": {"s": 2}}
    assert list(result["metadata"]) == ["name", "managedFields", "labels"]  # in its place
    assert result["metadata"]["managedFields"] is managed  # read-only, replaced by every write
    assert result["spec"] is not old["spec"] and result["metadata"]["labels"] is not old["metadata"]["labels"]
