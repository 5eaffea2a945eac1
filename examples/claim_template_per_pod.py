"""A DeviceClaimTemplate: each pod gets a claim of its own, on the node with the devices; a pod that
goes takes its claim with it, and the freed device goes to the pod that waited for it.

Two nodes, one with a DevicePool of two GPUs; a template asking for one GPU; three pods naming it.
The pods' claims controller makes one DeviceClaim per pod (``<pod>-gpu-<random>``, owned by the
pod), the scheduler allocates each with the node in the pod's cycle: two pods go to the GPU node,
the third waits (``cannot allocate all claims``). Deleting a bound pod lets the garbage collector
delete its claim, which frees its GPU: the waiting pod is retried at once and gets it.

    python3 examples/claim_template_per_pod.py [--kubeconfig FILE]
"""

from __future__ import annotations

import sys

from kubernetes import client

import scenario as scenario_

DRIVER = "gpu.claim-template.example.com"  # this scenario's own driver: no other pool matches its class
PODS = ("trainer-a", "trainer-b", "trainer-c")


def pod(s: scenario_.Scenario, name: str) -> dict:
    container = {"name": "trainer", "image": "registry.k8s.io/pause:3.9", "devices": [{"name": "gpu"}]}
    spec = {"nodeSelector": s.labels, "containers": [container], "deviceClaims": [{"name": "gpu", "claimTemplateName": "one-gpu"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": s.meta(name), "spec": spec}


def claim_of(s: scenario_.Scenario, pod_name: str) -> str | None:
    statuses = (s.pod(pod_name).get("status") or {}).get("deviceClaimStatuses") or []
    return statuses[0]["deviceClaimName"] if statuses else None


def devices(claim: dict) -> list[str]:
    return [f"{a['devicePoolName']}/{a['deviceName']}" for a in (claim.get("status") or {}).get("allocations") or []]


def create_cluster(s: scenario_.Scenario) -> str:
    gpu_node, plain_node = f"{s.name}-gpu-node", f"{s.name}-cpu-node"
    for name in (gpu_node, plain_node):
        s.core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=name, labels={**s.labels, "kubernetes.io/hostname": name})))
    s.resource("DeviceClass").create(body={"apiVersion": scenario_.DEVICES, "kind": "DeviceClass", "metadata": s.meta(f"{s.name}-gpu"),
                                           "spec": {"driver": DRIVER, "deviceType": "gpu"}})  # fmt: skip
    pool = {"nodeName": gpu_node, "driver": DRIVER, "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}
    s.resource("DevicePool").create(body={"apiVersion": scenario_.DEVICES, "kind": "DevicePool", "metadata": s.meta(f"{gpu_node}-gpus"), "spec": pool})
    s.say(f"nodes {gpu_node} (DevicePool with gpu-0, gpu-1) and {plain_node} (no devices) created")
    template = {"metadata": {"labels": s.labels}, "spec": {"claims": [{"deviceClass": f"{s.name}-gpu"}]}}
    s.resource("DeviceClaimTemplate").create(body={"apiVersion": scenario_.DEVICES, "kind": "DeviceClaimTemplate", "metadata": s.meta("one-gpu"), "spec": template},
                                             namespace=s.namespace)  # fmt: skip
    s.say("DeviceClaimTemplate one-gpu created (one device of class claim-template-gpu)")
    return gpu_node


def scenario(s: scenario_.Scenario) -> None:
    gpu_node = create_cluster(s)
    for name in PODS:
        s.resource("Pod", "v1").create(body=pod(s, name), namespace=s.namespace)
    s.say(f"pods {', '.join(PODS)} created, each naming the template")

    made = {name: s.wait_for(lambda name=name: claim_of(s, name), f"the claim of {name}") for name in PODS}
    s.check(len(set(made.values())) == len(PODS), f"one claim per pod: {made}")
    claims = s.claims()
    for name in PODS:
        owner = claims[made[name]]["metadata"]["ownerReferences"][0]
        s.check(owner["kind"] == "Pod" and owner["name"] == name, f"{made[name]} is owned by {name}: {owner}")
        s.say(f"{name} got its own claim {made[name]} (owned by Pod {name})")

    bound = s.wait_for(lambda: (found := {n: p["spec"]["nodeName"] for n, p in s.pods().items() if p["spec"].get("nodeName")}) and len(found) == 2 and found,
                       "two pods to bind")  # fmt: skip
    for name, node_name in sorted(bound.items()):
        claim = s.claims()[made[name]]
        s.check(node_name == gpu_node and claim["status"]["nodeName"] == gpu_node, f"{name} and its claim on {gpu_node}")
        s.say(f"{name} is bound to {node_name}, its claim holds {', '.join(devices(claim))}")
    (waiting,) = set(PODS) - set(bound)
    message = s.scheduling_message(waiting, "cannot allocate all claims")
    s.say(f"{waiting} is Pending: {message}")

    victim = sorted(bound)[0]
    freed = devices(s.claims()[made[victim]])
    s.resource("Pod", "v1").delete(name=victim, namespace=s.namespace)
    s.say(f"{victim} deleted")
    s.wait_for(lambda: made[victim] not in s.claims(), f"{made[victim]} to be deleted with its pod")
    s.say(f"{made[victim]} deleted by the garbage collector, {', '.join(freed)} freed")
    s.wait_running(waiting)
    claim = s.claims()[made[waiting]]
    s.check(devices(claim) == freed, f"{waiting}'s claim holds the freed {freed}, not {devices(claim)}")
    s.say(f"{waiting} is bound to {s.pod(waiting)['spec']['nodeName']} and Running, its claim holds {', '.join(devices(claim))}")
    held = sorted(d for c in s.claims().values() for d in devices(c))
    s.check(len(held) == len(set(held)) == 2, f"no device held twice: {held}")


if __name__ == "__main__":
    sys.exit(scenario_.run("claim-template", scenario, __doc__.splitlines()[0]))
