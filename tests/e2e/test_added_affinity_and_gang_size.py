"""A real ``mockapi serve --scheduler-config FILE`` driven with the kubernetes client: a profile's
NodeAffinityArgs.addedAffinity keeps its pods on matching nodes (a node relabelled to match takes
the pod that waited), and a gang short of pods stays Pending with scheduler-plugins' sibling
message until its last member is created; an invalid addedAffinity refuses to start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import client

from tests.e2e.conftest import served, wait_for

pytestmark = pytest.mark.e2e

GROUP, MIN = "scheduling.x-k8s.io/pod-group", "scheduling.x-k8s.io/min-available"
ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: pool, operator: In, values: [batch]}
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 30}
"""


@pytest.fixture
def core(tmp_path):
    path = tmp_path / "scheduler.yaml"
    path.write_text(CONFIG)
    with served("--scheduler-config", str(path)) as configuration, client.ApiClient(configuration) as api:
        yield client.CoreV1Api(api)


def node(name: str, **labels) -> client.V1Node:
    return client.V1Node(metadata=client.V1ObjectMeta(name=name, labels={"kubernetes.io/hostname": name, **labels}))


def pod(name: str, *, labels=None, annotations=None, node_selector=None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels, annotations=annotations),
        spec=client.V1PodSpec(node_selector=node_selector, containers=[client.V1Container(name="c", image="registry.k8s.io/pause:3.9")]),
    )


def placed(core) -> dict[str, str | None]:
    return {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod("default").items}


def scheduled(core, name: str):
    found = core.read_namespaced_pod(name, "default").status.conditions or []
    return next((c for c in found if c.type == "PodScheduled"), None)


def test_added_affinity_keeps_the_profiles_pods_on_matching_nodes(core):
    core.create_node(node("batch-1", pool="batch"))
    core.create_node(node("web-1", pool="web"))
    core.create_node(node("batch-2", pool="batch"))
    for i in range(6):
        core.create_namespaced_pod("default", pod(f"p{i}"))
    everywhere = wait_for(lambda: (found := placed(core)) and all(found.values()) and found, timeout=20)
    assert everywhere and set(everywhere.values()) <= {"batch-1", "batch-2"}, everywhere

    core.create_namespaced_pod("default", pod("on-web", node_selector={"kubernetes.io/hostname": "web-1"}))
    held = wait_for(lambda: (c := scheduled(core, "on-web")) is not None and c.status == "False" and c, timeout=20)
    assert held and held.reason == "Unschedulable" and held.message.startswith(f"0/3 nodes are available: 1 {ENFORCED},"), held
    core.patch_node("web-1", {"metadata": {"labels": {"pool": "batch"}}})  # web-1 matches the added affinity now
    assert wait_for(lambda: placed(core)["on-web"] == "web-1", timeout=20)


def test_a_gang_short_of_pods_waits_with_the_sibling_message_then_binds_when_complete(core):
    core.create_node(node("batch-1", pool="batch"))
    core.create_node(node("batch-2", pool="batch"))
    member = {"labels": {GROUP: "train"}, "annotations": {MIN: "3"}}
    for name in ("w0", "w1"):
        core.create_namespaced_pod("default", pod(name, **member))
    for name in ("w0", "w1"):  # w0's first try saw 1 pod; w1's creation brings it back to see 2
        short = f"0/2 nodes are available: pre-filter pod {name} cannot find enough sibling pods, current pods number: 2, minMember of group: 3."
        held = wait_for(lambda: (c := scheduled(core, name)) is not None and c.message.startswith(short) and c, timeout=20)
        assert held and held.status == "False" and held.reason == "Unschedulable", scheduled(core, name)
    assert placed(core) == {"w0": None, "w1": None}
    events = core.list_namespaced_event("default", field_selector="involvedObject.name=w0").items
    assert any(e.reason == "FailedScheduling" and "cannot find enough sibling pods" in e.message for e in events)

    core.create_namespaced_pod("default", pod("w2", **member))
    complete = wait_for(lambda: (found := placed(core)) and all(found.values()) and found, timeout=30)
    assert complete and set(complete) == {"w0", "w1", "w2"}, placed(core)


def test_an_invalid_added_affinity_refuses_to_start(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.replace("operator: In", "operator: Near"))
    done = subprocess.run([sys.executable, "-m", "mockapi", "serve", "--port", "0", "--scheduler-config", str(bad)], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and done.stdout == ""
    where = "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
    assert f'{where}.operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"' in done.stderr
