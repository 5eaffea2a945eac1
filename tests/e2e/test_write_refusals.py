"""Writes kube-apiserver refuses, over HTTP against a live server: kube's Status, nothing changed."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def test_a_merge_patch_nulling_metadata_is_400_and_the_configmap_keeps_its_data(http):
    http.post(CONFIGMAPS, json={"metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}}).raise_for_status()
    before = http.get(f"{CONFIGMAPS}/c").json()
    answer = http.patch(
        f"{CONFIGMAPS}/c",
        json={"apiVersion": None, "kind": None, "metadata": None, "data": None},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert answer.status_code == 400
    assert answer.json()["reason"] == "BadRequest"
    assert answer.json()["message"] == "the name of the object () does not match the name on the URL (c)"
    smp = http.patch(f"{CONFIGMAPS}/c", json={"$patch": "delete"}, headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert smp.status_code == 400
    assert http.get(f"{CONFIGMAPS}/c").json() == before


def test_a_configmap_over_one_mib_is_422(http):
    answer = http.post(CONFIGMAPS, json={"metadata": {"name": "big"}, "data": {"a": "x" * (1024 * 1024 + 1)}})
    assert answer.status_code == 422
    assert answer.json()["message"] == 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes'
    assert http.get(f"{CONFIGMAPS}/big").status_code == 404


def test_a_container_port_out_of_range_is_422(http):
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 99999999}]}]}}
    answer = http.post("/api/v1/namespaces/default/pods", json=pod)
    assert answer.status_code == 422
    assert answer.json()["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": "Invalid value: 99999999: must be between 1 and 65535, inclusive", "field": "spec.containers[0].ports[0].containerPort"}
    ]
