"""Every node cordoned: the pod stays Pending with kube's reason; one node uncordoned: it binds there.

mini-kube-scheduler's first scenario, continued: nodes created with ``spec.unschedulable: true``
(what ``kubectl cordon`` sets), a pod that the NodeUnschedulable filter keeps off all of them, then
``kubectl uncordon`` of one node — a Node update, one of the events that move an unschedulable pod
back into the scheduling queue — and the pod is bound to that node and started by its kubelet.

    python3 examples/unschedulable_then_schedulable.py [--kubeconfig FILE]
"""

from __future__ import annotations

import sys

from kubernetes import client

import scenario as scenario_

NODES = 3


def scenario(s: scenario_.Scenario) -> None:
    names = [f"{s.name}-node{i}" for i in range(NODES)]
    for name in names:
        node = client.V1Node(metadata=client.V1ObjectMeta(name=name, labels={**s.labels, "kubernetes.io/hostname": name}),
                             spec=client.V1NodeSpec(unschedulable=True))  # fmt: skip
        s.core.create_node(node)
    s.say(f"all nodes created, all unschedulable: {', '.join(names)}")

    # The pod may only go to this scenario's nodes (others may exist on a shared server).
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="pod1", labels=s.labels),
        spec=client.V1PodSpec(node_selector=s.labels, containers=[client.V1Container(name="container1", image="registry.k8s.io/pause:3.9")]),
    )
    s.core.create_namespaced_pod(s.namespace, pod)
    s.say("pod1 created")

    message = s.scheduling_message("pod1", f"{NODES} node(s) were unschedulable.")
    s.say(f"pod1 is Pending: {message}")
    s.check(s.core.read_namespaced_pod("pod1", s.namespace).spec.node_name is None, "pod1 is not bound")
    failed = [m for reason, m in s.events("pod1") if reason == "FailedScheduling"]
    s.check(failed and failed[-1] == message, f"a FailedScheduling Event with the same message: {failed}")
    s.say(f"Event FailedScheduling: {failed[-1]}")

    chosen = names[1]
    s.core.patch_node(chosen, {"spec": {"unschedulable": False}})
    s.say(f"{chosen} uncordoned")

    running = s.wait_running("pod1")
    node_name = running["spec"]["nodeName"]
    s.check(node_name == chosen, f"pod1 went to {chosen}, not {node_name}")
    s.say(f"pod1 is bound to {node_name}")
    s.check(("Scheduled", f"Successfully assigned {s.namespace}/pod1 to {chosen}") in s.events("pod1"), "a Scheduled Event")
    s.say(f"Event Scheduled: Successfully assigned {s.namespace}/pod1 to {chosen}")
    s.say(f"pod1 is Running on {node_name} with IP {running['status']['podIP']}")


if __name__ == "__main__":
    sys.exit(scenario_.run("unschedulable", scenario, __doc__.splitlines()[0]))
