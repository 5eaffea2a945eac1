"""REST semantics of our kinds through the official kubernetes Python client."""

from __future__ import annotations

import json

import pytest
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import GROUP, VERSION, device_claim, device_class

pytestmark = pytest.mark.e2e


def test_create_returns_201_with_server_set_fields(custom):
    created = custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("gpu-a"))
    meta = created["metadata"]
    assert created["kind"] == "DeviceClass" and created["apiVersion"] == f"{GROUP}/{VERSION}"
    assert isinstance(meta["resourceVersion"], str) and int(meta["resourceVersion"]) > 0
    assert meta["generation"] == 1 and meta["uid"] and meta["creationTimestamp"].endswith("Z")


def test_create_with_generate_name_gets_a_unique_name(custom):
    body = device_class("")
    body["metadata"] = {"generateName": "gpu-"}
    first = custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", body)
    second = custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", body)
    assert first["metadata"]["name"].startswith("gpu-") and len(first["metadata"]["name"]) == 9
    assert first["metadata"]["name"] != second["metadata"]["name"]


def test_create_of_an_existing_object_is_409_already_exists(custom):
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("dup"))
    with pytest.raises(ApiException) as caught:
        custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("dup"))
    status = json.loads(caught.value.body)
    assert caught.value.status == 409 and status["reason"] == "AlreadyExists"
    assert status["message"] == 'deviceclasses.devmgmtproto.k8s.io "dup" already exists'


def test_create_in_a_missing_namespace_is_404_namespace_not_found(custom):
    with pytest.raises(ApiException) as caught:
        custom.create_namespaced_custom_object(GROUP, VERSION, "nope", "deviceclaims", device_claim("c", "nope"))
    assert caught.value.status == 404
    assert json.loads(caught.value.body)["message"] == 'namespaces "nope" not found'


def test_get_of_a_missing_object_is_a_404_status(custom):
    with pytest.raises(ApiException) as caught:
        custom.get_cluster_custom_object(GROUP, VERSION, "devicepools", "nope")
    status = json.loads(caught.value.body)
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'devicepools.devmgmtproto.k8s.io "nope" not found',
        "reason": "NotFound",
        "code": 404,
        "details": {"name": "nope", "group": GROUP, "kind": "devicepools"},
    }


def test_update_with_a_stale_resource_version_is_409_conflict(custom):
    created = custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("cc"))
    created["spec"]["driver"] = "x"
    custom.replace_cluster_custom_object(GROUP, VERSION, "deviceclasses", "cc", created)
    with pytest.raises(ApiException) as caught:
        custom.replace_cluster_custom_object(GROUP, VERSION, "deviceclasses", "cc", created)
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["message"] == (
        'Operation cannot be fulfilled on deviceclasses.devmgmtproto.k8s.io "cc": '
        "the object has been modified; please apply your changes to the latest version and try again"
    )


def test_update_of_a_custom_resource_without_resource_version_is_invalid(custom):
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("norv"))
    with pytest.raises(ApiException) as caught:
        custom.replace_cluster_custom_object(GROUP, VERSION, "deviceclasses", "norv", device_class("norv"))
    assert caught.value.status == 422
    assert "metadata.resourceVersion: Invalid value: 0: must be specified for an update" in json.loads(caught.value.body)["message"]


def test_generation_bumps_on_spec_changes_only(custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("g"))
    labelled = custom.patch_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "g", {"metadata": {"labels": {"a": "b"}}})
    assert labelled["metadata"]["generation"] == 1
    changed = custom.patch_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "g", {"spec": {"matchAttributes": ["numa"]}})
    assert changed["metadata"]["generation"] == 2
    status = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, "default", "deviceclaims", "g", {"status": {"podNames": ["p"]}}
    )
    assert status["metadata"]["generation"] == 2 and status["status"]["podNames"] == ["p"]


def test_status_writes_keep_spec_and_spec_writes_keep_status(custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("s"))
    after_status = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, "default", "deviceclaims", "s", {"spec": {"matchAttributes": ["x"]}, "status": {"nodeName": "n1"}}
    )
    assert "matchAttributes" not in after_status["spec"] and after_status["status"]["nodeName"] == "n1"
    after_spec = custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", "deviceclaims", "s", {"spec": {"matchAttributes": ["x"]}, "status": {"nodeName": "n2"}}
    )
    assert after_spec["spec"]["matchAttributes"] == ["x"] and after_spec["status"]["nodeName"] == "n1"
    fetched = custom.get_namespaced_custom_object_status(GROUP, VERSION, "default", "deviceclaims", "s")
    assert fetched["status"]["nodeName"] == "n1"


