"""Server-side apply and managedFields, checked against kube's documented behaviour (the
"Server-Side Apply" page) and structured-merge-diff's serialization and merge rules."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockapi import errors, fieldmanager
from mockapi.fieldmanager import fieldset
from mockapi.registry import builtin

GV = "example.com/v1"
T0, T1, T2, T3 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z", "2024-01-01T00:03:00Z"

WIDGET = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "driver": {"type": "string"},
                "selector": {"type": "object", "additionalProperties": {"type": "string"}},
                "settings": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "integer"}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"},
                            "name": {"type": "string"},
                        },
                    },
                },
                "devices": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}, "count": {"type": "integer"}}},
                },
                "template": {"type": "object", "properties": {"image": {"type": "string"}, "pull": {"type": "string"}}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def builtin_schema(kind: str) -> dict:
    manifest = next(m for m in builtin.manifests() if m["spec"]["names"]["kind"] == kind)
    return manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def widget(spec: dict | None = None, **meta) -> dict:
    obj = {"apiVersion": GV, "kind": "Widget", "metadata": {"name": "w", "namespace": "default", **meta}}
    if spec is not None:
        obj["spec"] = spec
    return obj


def apply(live, config, manager="alice", *, force=False, now=T0, schema=WIDGET, **kw):
    return fieldmanager.apply(schema, live, config, manager=manager, force=force, now=now, api_version=GV, **kw)


def update(old, new, manager="bob", *, now=T1, schema=WIDGET, **kw):
    """An update by ``manager``: the new object stored with its new managedFields."""
    fields = fieldmanager.update(schema, old, new, manager=manager, now=now, api_version=GV, **kw)
    stored = copy.deepcopy(new)
    stored["metadata"]["managedFields"] = fields
    if not fields:
        del stored["metadata"]["managedFields"]
    return stored


def changed(obj: dict, **spec) -> dict:
    out = copy.deepcopy(obj)
    out["spec"].update(spec)
    return out


def entry(obj: dict, manager: str, operation: str | None = None) -> dict:
    found = [e for e in obj["metadata"].get("managedFields", []) if e["manager"] == manager]
    found = [e for e in found if operation is None or e["operation"] == operation]
    assert len(found) == 1, obj["metadata"].get("managedFields")
    return found[0]


def owned(obj: dict, manager: str, operation: str | None = None) -> set[str]:
    """The paths a manager owns, as kube prints them in conflicts."""
    return {fieldset.path_string(p) for p in fieldset.paths(entry(obj, manager, operation)["fieldsV1"])}


def managers(obj: dict) -> list[tuple[str, str]]:
    return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])]


# -- FieldsV1 ---------------------------------------------------------------------------------


def test_applied_fields_serialize_like_the_configmap_example_of_kubes_documentation():
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
              "data": {"key": "some value"}}  # fmt: skip
    obj = fieldmanager.apply(builtin_schema("ConfigMap"), None, config, manager="kubectl", force=False, now=T0, api_version="v1")
    assert obj["metadata"]["managedFields"] == [
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}},
            "manager": "kubectl",
            "operation": "Apply",
            "time": T0,
        }
    ]
    assert obj["data"] == {"key": "some value"} and obj["metadata"]["labels"] == {"test-label": "test"}


def test_an_update_marks_maps_and_list_items_it_added_with_a_dot():
    new = widget({"template": {"image": "a"}, "devices": [{"name": "gpu", "count": 1}]}, labels={"app": "x"})
    fields = fieldmanager.update(WIDGET, None, new, manager="kubectl-create", now=T0, api_version=GV)
    assert fields[0]["fieldsV1"] == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            ".": {},
            "f:devices": {".": {}, 'k:{"name":"gpu"}': {".": {}, "f:count": {}, "f:name": {}}},
            "f:template": {".": {}, "f:image": {}},
        },
    }
    assert list(fields[0]) == ["apiVersion", "fieldsType", "fieldsV1", "manager", "operation", "time"]


def test_map_list_keys_are_json_objects_with_sorted_fields_and_schema_defaults():
    obj = apply(None, widget({"ports": [{"port": 80, "name": "http"}, {"protocol": "UDP", "port": 53}]}))
    ports = entry(obj, "alice")["fieldsV1"]["f:spec"]["f:ports"]
    assert list(ports) == ['k:{"port":53,"protocol":"UDP"}', 'k:{"port":80,"protocol":"TCP"}']
    assert ports['k:{"port":80,"protocol":"TCP"}'] == {".": {}, "f:name": {}, "f:port": {}}
    assert owned(obj, "alice") >= {'.spec.ports[port=80,protocol="TCP"].name'}


def test_set_items_are_json_values_and_keys_escape_html_as_go_does():
    obj = apply(None, widget({"tags": ["b", "a<b"], "devices": [{"name": "x&y"}]}))
    spec = entry(obj, "alice")["fieldsV1"]["f:spec"]
    assert list(spec["f:tags"]) == ['v:"a\\u003cb"', 'v:"b"']
    assert list(spec["f:devices"]) == ['k:{"name":"x\\u0026y"}']
    assert '.spec.tags[="a<b"]' in owned(obj, "alice")


def test_atomic_lists_and_maps_are_owned_as_a_whole():
    obj = apply(None, widget({"args": ["x", "y"], "settings": {"a": 1}, "extra": {"list": [1], "map": {"k": 1}}}))
    assert entry(obj, "alice")["fieldsV1"]["f:spec"] == {
        "f:args": {},
        "f:extra": {"f:list": {}, "f:map": {".": {}, "f:k": {}}},
        "f:settings": {},
    }


def test_type_meta_and_server_set_metadata_are_never_recorded():
    new = widget({"replicas": 1}, uid="u-1", resourceVersion="7", generation=2, creationTimestamp=T0, labels={"a": "b"})
    fields = fieldmanager.update(WIDGET, None, new, manager="m", now=T0, api_version=GV)[0]["fieldsV1"]
    assert fields["f:metadata"] == {"f:labels": {".": {}, "f:a": {}}}
    assert set(fields) == {"f:metadata", "f:spec"}


def test_entries_are_sorted_apply_first_then_by_time_then_by_manager():
    obj = apply(None, widget({"replicas": 1}), "zed", now=T2)
    obj = update(obj, changed(obj, driver="d"), "yann", now=T1)
    obj = update(obj, changed(obj, template={"image": "i"}), "xavier", now=T1)
    obj = apply(obj, widget({"tags": ["t"]}), "adam", now=T3)
    assert managers(obj) == [("zed", "Apply"), ("adam", "Apply"), ("xavier", "Update"), ("yann", "Update")]


# -- conflicts --------------------------------------------------------------------------------


def test_applying_a_field_an_updater_owns_conflicts_with_kubes_message_and_cause():
    live = update(None, widget({"driver": "old"}), "kubectl-client-side-apply", now=T0)
    with pytest.raises(errors.StatusError) as caught:
        apply(live, widget({"driver": "new"}))
    status = caught.value.status()
    assert status["code"] == 409 and status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using example.com/v1: .spec.driver'
    )
    assert status["details"] == {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "kubectl-client-side-apply" using example.com/v1', "field": ".spec.driver"}]}  # fmt: skip
    assert caught.value.conflicts == [("kubectl-client-side-apply", ".spec.driver")]


def test_several_conflicts_are_grouped_by_manager_and_appliers_are_named_alone():
    live = apply(None, widget({"driver": "a", "replicas": 1}), "alice")
    live = update(live, changed(live, template={"image": "i"}), "bob", subresource="")
    config = widget({"driver": "b", "replicas": 2, "template": {"image": "j"}})
    with pytest.raises(fieldmanager.Conflict) as caught:
        apply(live, config, "carol")
    assert caught.value.message == (
        "Apply failed with 3 conflicts: conflicts with \"alice\":\n- .spec.driver\n- .spec.replicas\n"
        'conflicts with "bob" using example.com/v1:\n- .spec.template.image'
    )


def test_a_status_updater_is_named_with_its_subresource():
    live = apply(None, widget({"replicas": 1}))
    live = update(live, dict(live, status={"phase": "Ready"}), "kubelet", subresource="status", ignore=("spec",))
    with pytest.raises(fieldmanager.Conflict) as caught:
        apply(live, dict(widget(), status={"phase": "Gone"}), "carol", subresource="status", ignore=("spec",))
    assert caught.value.conflicts == [("kubelet", ".status.phase")]
    assert 'conflict with "kubelet" with subresource "status" using example.com/v1: .status.phase' in caught.value.message
    assert entry(live, "kubelet")["subresource"] == "status"


def test_forcing_an_apply_moves_the_conflicting_field_to_the_applier():
    live = apply(None, widget({"driver": "a", "replicas": 1}), "alice")
    obj = apply(live, widget({"driver": "b"}), "bob", force=True, now=T1)
    assert obj["spec"] == {"driver": "b", "replicas": 1}
    assert owned(obj, "alice") == {".spec.replicas"}
    assert owned(obj, "bob") == {".spec.driver"}


def test_two_appliers_setting_the_same_value_share_the_field():
    live = apply(None, widget({"driver": "a"}), "alice")
    obj = apply(live, widget({"driver": "a"}), "bob", now=T1)
    assert owned(obj, "alice") == owned(obj, "bob") == {".spec.driver"}
    with pytest.raises(fieldmanager.Conflict) as caught:
        apply(obj, widget({"driver": "c"}), "carol")
    assert sorted(m for m, _ in caught.value.conflicts) == ["alice", "bob"]


def test_an_applier_that_changes_nothing_gets_an_entry_without_time():
    live = apply(None, widget({"driver": "a"}), "alice")
    obj = apply(live, widget({"driver": "a"}), "bob", now=T1)
    assert "time" not in entry(obj, "bob") and entry(obj, "alice")["time"] == T0


# -- removing and transferring ownership ------------------------------------------------------


def test_omitting_a_previously_applied_field_removes_it():
    live = apply(None, widget({"driver": "a", "replicas": 3, "selector": {"x": "1", "y": "2"}}))
    obj = apply(live, widget({"driver": "a", "selector": {"x": "1"}}), now=T1)
    assert obj["spec"] == {"driver": "a", "selector": {"x": "1"}}
    assert owned(obj, "alice") == {".spec.driver", ".spec.selector.x"}


def test_omitting_a_field_another_applier_shares_only_disowns_it():
    live = apply(None, widget({"driver": "a", "replicas": 3}), "alice")
    live = apply(live, widget({"replicas": 3}), "bob", now=T1)
    obj = apply(live, widget({"driver": "a"}), "alice", now=T2)
    assert obj["spec"] == {"driver": "a", "replicas": 3}
    assert owned(obj, "alice") == {".spec.driver"} and owned(obj, "bob") == {".spec.replicas"}


def test_an_update_takes_a_field_from_the_applier_which_can_then_drop_it_without_removing_it():
    live = apply(None, widget({"driver": "a", "replicas": 1}))  # the user applies replicas...
    live = update(live, changed(live, replicas=5), "hpa")  # ...an autoscaler changes it...
    assert owned(live, "alice") == {".spec.driver"} and owned(live, "hpa", "Update") == {".spec.replicas"}
    obj = apply(live, widget({"driver": "a"}), now=T2)  # ...and the user stops applying it
    assert obj["spec"] == {"driver": "a", "replicas": 5}


def test_an_update_removing_a_field_removes_it_from_every_entry():
    live = apply(None, widget({"driver": "a", "replicas": 1}))
    new = copy.deepcopy(live)
    del new["spec"]["replicas"]
    obj = update(live, new, "bob")
    assert owned(obj, "alice") == {".spec.driver"}
    assert managers(obj) == [("alice", "Apply")]  # bob changed nothing it could own


def test_a_struct_an_applier_stops_applying_is_left_null_for_null_pruning_to_drop():
    live = apply(None, widget({"template": {"image": "a"}, "driver": "d"}))
    obj = apply(live, widget({"driver": "d"}), now=T1)
    assert obj["spec"] == {"template": None, "driver": "d"}  # kube's RemoveItems leaves a nil map


def test_a_preserved_value_that_changes_shape_is_modified_and_loses_what_was_below_it():
    live = apply(None, widget({"extra": {"a": {"b": 1}}}))
    obj = update(live, changed(live, extra={"a": 2}), "bob")
    assert managers(obj) == [("bob", "Update")] and owned(obj, "bob") == {".spec.extra.a"}

def test_map_list_items_of_different_appliers_merge_and_go_separately():
    live = apply(None, widget({"devices": [{"name": "gpu", "count": 1}]}), "alice")
    live = apply(live, widget({"devices": [{"name": "nic", "count": 2}]}), "bob", now=T1)
    assert live["spec"]["devices"] == [{"name": "gpu", "count": 1}, {"name": "nic", "count": 2}]
    assert owned(live, "bob") == {'.spec.devices[name="nic"]', '.spec.devices[name="nic"].count', '.spec.devices[name="nic"].name'}
    obj = apply(live, widget({"devices": []}), "alice", now=T2)
    assert obj["spec"]["devices"] == [{"name": "nic", "count": 2}]
    assert managers(obj) == [("bob", "Apply")]


def test_a_map_list_item_keeps_fields_another_manager_set():
    live = apply(None, widget({"devices": [{"name": "gpu"}]}), "alice")
    live = update(live, changed(live, devices=[{"name": "gpu", "count": 4}]), "ctrl")
    obj = apply(live, widget({"devices": [{"name": "gpu"}]}), "alice", now=T2)
    assert obj["spec"]["devices"] == [{"name": "gpu", "count": 4}]


def test_set_lists_are_the_union_of_what_each_applier_applies():
    live = apply(None, widget({"tags": ["a", "b"]}), "alice")
    live = apply(live, widget({"tags": ["b", "c"]}), "bob", now=T1)
    assert live["spec"]["tags"] == ["a", "b", "c"]
    obj = apply(live, widget({"tags": []}), "alice", now=T2)
    assert obj["spec"]["tags"] == ["b", "c"]  # b stays: bob applies it too


def test_atomic_lists_are_replaced_and_conflict_as_a_whole():
    live = apply(None, widget({"args": ["x", "y"]}), "alice")
    obj = apply(live, widget({"args": ["y"]}), "alice", now=T1)
    assert obj["spec"]["args"] == ["y"]
    with pytest.raises(fieldmanager.Conflict) as caught:
        apply(obj, widget({"args": ["x", "y"]}), "bob")
    assert caught.value.conflicts == [("alice", ".spec.args")]


def test_atomic_maps_are_replaced_and_granular_maps_merge():
    live = apply(None, widget({"settings": {"a": 1, "b": 2}, "selector": {"a": "1"}}), "alice")
    obj = apply(live, widget({"settings": {"c": 3}, "selector": {"b": "2"}}), "bob", force=True, now=T1)
    assert obj["spec"]["settings"] == {"c": 3}
    assert obj["spec"]["selector"] == {"a": "1", "b": "2"}


def test_applied_list_items_follow_the_applied_order_after_the_live_items_before_them():
    # merge.go: live-only items stay as long as no applied item must come first; shared items
    # follow the applied order; new items go where the applied list puts them.
    live = update(None, widget({"devices": [{"name": n} for n in "abcd"]}), "creator")
    obj = apply(live, widget({"devices": [{"name": "d"}, {"name": "e"}, {"name": "b"}]}), "alice", force=True)
    assert [d["name"] for d in obj["spec"]["devices"]] == ["a", "c", "d", "e", "b"]


# -- update -----------------------------------------------------------------------------------


def test_an_update_with_no_change_keeps_managed_fields_and_their_times():
    live = apply(None, widget({"driver": "a"}))
    assert fieldmanager.update(WIDGET, live, copy.deepcopy(live), manager="bob", now=T3, api_version=GV) == live["metadata"]["managedFields"]


def test_an_updater_keeps_one_entry_per_api_version_restamped_on_each_change():
    live = update(None, widget({"driver": "a"}), "ctrl", now=T0)
    obj = update(live, changed(live, replicas=2), "ctrl", now=T2)
    assert managers(obj) == [("ctrl", "Update")]
    assert owned(obj, "ctrl") == {".spec", ".spec.driver", ".spec.replicas"} and entry(obj, "ctrl")["time"] == T2


def test_status_is_not_tracked_on_the_main_resource_when_ignored():
    live = update(None, dict(widget({"driver": "a"}), status={"phase": "x"}), "creator", ignore=("status",))
    assert owned(live, "creator") == {".spec", ".spec.driver"}  # a CRD's new spec is marked, as on kube
    obj = update(live, dict(changed(live), status={"phase": "y"}), "ctrl", ignore=("status",))
    assert managers(obj) == [("creator", "Update")]


def test_an_untracked_object_stays_untracked_until_it_is_applied_to():
    untracked = widget({"driver": "a", "replicas": 1})
    assert fieldmanager.update(WIDGET, untracked, changed(untracked, driver="b"), manager="m", now=T1, api_version=GV) == []
    obj = apply(untracked, widget({"driver": "c"}), "alice", force=True, now=T2)
    assert owned(obj, "before-first-apply", "Update") == {".spec", ".spec.replicas"}
    assert entry(obj, "before-first-apply")["time"] == T2
    with pytest.raises(fieldmanager.Conflict):
        apply(untracked, widget({"driver": "c"}), "alice")


def test_sending_an_empty_entry_resets_managed_fields():
    live = apply(None, widget({"driver": "a"}))
    new = changed(live, driver="b")
    new["metadata"]["managedFields"] = [{}]
    assert fieldmanager.update(WIDGET, live, new, manager="m", now=T1, api_version=GV) == []
    new["metadata"]["managedFields"] = []
    assert fieldmanager.update(WIDGET, live, new, manager="m", now=T1, api_version=GV) == []


def test_managed_fields_edited_by_a_client_are_taken_from_the_request_in_kubes_form():
    live = apply(None, widget({"driver": "a", "replicas": 1}))
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = [
        {"manager": "me", "operation": "Update", "apiVersion": GV, "fieldsType": "FieldsV1", "time": "2024-01-01T01:00:00+01:00",
         "fieldsV1": {"f:spec": {"f:replicas": {}, "f:driver": {}, "x:unknown": {}}}}
    ]  # fmt: skip
    fields = fieldmanager.update(WIDGET, live, new, manager="m", now=T1, api_version=GV)
    assert fields == [{"apiVersion": GV, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:driver": {}, "f:replicas": {}}},
                       "manager": "me", "operation": "Update", "time": T0}]  # fmt: skip
    new["metadata"]["managedFields"][0]["operation"] = "Bogus"  # invalid: the stored ones stay
    assert fieldmanager.update(WIDGET, live, new, manager="m", now=T1, api_version=GV) == live["metadata"]["managedFields"]


def test_a_status_write_ignores_managed_fields_sent_with_it():
    live = apply(None, widget({"driver": "a"}))
    new = dict(copy.deepcopy(live), status={"phase": "x"})
    new["metadata"]["managedFields"] = []
    fields = fieldmanager.update(WIDGET, live, new, manager="kubelet", now=T1, api_version=GV, subresource="status", ignore=("spec",))
    assert [(e["manager"], e.get("subresource")) for e in fields] == [("alice", None), ("kubelet", "status")]


def test_an_update_that_cannot_be_typed_keeps_the_stored_managed_fields():
    live = apply(None, widget({"driver": "a"}))
    broken = changed(live, devices=[{"count": 1}])  # no key: kube's UpdateNoErrors keeps what was there
    assert fieldmanager.update(WIDGET, live, broken, manager="m", now=T1, api_version=GV) == live["metadata"]["managedFields"]
    with pytest.raises(errors.StatusError) as caught:
        apply(broken, widget({"driver": "b"}), force=True)
    assert caught.value.message.startswith("failed to create typed live object (default/w; example.com/v1, Kind=Widget): .spec.devices")

def test_more_than_ten_updaters_merge_the_oldest_into_ancient_changes():
    obj = update(None, widget({"replicas": 0}), "m00", now="2024-01-01T00:00:00Z")
    for i in range(1, 12):
        obj = update(obj, changed(obj, selector={**obj["spec"].get("selector", {}), f"k{i}": "v"}), f"m{i:02}",
                     now=f"2024-01-01T00:{i:02}:00Z")  # fmt: skip
    names = [m for m, _ in managers(obj)]
    assert len(names) == 10 and "ancient-changes" in names and "m00" not in names and "m01" not in names
    assert owned(obj, "ancient-changes") == {".spec", ".spec.replicas", ".spec.selector", ".spec.selector.k1", ".spec.selector.k2"}


# -- apply details ----------------------------------------------------------------------------


def test_kubectl_takes_over_fields_its_client_side_apply_annotation_vouches_for():
    last = widget({"driver": "a"})
    created = widget({"driver": "a"}, annotations={fieldmanager.LAST_APPLIED: json.dumps(last)})
    live = update(None, created, "kubectl-client-side-apply")
    obj = apply(live, widget({"driver": "a", "replicas": 2}), "kubectl", now=T1)
    assert owned(obj, "kubectl") == {".spec.driver", ".spec.replicas"}
    assert json.loads(obj["metadata"]["annotations"][fieldmanager.LAST_APPLIED]) == widget({"driver": "a", "replicas": 2})
    with pytest.raises(fieldmanager.Conflict):  # another field manager gets no such favour
        apply(live, widget({"driver": "b"}), "other")


def test_applied_configurations_must_not_carry_managed_fields():
    with pytest.raises(errors.StatusError) as caught:
        apply(None, widget({"driver": "a"}, managedFields=[]))
    assert (caught.value.code, caught.value.message) == (400, "metadata.managedFields must be nil")


def test_duplicate_or_missing_list_keys_fail_as_kube_fails_to_type_the_patch():
    with pytest.raises(errors.StatusError) as caught:
        apply(None, widget({"devices": [{"name": "a"}, {"name": "a"}]}))
    assert caught.value.code == 500 and caught.value.message == (
        'failed to create typed patch object (default/w; example.com/v1, Kind=Widget): '
        '.spec.devices: duplicate entries for key [name="a"]'
    )
    with pytest.raises(errors.StatusError) as caught:
        apply(None, widget({"devices": [{"count": 1}]}))
    assert caught.value.message.endswith(
        '.spec.devices: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)'
    )


def test_pod_containers_are_keyed_by_name_through_their_patch_merge_key():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "app", "image": "a", "ports": [{"containerPort": 80}]}]}}  # fmt: skip
    obj = fieldmanager.apply(builtin_schema("Pod"), None, pod, manager="kubectl", force=False, now=T0, api_version="v1")
    containers = obj["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:containers"]
    assert containers == {'k:{"name":"app"}': {".": {}, "f:image": {}, "f:name": {}, "f:ports": {'k:{"containerPort":80}': {".": {}, "f:containerPort": {}}}}}  # fmt: skip


def test_apply_and_update_leave_their_inputs_alone():
    live = apply(None, widget({"devices": [{"name": "a"}], "selector": {"x": "1"}}))
    config = widget({"devices": [{"name": "a", "count": 1}], "selector": {"y": "2"}})
    before = copy.deepcopy((live, config))
    obj = apply(live, config, "bob", force=True, now=T1)
    assert (live, config) == before
    obj["spec"]["selector"]["z"] = "3"
    assert (live, config) == before
    new = changed(live, driver="d")
    kept = copy.deepcopy(new)
    fieldmanager.update(WIDGET, live, new, manager="m", now=T2, api_version=GV)
    assert new == kept


# -- properties -------------------------------------------------------------------------------

names = st.sampled_from(["a", "b", "c", "d"])
ports = st.lists(
    st.fixed_dictionaries({"port": st.integers(1, 4)}, optional={"protocol": st.sampled_from(["TCP", "UDP"]), "name": names}),
    unique_by=lambda p: (p["port"], p.get("protocol", "TCP")),
    max_size=4,
)
specs = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(0, 3),
        "driver": names,
        "selector": st.dictionaries(names, names, max_size=3),
        "settings": st.dictionaries(names, st.integers(0, 2), max_size=2),
        "tags": st.lists(names, unique=True, max_size=4),
        "args": st.lists(names, max_size=3),
        "ports": ports,
        "devices": st.lists(st.fixed_dictionaries({"name": names}, optional={"count": st.integers(0, 2)}), unique_by=lambda d: d["name"], max_size=3),
        "template": st.fixed_dictionaries({}, optional={"image": names, "pull": names}),
        "extra": st.dictionaries(names, st.one_of(st.integers(0, 2), st.dictionaries(names, st.integers(0, 2), max_size=2), st.lists(names, max_size=2)), max_size=2),
    },
)
objects = st.builds(lambda spec, labels: widget(spec, **({"labels": labels} if labels else {})), specs, st.dictionaries(names, names, max_size=2))
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def resolve(obj, path):
    """The value at a managedFields path, or raise KeyError."""
    value = obj
    for pe in path:
        kind, text = pe[:2], pe[2:]
        if value is None:  # a map apply emptied: null until the registry's null pruning
            return None
        if kind == "f:":
            value = value[text]
        elif kind == "v:":
            assert json.loads(text) in value
            value = json.loads(text)
        else:
            key = json.loads(text)
            value = next(i for i in value if all(i.get(k, "TCP" if k == "protocol" else None) == v for k, v in key.items()))
    return value


def assert_owned_fields_exist(obj):
    for e in obj["metadata"].get("managedFields", []):
        for path in fieldset.paths(e["fieldsV1"]):
            resolve(obj, path)
        assert fieldset.is_sorted(e["fieldsV1"])


@FAST
@given(objects, objects)
def test_applying_the_same_configuration_twice_changes_nothing_the_second_time(live, config):
    live = update(None, live, "creator", now=T0)
    first = apply(live, config, "alice", force=True, now=T1)
    assert apply(first, config, "alice", now=T2) == first
    assert_owned_fields_exist(first)
    assert resolve_all_leaves(config, first)


def resolve_all_leaves(config, obj):
    """Every value of the configuration is in the result (what was applied wins)."""
    fields = fieldmanager.typed.object_field_set(fieldmanager.schematype.root_type(WIDGET), config)
    for path in fieldset.paths(fields):
        resolve(obj, path)
    return True


@FAST
@given(objects, objects, objects)
def test_update_from_an_object_to_itself_changes_no_managed_fields(first, second, third):
    obj = update(None, first, "creator", now=T0)
    obj = apply(obj, second, "alice", force=True, now=T1)
    obj = update(obj, dict(third, metadata=obj["metadata"]), "bob", now=T2)
    assert_owned_fields_exist(obj)
    stored = obj["metadata"].get("managedFields", [])
    assert fieldmanager.update(WIDGET, obj, copy.deepcopy(obj), manager="carol", now=T3, api_version=GV) == stored


paths_strategy = st.sets(st.lists(st.sampled_from(["f:a", "f:b", 'k:{"n":1}', 'v:"x"', "i:2"]), min_size=1, max_size=3).map(tuple), max_size=8)


def build(paths):
    out = {}
    for path in paths:
        node = fieldset.LEAF
        for pe in reversed(path[1:]):
            node = {pe: node}
        out = fieldset.union(out, {path[0]: node})
    return out


@settings(max_examples=100, deadline=None)
@given(paths_strategy, paths_strategy)
def test_field_set_operations_agree_with_sets_of_paths(a, b):
    sa, sb = build(a), build(b)
    assert set(fieldset.paths(sa)) == a
    assert set(fieldset.paths(fieldset.union(sa, sb))) == a | b
    assert set(fieldset.paths(fieldset.difference(sa, sb))) == a - b
    assert set(fieldset.paths(fieldset.intersection(sa, sb))) == a & b
    below_b = {p for p in a if any(p[: len(q)] == q for q in b)}
    assert set(fieldset.paths(fieldset.recursive_difference(sa, sb))) == a - below_b
    for s in (sa, fieldset.union(sa, sb), fieldset.difference(sa, sb), fieldset.intersection(sa, sb)):
        assert fieldset.is_sorted(s)


operations = st.lists(st.tuples(st.sampled_from(["alice", "bob", "ctrl"]), objects, st.booleans()), min_size=1, max_size=5)


@FAST
@given(operations)
def test_after_any_sequence_of_writes_owned_fields_exist_and_conflicts_name_real_owners(ops):
    root = fieldmanager.schematype.root_type(WIDGET)
    obj = None
    for step, (manager, body, force) in enumerate(ops):
        now = f"2024-01-01T00:0{step}:00Z"
        if manager == "ctrl":
            new = dict(copy.deepcopy(body), metadata=copy.deepcopy(obj["metadata"]) if obj else body["metadata"])
            obj = update(obj, new, manager, now=now)
        else:
            try:
                obj = apply(obj, body, manager, force=force, now=now)
            except fieldmanager.Conflict as conflict:
                assert not force
                for owner, path in conflict.conflicts:  # an untracked object's fields are before-first-apply's
                    untracked = "managedFields" not in obj["metadata"]
                    assert owner == "before-first-apply" if untracked else path in owned(obj, owner)
                continue
            applied = fieldmanager.typed.object_field_set(root, body)
            mine = entry(obj, manager, "Apply")["fieldsV1"] if applied else {}
            assert set(fieldset.paths(mine)) == set(fieldset.paths(applied))
        assert_owned_fields_exist(obj)


def test_applying_an_object_of_only_a_name_creates_it_with_its_name():
    from mockapi import fieldmanager

    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}
    created = fieldmanager.apply(
        schema, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}},
        manager="m", force=False, now="2024-01-01T00:00:00Z", api_version="v1",
    )
    assert created["metadata"]["name"] == "x"


def test_the_field_set_of_a_new_object_equals_the_comparison_against_nothing():
    """The create fast path (added_object) must record exactly what compare_objects would."""
    from pathlib import Path

    import yaml

    from mockapi import app as app_
    from mockapi.fieldmanager.schematype import root_type
    from mockapi.fieldmanager.typed import added_object, compare_objects

    server = app_.build()
    root = Path(__file__).resolve().parents[1]
    documents = [d for p in sorted((root / "testdata").glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    assert len(documents) > 50
    for obj in documents:
        group, _, version = obj["apiVersion"].rpartition("/")
        rt = server.types.by_kind(group, version, obj["kind"])
        if rt is None:
            continue
        for ignore in ((), ("status",)):
            schema_root = root_type(rt.schema)
            assert added_object(schema_root, obj, ignore) == compare_objects(schema_root, {}, obj, ignore)[0], obj["metadata"]["name"]
