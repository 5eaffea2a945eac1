"""Preemption: a high-priority pod that fits nowhere evicts a lower-priority pod and takes its place.

One node with 2 CPUs, filled by two low-priority pods of 1 CPU each. A pod of priority 1000 asking
for 1 CPU fails the NodeResourcesFit filter (``Insufficient cpu``); the DefaultPreemption PostFilter
finds that evicting one low-priority pod makes room, sets the pod's ``status.nominatedNodeName``,
and deletes that victim (Event ``Preempted``); once it is gone the pod binds to the node.

The important pod names a PriorityClass of value 1000 (``priorityClassName``); the Priority
admission plugin resolves it to ``spec.priority``, as on a real cluster (which refuses a pod that
sets ``spec.priority`` itself). The low-priority pods name none: priority 0.

    python3 examples/preemption.py [--kubeconfig FILE]
"""

from __future__ import annotations

import sys

from kubernetes import client

import scenario as scenario_


def pod(s: scenario_.Scenario, name: str, *, priority_class: str | None = None) -> client.V1Pod:
    container = client.V1Container(name="app", image="registry.k8s.io/pause:3.9", resources=client.V1ResourceRequirements(requests={"cpu": "1"}))
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels=s.labels),
                        spec=client.V1PodSpec(node_selector=s.labels, priority_class_name=priority_class, containers=[container]))  # fmt: skip


def scenario(s: scenario_.Scenario) -> None:
    node_name = f"{s.name}-node"
    capacity = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    node = client.V1Node(metadata=client.V1ObjectMeta(name=node_name, labels={**s.labels, "kubernetes.io/hostname": node_name}),
                         status=client.V1NodeStatus(capacity=capacity, allocatable=capacity))  # fmt: skip
    s.core.create_node(node)
    s.say(f"{node_name} created with 2 CPUs")

    for name in ("low-1", "low-2"):
        s.core.create_namespaced_pod(s.namespace, pod(s, name))
        s.wait_running(name)
        s.say(f"{name} (priority 0, 1 CPU) is Running on {node_name}")

    high = f"{s.name}-high"
    client.SchedulingV1Api(s.core.api_client).create_priority_class(client.V1PriorityClass(metadata=client.V1ObjectMeta(name=high, labels=s.labels), value=1000))
    s.core.create_namespaced_pod(s.namespace, pod(s, "important", priority_class=high))
    s.check(s.pod("important")["spec"]["priority"] == 1000, "important's priority resolved from its PriorityClass")
    s.say("important (priority 1000, 1 CPU) created: the node is full")

    nominated = s.wait_for(lambda: s.core.read_namespaced_pod("important", s.namespace).status.nominated_node_name, "important to be nominated")
    s.check(nominated == node_name, f"important nominated to {node_name}, not {nominated}")
    s.say(f"important: status.nominatedNodeName={nominated}")
    failed = [m for reason, m in s.events("important") if reason == "FailedScheduling"]
    s.check(failed and "Insufficient cpu" in failed[0], f"important first failed for lack of cpu: {failed}")
    s.say(f"Event FailedScheduling: {failed[0]}")

    preempted = s.wait_for(lambda: [(n, m) for n in ("low-1", "low-2") for r, m in s.events(n) if r == "Preempted"], "a Preempted Event")
    s.check(len(preempted) == 1, f"exactly one victim: {preempted}")
    victim, message = preempted[0]
    s.say(f"{victim}: Event Preempted: {message}")

    running = s.wait_running("important")
    s.check(running["spec"]["nodeName"] == node_name, f"important bound to {node_name}")
    s.say(f"important is bound to {node_name} and Running")
    s.wait_for(lambda: victim not in [p.metadata.name for p in s.core.list_namespaced_pod(s.namespace).items], f"{victim} to be gone")
    survivors = sorted(p.metadata.name for p in s.core.list_namespaced_pod(s.namespace).items)
    s.check(survivors == sorted({"low-1", "low-2", "important"} - {victim}), f"the other low-priority pod stays: {survivors}")
    s.say(f"{victim} is gone; on {node_name} now: {', '.join(survivors)}")


if __name__ == "__main__":
    sys.exit(scenario_.run("preemption", scenario, __doc__.splitlines()[0]))