def test_status_is_dropped_on_create(custom):
    body = device_claim("nostatus")
    body["status"] = {"nodeName": "n1"}
    created = custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", body)
    assert "status" not in created


def test_a_no_op_patch_does_not_write(custom):
    created = custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("same"))
    again = custom.patch_cluster_custom_object(GROUP, VERSION, "deviceclasses", "same", {"spec": {"driver": "example.com-foozer"}})
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_json_patch_applies_and_a_failing_test_op_is_422(custom):
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("jp"))
    patched = custom.patch_cluster_custom_object(
        GROUP, VERSION, "deviceclasses", "jp", [{"op": "replace", "path": "/spec/driver", "value": "other"}],
        _content_type="application/json-patch+json",
    )
    assert patched["spec"]["driver"] == "other"
    with pytest.raises(ApiException) as caught:
        custom.patch_cluster_custom_object(
            GROUP, VERSION, "deviceclasses", "jp", [{"op": "test", "path": "/spec/driver", "value": "nope"}],
            _content_type="application/json-patch+json",
        )
    assert caught.value.status == 422


def test_merge_patch_with_a_stale_resource_version_is_409(custom):
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("mp"))
    with pytest.raises(ApiException) as caught:
        custom.patch_cluster_custom_object(GROUP, VERSION, "deviceclasses", "mp", {"metadata": {"resourceVersion": "1"}, "spec": {"driver": "y"}})
    assert caught.value.status == 409


def test_strategic_merge_patch_on_a_custom_kind_is_415(custom):
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("smp"))
    with pytest.raises(ApiException) as caught:
        custom.patch_cluster_custom_object(
            GROUP, VERSION, "deviceclasses", "smp", {"spec": {"driver": "y"}}, _content_type="application/strategic-merge-patch+json"
        )
    assert caught.value.status == 415 and json.loads(caught.value.body)["reason"] == "UnsupportedMediaType"


def test_server_side_apply_creates_then_merges_what_another_manager_applies(custom):
    body = device_class("ssa")
    created = custom.patch_cluster_custom_object(
        GROUP, VERSION, "deviceclasses", "ssa", body, field_manager="test", force=False, _content_type="application/apply-patch+yaml"
    )
    assert created is None  # 201: the client only deserializes 200 (PROTOCOL.md G6)
    applied = custom.patch_cluster_custom_object(
        GROUP, VERSION, "deviceclasses", "ssa",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "DeviceClass", "metadata": {"name": "ssa", "labels": {"x": "y"}}},
        field_manager="labeller", force=False, _content_type="application/apply-patch+yaml",
    )
    assert applied["metadata"]["labels"] == {"x": "y"} and applied["spec"]["driver"] == "example.com-foozer"
    managers = {(m["manager"], m["operation"]) for m in applied["metadata"]["managedFields"]}
    assert managers == {("test", "Apply"), ("labeller", "Apply")}


def test_server_side_apply_conflicts_are_409_unless_forced_and_dropped_fields_are_removed(custom):
    custom.patch_cluster_custom_object(
        GROUP, VERSION, "deviceclasses", "own", device_class("own", constraints="true"), field_manager="a", _content_type="application/apply-patch+yaml"
    )
    other = device_class("own")
    other["spec"]["driver"] = "other"
    with pytest.raises(ApiException) as caught:
        custom.patch_cluster_custom_object(GROUP, VERSION, "deviceclasses", "own", other, field_manager="b", _content_type="application/apply-patch+yaml")
    status = json.loads(caught.value.body)
    assert caught.value.status == 409 and status["message"].startswith("Apply failed with")
    assert {c["field"] for c in status["details"]["causes"]} == {".spec.driver"}
    forced = custom.patch_cluster_custom_object(
        GROUP, VERSION, "deviceclasses", "own", other, field_manager="b", force=True, _content_type="application/apply-patch+yaml"
    )
    assert forced["spec"]["driver"] == "other" and forced["spec"]["constraints"] == "true"
    shared = device_class("own")
    shared["spec"]["driver"] = "other"  # the same value b set: shared ownership, no conflict
    reapplied = custom.patch_cluster_custom_object(
        GROUP, VERSION, "deviceclasses", "own", shared, field_manager="a", _content_type="application/apply-patch+yaml"
    )
    assert "constraints" not in reapplied["spec"]  # a stopped applying it and nobody else owns it


