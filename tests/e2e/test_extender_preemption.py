"""A real ``mockapi serve --scheduler-config FILE`` whose extender has a ``preemptVerb``, driven
with the kubernetes client: the extender, not DefaultPreemption alone, decides which node's pods
are preempted; an extender that keeps no candidate leaves every pod in place, with kube's message,
and the pod's scheduling record and /metrics show the preempt call."""

from __future__ import annotations

import httpx
import pytest
from kubernetes import client

from tests.e2e.conftest import served, wait_for
from tests.scheduler.extender_server import ExtenderServer

pytestmark = pytest.mark.e2e

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: {url}
  preemptVerb: preempt
"""


def only_node_b(body: dict) -> dict:
    """The extender's preempt: keep node b with the victims the scheduler proposed there."""
    proposed = body["NodeNameToVictims"]
    keep = {name: {"Pods": [{"UID": p["metadata"]["uid"]} for p in v["Pods"]], "NumPDBViolations": v["NumPDBViolations"]} for name, v in proposed.items() if name == "b"}
    return {"NodeNameToMetaVictims": keep}


@pytest.fixture
def cluster(tmp_path, request):
    """(CoreV1Api, the server's URL, the extender) with nodes a and b (2 cpu each) full: a runs
    a1 and a2 (1 cpu, priority 1), b runs b1 (2 cpu, priority 5)."""
    with ExtenderServer({"preempt": request.param}) as extender:
        path = tmp_path / "scheduler.yaml"
        path.write_text(CONFIG.format(url=extender.url))
        with served("--scheduler-config", str(path)) as configuration, client.ApiClient(configuration) as api:
            core = client.CoreV1Api(api)
            populate(core, client.SchedulingV1Api(api))
            yield core, configuration.host, extender


def populate(core, scheduling) -> None:
    for name, value in (("low", 1), ("mid", 5), ("high", 1000)):
        scheduling.create_priority_class(client.V1PriorityClass(metadata=client.V1ObjectMeta(name=name), value=value))
    for name in ("a", "b"):
        capacity = {"cpu": "2", "memory": "8Gi", "pods": "110"}
        core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=name), status=client.V1NodeStatus(capacity=capacity, allocatable=capacity)))
    for name, where, cpu, priority in (("a1", "a", "1", "low"), ("a2", "a", "1", "low"), ("b1", "b", "2", "mid")):
        core.create_namespaced_pod("default", pod(name, cpu, priority, node_name=where))


def pod(name: str, cpu: str, priority: str, *, node_name: str | None = None) -> client.V1Pod:
    container = client.V1Container(name="c", image="registry.k8s.io/pause:3.9", resources=client.V1ResourceRequirements(requests={"cpu": cpu}))
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name), spec=client.V1PodSpec(containers=[container], priority_class_name=priority, node_name=node_name))


def names(core) -> set[str]:
    return {p.metadata.name for p in core.list_namespaced_pod("default").items}


@pytest.mark.parametrize("cluster", [only_node_b], indirect=True)
def test_the_extender_decides_where_the_preemptor_makes_room(cluster):
    core, host, extender = cluster
    core.create_namespaced_pod("default", pod("urgent", "2", "high"))
    # by DefaultPreemption alone a1 and a2 would go (lower highest victim priority); the extender keeps only b
    assert wait_for(lambda: core.read_namespaced_pod("urgent", "default").spec.node_name == "b", timeout=20)
    assert names(core) == {"a1", "a2", "urgent"}
    (verb, body), *_ = extender.requests
    assert verb == "preempt" and body["Pod"]["metadata"]["name"] == "urgent" and set(body["NodeNameToVictims"]) == {"a", "b"}
    events = core.list_namespaced_event("default", field_selector="involvedObject.name=b1").items
    assert any(e.reason == "Preempted" for e in events)
    metrics = httpx.get(f"{host}/metrics", trust_env=False).text
    assert f'mockapi_scheduler_extender_calls_total{{extender="{extender.url}",outcome="success",verb="preempt"}}' in metrics


@pytest.mark.parametrize("cluster", [lambda body: {"NodeNameToMetaVictims": {}}], indirect=True)
def test_an_extender_that_keeps_no_candidate_prevents_preemption(cluster):
    core, host, extender = cluster
    core.create_namespaced_pod("default", pod("urgent", "2", "high"))
    message = "0/2 nodes are available: 2 Insufficient cpu. no candidate node for preemption"

    def held():
        found = [c for c in core.read_namespaced_pod("urgent", "default").status.conditions or [] if c.type == "PodScheduled"]
        return found and found[0].message == message and found[0]

    condition = wait_for(held, timeout=20)
    assert condition and condition.reason == "Unschedulable", core.read_namespaced_pod("urgent", "default").status.conditions
    assert names(core) == {"a1", "a2", "b1", "urgent"}
    record = httpx.get(f"{host}/mockapi/v1/scheduling/default/urgent", trust_env=False).json()  # what `mockapi scheduling` prints
    assert record["outcome"] == "Unschedulable" and record["message"] == message
    assert [(c["verb"], c["url"], c["outcome"]) for c in record["extenderCalls"]] == [("preempt", f"{extender.url}/preempt", "success")]
