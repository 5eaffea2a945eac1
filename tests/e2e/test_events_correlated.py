"""Events counted as client-go's recorder counts them, seen with the real clients: a pod the
scheduler retries has one FailedScheduling Event whose count grows, and ``kubectl describe pod``
shows it as ``(xN over ...)``; the HTTP client (``KubeClient``) patches a repeat, and makes an
Event deleted meanwhile again."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess

import pytest
from kubernetes import client

from mockapi.client import KubeClient
from mockapi.testing import MockAPIServer
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.e2e

SELECTOR_MISS = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def failed_scheduling(core, pod: str) -> list:
    return [e for e in core.list_namespaced_event("default").items if e.involved_object.name == pod and e.reason == "FailedScheduling"]


def test_a_pod_retried_has_one_failed_scheduling_event_counted_and_described(tmp_path):
    config = tmp_path / "scheduler.yaml"  # short backoffs: each retry within a fraction of a second
    config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                  "podInitialBackoffSeconds": 0.1, "podMaxBackoffSeconds": 0.1}))  # fmt: skip
    with MockAPIServer(scheduler_config=str(config)) as mockapi, mockapi.api_client() as api:
        core = client.CoreV1Api(api)
        for name in ("node-a", "node-b"):
            core.create_node(node(name))
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "picky", "namespace": "default"},
               "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c", "image": "pause"}]}}  # fmt: skip
        core.create_namespaced_pod("default", pod)
        assert wait_for(lambda: failed_scheduling(core, "picky"))

        retries = 4
        for i in range(retries):  # a label no selector asks for: the scheduler tries the pod again (NodeAffinity's Node/Update)
            before = failed_scheduling(core, "picky")[0].count
            core.patch_node("node-a", {"metadata": {"labels": {"retry": str(i)}}})
            assert wait_for(lambda: failed_scheduling(core, "picky")[0].count > before), f"retry {i} was not counted"

        events = failed_scheduling(core, "picky")
        assert len(events) == 1, [e.metadata.name for e in events]  # one object, counted on
        event = events[0]
        assert event.count >= retries + 1 and event.message.startswith(SELECTOR_MISS)
        assert event.first_timestamp <= event.last_timestamp and event.source.component == "default-scheduler"

        described = mockapi_kubectl(mockapi, "describe", "pod", "picky")
        line = next(line for line in described.splitlines() if "FailedScheduling" in line)
        assert re.search(rf"\(x{event.count} over \d+s\)", line), line
        assert described.count("FailedScheduling") == 1, described


def mockapi_kubectl(mockapi, *args) -> str:
    binary = shutil.which("kubectl")
    assert binary, "kubectl must be on PATH: the end-to-end suite drives the real client"
    result = subprocess.run([binary, "--kubeconfig", str(mockapi.kubeconfig_path), *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def recorded(name: str, message: str = "Back-off restarting failed container", *, stamp: str = "2024-01-01T00:00:00Z") -> dict:
    return {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "web", "uid": "u-1"},
        "reason": "BackOff", "message": message, "type": "Warning", "source": {"component": "kubelet", "host": "node-a"},
        "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
    }  # fmt: skip


def test_the_http_client_patches_a_repeat_and_makes_a_deleted_event_again(live, core):
    kube = KubeClient.for_server(live.url)

    async def record(*events):
        for event in events:
            await kube.create_event(event)

    try:
        asyncio.run(record(recorded("web.1"), recorded("web.2", stamp="2024-01-01T00:00:05Z"), recorded("web.3", stamp="2024-01-01T00:00:09Z")))
        [event] = core.list_namespaced_event("default").items
        assert (event.metadata.name, event.count) == ("web.1", 3)
        assert (event.first_timestamp.isoformat(), event.last_timestamp.isoformat()) == ("2024-01-01T00:00:00+00:00", "2024-01-01T00:00:09+00:00")

        core.delete_namespaced_event("web.1", "default")  # gone (a reset, a TTL): the next repeat makes it again, with the count so far
        asyncio.run(record(recorded("web.4", stamp="2024-01-01T00:00:12Z")))
        [event] = core.list_namespaced_event("default").items
        assert (event.metadata.name, event.count, event.first_timestamp.isoformat()) == ("web.1", 4, "2024-01-01T00:00:00+00:00")
    finally:
        kube.close()