def test_apply_without_field_manager_is_422(http):
    response = http.patch(
        f"/apis/{GROUP}/{VERSION}/deviceclasses/nofm",
        content=json.dumps(device_class("nofm")),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert response.status_code == 422 and "fieldManager: Required value" in response.json()["message"]


def test_label_selectors_equality_and_set_based_filter_lists(custom):
    for name, tier in [("a", "gold"), ("b", "silver"), ("c", "bronze")]:
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim(name, tier=tier))
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("d"))

    def names(selector):
        items = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", label_selector=selector)["items"]
        return [i["metadata"]["name"] for i in items]

    assert names("tier=gold") == ["a"]
    assert names("tier!=gold") == ["b", "c", "d"]
    assert names("tier in (gold,silver)") == ["a", "b"]
    assert names("tier notin (gold)") == ["b", "c", "d"]
    assert names("tier") == ["a", "b", "c"]
    assert names("!tier") == ["d"]


def test_field_selector_on_name_and_namespace_and_unsupported_fields_are_400(custom, core):
    core.create_namespace({"metadata": {"name": "team-a"}})
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("x"))
    custom.create_namespaced_custom_object(GROUP, VERSION, "team-a", "deviceclaims", device_claim("x", "team-a"))
    everywhere = custom.list_cluster_custom_object(GROUP, VERSION, "deviceclaims", field_selector="metadata.namespace=team-a")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in everywhere["items"]] == [("team-a", "x")]
    with pytest.raises(ApiException) as caught:
        custom.list_cluster_custom_object(GROUP, VERSION, "deviceclaims", field_selector="spec.bogus=1")
    assert caught.value.status == 400 and "field label not supported: spec.bogus" in caught.value.body


def test_pagination_with_limit_and_continue_is_a_consistent_snapshot(custom):
    for i in range(5):
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim(f"c{i}"))
    first = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", limit=2)
    assert [i["metadata"]["name"] for i in first["items"]] == ["c0", "c1"]
    assert first["metadata"]["remainingItemCount"] == 3
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "c3")
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("c2a"))
    second = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", limit=2, _continue=first["metadata"]["continue"])
    third = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", limit=2, _continue=second["metadata"]["continue"])
    assert [i["metadata"]["name"] for i in second["items"] + third["items"]] == ["c2", "c3", "c4"]
    assert "continue" not in third["metadata"] and second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_an_expired_continue_token_is_410_with_a_fresh_token(make_live, tmp_path):
    from kubernetes import client, config

    live = make_live(history_size=3)
    custom = client.CustomObjectsApi(config.new_client_from_config(config_file=str(live.kubeconfig)))
    for i in range(4):
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim(f"c{i}"))
    first = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", limit=2)
    for i in range(5):
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim(f"d{i}"))
    with pytest.raises(ApiException) as caught:
        custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", limit=2, _continue=first["metadata"]["continue"])
    status = json.loads(caught.value.body)
    assert caught.value.status == 410 and status["reason"] == "Expired" and status["metadata"]["continue"]


def test_list_carries_kind_api_version_resource_version_and_items(custom):
    listed = custom.list_cluster_custom_object(GROUP, VERSION, "devicepools")
    assert listed["kind"] == "DevicePoolList" and listed["apiVersion"] == f"{GROUP}/{VERSION}"
    assert listed["items"] == [] and int(listed["metadata"]["resourceVersion"]) > 0


def test_delete_with_finalizers_sets_deletion_timestamp_until_the_last_one_goes(custom):
    body = device_claim("fin")
    body["metadata"]["finalizers"] = ["example.com/hold", "example.com/second"]
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", body)
    marked = custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "fin")
    assert marked["metadata"]["deletionTimestamp"] and marked["metadata"]["generation"] == 2
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", "deviceclaims", "fin", [{"op": "remove", "path": "/metadata/finalizers/0"}],
        _content_type="application/json-patch+json",
    )
    assert custom.get_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "fin")["metadata"]["finalizers"] == ["example.com/second"]
    custom.patch_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "fin", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as caught:
        custom.get_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "fin")
    assert caught.value.status == 404


