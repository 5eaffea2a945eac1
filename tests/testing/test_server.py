"""MockAPIServer and connect(): the in-process server users put in their own tests."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from kubernetes import client

from mockapi import errors
from mockapi.testing import MockAPIServer, connect

ROOT = Path(__file__).resolve().parents[2]
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {a: '1'}\n"


@pytest.fixture(scope="module")
def server():
    with MockAPIServer() as running:
        yield running


@pytest.fixture
def fresh(server):
    server.reset(keep_crds=False)
    return server


def test_a_server_starts_in_well_under_a_second_and_stops_cleanly():
    MockAPIServer().start().stop()  # imports warm
    started = time.process_time()  # CPU time, every thread's: a loaded machine adds wall time, not work
    mockapi = MockAPIServer().start()
    elapsed = time.process_time() - started
    try:
        with mockapi.api_client() as api:
            assert client.VersionApi(api).get_code().major == "1"
    finally:
        mockapi.stop()
    assert elapsed < 1.0, elapsed  # ~0.1 s of CPU here


def test_its_kubeconfig_lives_in_a_temporary_directory_and_points_at_it(fresh, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    path = fresh.kubeconfig_path
    assert path.exists() and not str(path).startswith(str(Path.home()))
    assert fresh.url in path.read_text()
    api = client.ApiClient(configuration=_configuration(path))
    with api:
        assert [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items] == ["default", "kube-public", "kube-system"]
    assert not (tmp_path / ".kube").exists()


def _configuration(path: Path):
    from kubernetes import config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(path), client_configuration=configuration)
    return configuration


def test_load_takes_a_file_a_directory_yaml_text_or_a_list_of_them(fresh, tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(CONFIGMAP.replace("settings", "from-file"))
    assert fresh.load(manifest) == {"created": 1, "configured": 0, "unchanged": 0}
    assert fresh.load(CONFIGMAP)["created"] == 1
    loaded = fresh.load([ROOT / "testdata", CONFIGMAP])
    assert loaded["created"] > 20 and loaded["unchanged"] == 1
    with fresh.api_client() as api:
        names = {c.metadata.name for c in client.CoreV1Api(api).list_namespaced_config_map("default").items}
    assert {"from-file", "settings"} <= names


def test_a_bad_manifest_raises_the_servers_status_naming_the_document(fresh):
    with pytest.raises(errors.StatusError) as caught:
        fresh.load(CONFIGMAP + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n")
    assert caught.value.code == 400 and "document 2" in caught.value.message and "Bad_Name" in caught.value.message


def test_a_missing_path_is_a_file_not_found_error(fresh, tmp_path):
    with pytest.raises(FileNotFoundError):
        fresh.load(tmp_path / "missing.yaml")


def test_reset_deletes_objects_but_keeps_crds_and_the_default_namespaces(fresh):
    fresh.load(ROOT / "testdata")
    deleted = fresh.reset()
    assert deleted > 20
    with fresh.api_client() as api:
        core = client.CoreV1Api(api)
        assert [n.metadata.name for n in core.list_namespace().items] == ["default", "kube-public", "kube-system"]
        crds = {c.metadata.name for c in client.ApiextensionsV1Api(api).list_custom_resource_definition().items}
        assert "foozerconfigs.foozer.example.com" in crds
        pools = client.CustomObjectsApi(api).list_cluster_custom_object("devmgmtproto.k8s.io", "v1alpha1", "devicepools")
        assert pools["items"] == []


def test_requests_are_recorded_and_filtered(fresh):
    with fresh.api_client() as api:
        core = client.CoreV1Api(api)
        core.list_namespaced_config_map("default")
        core.list_namespaced_config_map("default")
        core.read_namespace("default")
    lists = fresh.requests(verb="list", resource="configmaps")
    assert len(lists) == 2 and lists[0]["namespace"] == "default" and lists[0]["code"] == 200
    assert "OpenAPI-Generator" in lists[0]["userAgent"]
    assert [r["verb"] for r in fresh.requests(user_agent="OpenAPI", limit=1)] == ["get"]
    fresh.clear_requests()
    assert fresh.requests() == []


def test_manual_allocation_can_be_set_and_stepped_from_a_test(fresh):
    assert fresh.allocation()["mode"] == "immediate"
    assert fresh.set_allocation("manual")["mode"] == "manual"
    assert fresh.step("default/my-claim") == ["default/my-claim"]
    assert fresh.step() == []
    fresh.reset()
    assert fresh.allocation()["mode"] == "immediate"


def test_settings_pass_through_to_the_server():
    with MockAPIServer(allocation_mode="delay", allocation_delay=0.5, load=CONFIGMAP) as mockapi:
        assert mockapi.allocation()["mode"] == "delay" and mockapi.allocation()["delaySeconds"] == 0.5
        assert mockapi.requests() == []
        assert "name: settings" in mockapi.snapshot()


def test_connect_drives_a_server_that_is_already_running(fresh):
    with connect(fresh.url) as remote:
        remote.load(CONFIGMAP)
        assert "name: settings" in fresh.snapshot()
        path = remote.kubeconfig_path
        assert path.exists()
    assert not path.exists()


def test_a_server_whose_start_up_manifests_fail_stops_and_raises_the_status():
    before = _server_threads()
    with pytest.raises(errors.StatusError) as caught:
        MockAPIServer(load=CONFIGMAP.replace("settings", "Bad_Name")).start()
    assert "Bad_Name" in caught.value.message
    assert _server_threads() == before


def _server_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("mockapi:"))
