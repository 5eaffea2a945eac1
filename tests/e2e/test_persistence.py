"""``mockapi serve --data-dir``: real server processes, restarted on the same directory.

A graceful restart keeps every object with its resourceVersion, serves the stored CRDs again and
answers a watch from before the restart with 410; a ``kill -9`` in the middle of a storm of writes
from several threads loses no acknowledged write and half-applies none.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import orjson
import pytest
from kubernetes import client

pytestmark = pytest.mark.e2e

NS = "persist"
CONFIGMAPS = f"/api/v1/namespaces/{NS}/configmaps"
WIDGETS = f"/apis/example.com/v1/namespaces/{NS}/widgets"


class Serving:
    """``python -m mockapi serve --data-dir DIR`` in a child process."""

    def __init__(self, data_dir: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", "--data-dir", str(data_dir), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        line = self.process.stdout.readline()
        assert "serving on http://" in line, line + (self.process.stderr.read() if self.process.poll() is not None else "")
        self.url = line.split("serving on ", 1)[1].split()[0]
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def api(self) -> client.ApiClient:
        configuration = client.Configuration()
        configuration.host = self.url
        return client.ApiClient(configuration)

    def stop(self, *, kill: bool = False) -> None:
        self.http.close()
        self.process.kill() if kill else self.process.terminate()
        self.process.communicate(timeout=20)


def widget_crd() -> dict:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}]},
    }  # fmt: skip


def current(http: httpx.Client) -> dict:
    """(path, name) → (resourceVersion, object) of everything the tests wrote."""
    found = {}
    for path in (CONFIGMAPS, WIDGETS):
        for item in http.get(path).json()["items"]:
            found[(path, item["metadata"]["name"])] = item
    return found


def test_a_restart_restores_every_object_with_its_resource_version_and_the_sequence_continues(tmp_path):
    server = Serving(tmp_path / "data")
    try:
        core, extensions = client.CoreV1Api(server.api()), client.ApiextensionsV1Api(server.api())
        custom = client.CustomObjectsApi(server.api())
        core.create_namespace({"metadata": {"name": NS}})
        for name in ("kept", "changed", "gone"):
            core.create_namespaced_config_map(NS, {"metadata": {"name": name}, "data": {"v": "1"}})
        core.patch_namespaced_config_map("changed", NS, {"data": {"v": "2"}})
        core.delete_namespaced_config_map("gone", NS)
        extensions.create_custom_resource_definition(widget_crd())
        custom.create_namespaced_custom_object("example.com", "v1", NS, "widgets", {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}})
        before = current(server.http)
        old_rv = int(server.http.get(CONFIGMAPS).json()["metadata"]["resourceVersion"])
        last = int(server.http.post(CONFIGMAPS, json={"metadata": {"name": "last"}}).json()["metadata"]["resourceVersion"])
        server.http.delete(f"{CONFIGMAPS}/last")
        before_restart = last + 1
    finally:
        server.stop()

    server = Serving(tmp_path / "data")
    try:
        assert current(server.http) == before
        assert before[(CONFIGMAPS, "changed")]["data"] == {"v": "2"} and (CONFIGMAPS, "gone") not in before
        rv = int(server.http.post(CONFIGMAPS, json={"metadata": {"name": "next"}}).json()["metadata"]["resourceVersion"])
        assert rv > before_restart  # the sequence continues after the last write, a delete
        watch = server.http.get(WIDGETS, params={"watch": "1", "resourceVersion": str(old_rv), "timeoutSeconds": "5"})
        event = orjson.loads(watch.content.splitlines()[0])
        assert event["type"] == "ERROR" and event["object"]["code"] == 410, event
        listed = server.http.get(CONFIGMAPS, params={"resourceVersion": str(old_rv), "resourceVersionMatch": "Exact"})
        assert listed.status_code == 410
        assert server.http.get(WIDGETS + "/w").json()["spec"] == {"size": 3}
        second = subprocess.run([sys.executable, "-m", "mockapi", "serve", "--port", "0", "--data-dir", str(tmp_path / "data")], capture_output=True, text=True, timeout=30)
        assert second.returncode == 1 and second.stderr.strip().endswith(f"in use by another mockapi (pid {server.process.pid})"), second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        server.stop()


def test_a_damaged_data_directory_is_one_line_and_exit_1(tmp_path):
    (tmp_path / "mockapi.db").write_bytes(b"\x00garbage" * 512)
    result = subprocess.run([sys.executable, "-m", "mockapi", "serve", "--port", "0", "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert result.stderr.startswith("mockapi serve: ") and "not a mockapi data directory, or damaged" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_kill_9_in_a_storm_of_writes_loses_no_acknowledged_write_and_half_applies_none(tmp_path):
    server = Serving(tmp_path / "data")
    server.http.post("/api/v1/namespaces", json={"metadata": {"name": NS}}).raise_for_status()
    acknowledged: dict[str, tuple[int, str]] = {}  # name → (resourceVersion, value) of its last acknowledged write
    lock, stop = threading.Lock(), threading.Event()

    def write(writer: int) -> None:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            for i in range(100_000):
                name, value = f"w{writer}-{i // 2}", f"{writer}-{i}"
                try:
                    if i % 2 == 0:  # create, then update the same object: both halves carry the value twice
                        response = http.post(CONFIGMAPS, json={"metadata": {"name": name}, "data": {"a": value, "b": value}})
                    else:
                        response = http.patch(f"{CONFIGMAPS}/{name}", json={"data": {"a": value, "b": value}}, headers={"Content-Type": "application/merge-patch+json"})
                except httpx.HTTPError:
                    return  # the server is gone
                if response.status_code not in (200, 201) or stop.is_set():
                    return
                with lock:
                    acknowledged[name] = (int(response.json()["metadata"]["resourceVersion"]), value)

    writers = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in writers:
        thread.start()
    time.sleep(1.5)
    with lock:
        server.process.kill()  # SIGKILL: no shutdown, no flush; what was acknowledged must be on disk
        stop.set()
        survivors = dict(acknowledged)
    for thread in writers:
        thread.join(timeout=15)
    server.stop(kill=True)
    assert len(survivors) > 20, "the storm wrote too little to test anything"

    server = Serving(tmp_path / "data")
    try:
        listed = server.http.get(CONFIGMAPS).json()
        stored = {item["metadata"]["name"]: item for item in listed["items"]}
        for name, (rv, value) in survivors.items():
            assert name in stored, f"acknowledged {name} is lost"
            item = stored[name]
            assert int(item["metadata"]["resourceVersion"]) >= rv  # a later, unacknowledged write may have landed too
            if int(item["metadata"]["resourceVersion"]) == rv:
                assert item["data"] == {"a": value, "b": value}
        for item in stored.values():
            assert item["data"]["a"] == item["data"]["b"]  # every object whole
        newest = max(int(item["metadata"]["resourceVersion"]) for item in stored.values())
        assert int(listed["metadata"]["resourceVersion"]) >= newest
        created = server.http.post(CONFIGMAPS, json={"metadata": {"name": "after"}}).json()
        assert int(created["metadata"]["resourceVersion"]) > newest
    finally:
        server.stop()