def test_delete_preconditions_and_missing_objects(custom):
    created = custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("pre"))
    with pytest.raises(ApiException) as caught:
        custom.delete_cluster_custom_object(GROUP, VERSION, "deviceclasses", "pre", body={"preconditions": {"uid": "other"}})
    assert caught.value.status == 409
    deleted = custom.delete_cluster_custom_object(GROUP, VERSION, "deviceclasses", "pre", body={"preconditions": {"uid": created["metadata"]["uid"]}})
    assert deleted["metadata"]["name"] == "pre"
    with pytest.raises(ApiException) as caught:
        custom.delete_cluster_custom_object(GROUP, VERSION, "deviceclasses", "pre")
    assert caught.value.status == 404


def test_dry_run_changes_nothing(custom):
    created = custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("dry"), dry_run="All")
    assert created["metadata"]["name"] == "dry"
    with pytest.raises(ApiException):
        custom.get_cluster_custom_object(GROUP, VERSION, "deviceclasses", "dry")
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class("dry"))
    patched = custom.patch_cluster_custom_object(GROUP, VERSION, "deviceclasses", "dry", {"spec": {"driver": "z"}}, dry_run="All")
    assert patched["spec"]["driver"] == "z"
    custom.delete_cluster_custom_object(GROUP, VERSION, "deviceclasses", "dry", dry_run="All")
    assert custom.get_cluster_custom_object(GROUP, VERSION, "deviceclasses", "dry")["spec"]["driver"] == "example.com-foozer"


def test_deletecollection_deletes_what_the_selector_matches(http, custom):
    for name, tier in [("a", "x"), ("b", "x"), ("c", "y")]:
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim(name, tier=tier))
    response = http.delete(f"/apis/{GROUP}/{VERSION}/namespaces/default/deviceclaims", params={"labelSelector": "tier=x"})
    assert response.status_code == 200 and [i["metadata"]["name"] for i in response.json()["items"]] == ["a", "b"]
    remaining = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims")["items"]
    assert [i["metadata"]["name"] for i in remaining] == ["c"]


def test_invalid_names_are_422_with_causes(http):
    response = http.post(f"/apis/{GROUP}/{VERSION}/deviceclasses", json=device_class("sriov-nic-1Gbps"))
    status = response.json()
    assert response.status_code == 422 and status["reason"] == "Invalid"
    assert status["details"]["kind"] == "DeviceClass" and status["details"]["causes"][0]["field"] == "metadata.name"
    assert status["message"].startswith('DeviceClass.devmgmtproto.k8s.io "sriov-nic-1Gbps" is invalid: metadata.name: Invalid value: "sriov-nic-1Gbps"')


def test_field_validation_strict_lists_every_unknown_field_and_warn_prunes_with_warnings(http):
    body = device_class("typo")
    body["spec"]["contstraints"] = "x"
    body["spec"]["maxDeviceCount"] = 1
    strict = http.post(f"/apis/{GROUP}/{VERSION}/deviceclasses", params={"fieldValidation": "Strict"}, json=body)
    assert strict.status_code == 400
    assert strict.json()["message"] == (
        'DeviceClass in version "v1alpha1" cannot be handled as a DeviceClass: strict decoding error: '
        'unknown field "spec.contstraints", unknown field "spec.maxDeviceCount"'
    )
    warn = http.post(f"/apis/{GROUP}/{VERSION}/deviceclasses", params={"fieldValidation": "Warn"}, json=body)
    assert warn.status_code == 201 and "contstraints" not in warn.json()["spec"]
    assert warn.headers.get_list("warning") == ['299 - "unknown field \\"spec.contstraints\\""', '299 - "unknown field \\"spec.maxDeviceCount\\""']


def test_a_privileged_claim_needs_a_namespace_that_opts_in(custom, core):
    body = device_claim("admin")
    body["kind"] = "DevicePrivilegedClaim"
    with pytest.raises(ApiException) as caught:
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceprivilegedclaims", body)
    assert caught.value.status == 403
    assert "devmgmtproto.k8s.io/admin-access=true" in json.loads(caught.value.body)["message"]
    core.create_namespace({"metadata": {"name": "ops", "labels": {"devmgmtproto.k8s.io/admin-access": "true"}}})
    body["metadata"]["namespace"] = "ops"
    created = custom.create_namespaced_custom_object(GROUP, VERSION, "ops", "deviceprivilegedclaims", body)
    assert created["kind"] == "DevicePrivilegedClaim"
