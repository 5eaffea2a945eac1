"""A gang: pods of one group wait until the whole group can go, then bind together.

The Coscheduling Permit plugin (the scheduler-plugins' lightweight coscheduling): pods labelled
``scheduling.x-k8s.io/pod-group: <group>`` with the annotation ``scheduling.x-k8s.io/min-available:
<N>`` are held back in PreFilter while fewer than N pods of the group exist, then assumed on a node
and wait in Permit until N pods of the group are assigned. Here the first N-1 members wait — none
is bound — and the N-th lets them all go.

    python3 examples/gang.py [--kubeconfig FILE]
"""

from __future__ import annotations

import sys
import time

from kubernetes import client

import scenario as scenario_

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
MIN_AVAILABLE = "scheduling.x-k8s.io/min-available"
SIZE = 3
QUIET = 0.5  # seconds the first members are given to (not) bind


def member(s: scenario_.Scenario, name: str) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={**s.labels, GROUP_LABEL: "training"}, annotations={MIN_AVAILABLE: str(SIZE)}),
        spec=client.V1PodSpec(node_selector=s.labels, containers=[client.V1Container(name="worker", image="registry.k8s.io/pause:3.9")]),
    )


def bound(s: scenario_.Scenario) -> dict[str, str]:
    return {p.metadata.name: p.spec.node_name for p in s.core.list_namespaced_pod(s.namespace).items if p.spec.node_name}


def scenario(s: scenario_.Scenario) -> None:
    for i in range(2):
        name = f"{s.name}-node{i}"
        s.core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=name, labels={**s.labels, "kubernetes.io/hostname": name})))
    s.say(f"nodes created: {s.name}-node0, {s.name}-node1")

    names = [f"worker-{i}" for i in range(SIZE)]
    for name in names[:-1]:
        s.core.create_namespaced_pod(s.namespace, member(s, name))
        s.say(f"{name} created (pod group training, min-available {SIZE})")
    time.sleep(QUIET)
    early = bound(s)
    s.check(not early, f"no member binds before the group is complete, but {early}")
    s.say(f"after {QUIET:g} s, {SIZE - 1} of {SIZE} members created: none bound, they wait for their siblings")

    s.core.create_namespaced_pod(s.namespace, member(s, names[-1]))
    s.say(f"{names[-1]} created: the group is complete")
    started = time.monotonic()
    everyone = s.wait_for(lambda: (found := bound(s)) and len(found) == SIZE and found, "every member to bind")
    s.say(f"all {SIZE} members bound, {(time.monotonic() - started) * 1000:.0f} ms after the last one's creation")
    for name in names:
        s.say(f"{name} is bound to {everyone[name]}")
    for name in names:
        s.wait_running(name)
    s.say(f"all {SIZE} members Running")


if __name__ == "__main__":
    sys.exit(scenario_.run("gang", scenario, __doc__.splitlines()[0]))
