"""What the simulated kubelet writes, as pure functions of what it read: a Node's status (defaults
for a bare Node, the kubelet's four conditions, heartbeats), a started Pod's status, the claims a
pod waits for, and its Events (kube's reasons and wording; ``kubectl describe`` shows them).

Container and image IDs are derived from the pod's uid and the image name, so writing a pod's
status twice writes the same thing.
"""

from __future__ import annotations

import hashlib

from mockapi import __version__

COMPONENT = "kubelet"
READY = "Ready"
# kube's kubelet posts these four (pkg/kubelet/nodestatus/setters.go), Ready last.
NODE_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    (READY, "True", "KubeletReady", "kubelet is posting ready status"),
)
POD_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
RUNNING, PENDING = "Running", "Pending"
STARTED_PHASES = frozenset({"Running", "Succeeded", "Failed"})
KUBELET_PORT = 10250


# ------------------------------------------------------------------------- nodes
def needs_init(node: dict) -> bool:
    """A Node this kubelet has not (fully) reported on: resources, addresses, nodeInfo, Ready."""
    status = node.get("status") or {}
    if not status.get("capacity") or not status.get("allocatable") or not status.get("addresses"):
        return True
    if not (status.get("nodeInfo") or {}).get("kubeletVersion"):
        return True
    ready = next((c for c in status.get("conditions") or () if c.get("type") == READY), None)
    return ready is None or (ready.get("status"), ready.get("reason")) != ("True", "KubeletReady")


def node_status(node: dict, *, capacity: dict, address: str, kubelet_version: str, now: str) -> dict:
    """The status fields to write: the missing defaults, and the kubelet's conditions refreshed."""
    status = node.get("status") or {}
    name = node["metadata"]["name"]
    found: dict = {"conditions": _node_conditions(status.get("conditions") or [], now)}
    if not status.get("capacity"):
        found["capacity"] = dict(capacity)
    if not status.get("allocatable"):
        found["allocatable"] = dict(status.get("capacity") or capacity)
    if not status.get("addresses"):
        found["addresses"] = [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}]
    info = status.get("nodeInfo") or {}
    if not info.get("kubeletVersion"):
        found["nodeInfo"] = {**_node_info(name, kubelet_version), **info, "kubeletVersion": kubelet_version}
    if not status.get("daemonEndpoints"):
        found["daemonEndpoints"] = {"kubeletEndpoint": {"Port": KUBELET_PORT}}
    return found


def _node_info(name: str, kubelet_version: str) -> dict:
    machine = hashlib.md5(name.encode()).hexdigest()
    return {
        "machineID": machine,
        "systemUUID": f"{machine[:8]}-{machine[8:12]}-{machine[12:16]}-{machine[16:20]}-{machine[20:]}",
        "bootID": hashlib.md5(f"boot/{name}".encode()).hexdigest(),
        "kernelVersion": "",
        "osImage": "",
        "containerRuntimeVersion": f"mockapi://{__version__}",
        "kubeletVersion": kubelet_version,
        "kubeProxyVersion": "",
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


def _node_conditions(existing: list[dict], now: str) -> list[dict]:
    ours = {kind: (status, reason, message) for kind, status, reason, message in NODE_CONDITIONS}
    found, seen = [], set()
    for condition in existing:
        kind = condition.get("type")
        if kind in ours:
            seen.add(kind)
            condition = _node_condition(kind, *ours[kind], condition, now)
        found.append(condition)
    return found + [_node_condition(kind, *ours[kind], None, now) for kind, *_ in NODE_CONDITIONS if kind not in seen]


def _node_condition(kind: str, status: str, reason: str, message: str, before: dict | None, now: str) -> dict:
    same = before is not None and before.get("status") == status and before.get("lastTransitionTime")
    return {
        "type": kind, "status": status,
        "lastHeartbeatTime": now,
        "lastTransitionTime": before["lastTransitionTime"] if same else now,
        "reason": reason, "message": message,
    }  # fmt: skip


# -------------------------------------------------------------------------- pods
def started(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in STARTED_PHASES


def claim_names(pod: dict) -> list[tuple[str, str | None]]:
    """(entry, DeviceClaim name) per ``spec.deviceClaims`` entry: ``claimName`` as named, the
    others as ``status.deviceClaimStatuses`` records them (None: not created yet)."""
    made = {s.get("name"): s.get("deviceClaimName") for s in (pod.get("status") or {}).get("deviceClaimStatuses") or ()}
    return [(entry["name"], entry.get("claimName") or made.get(entry["name"])) for entry in (pod.get("spec") or {}).get("deviceClaims") or ()]


def claim_problem(pod: dict, claim: dict) -> str | None:
    """Why the pod may not use this claim yet (None: allocated and reserved for it)."""
    status, meta = claim.get("status") or {}, claim["metadata"]
    if not status.get("allocations"):
        return f"DeviceClaim {meta.get('namespace', '')}/{meta['name']} is not allocated"
    if pod["metadata"]["name"] not in (status.get("podNames") or ()):
        pod_meta = pod["metadata"]
        return f"pod {pod_meta['name']} ({pod_meta.get('uid', '')}) is not allowed to use DeviceClaim {meta['name']} ({meta.get('uid', '')})"
    return None


def container_id(pod: dict, name: str) -> str:
    return "containerd://" + hashlib.sha256(f"{pod['metadata'].get('uid', '')}/{name}".encode()).hexdigest()


def image_id(image: str) -> str:
    repository = image.split("@")[0].rsplit(":", 1)[0] if "/" in image or ":" in image else image
    return f"{repository}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def running_status(pod: dict, *, host_ip: str, pod_ip: str, now: str) -> dict:
    """The status of a started pod: Running, every condition True, containers running and ready,
    init containers Completed (sidecars running)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    start = status.get("startTime") or now
    return {
        "phase": RUNNING,
        "conditions": _pod_conditions(status.get("conditions") or [], now),
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": start,
        "initContainerStatuses": [_init_status(pod, c, now) for c in spec.get("initContainers") or ()],
        "containerStatuses": [_running(pod, c, now) for c in spec.get("containers") or ()],
    }


def _pod_conditions(existing: list[dict], now: str) -> list[dict]:
    kept = [c for c in existing if c.get("type") not in POD_CONDITIONS or (c.get("type") == "PodScheduled" and c.get("status") == "True")]
    have = {c.get("type") for c in kept}
    fresh = [{"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": now} for kind in POD_CONDITIONS if kind not in have]
    return fresh + kept


def _running(pod: dict, container: dict, now: str) -> dict:
    return {
        "name": container["name"],
        "image": container.get("image", ""),
        "imageID": image_id(container.get("image", "")),
        "containerID": container_id(pod, container["name"]),
        "ready": True,
        "started": True,
        "restartCount": 0,
        "state": {"running": {"startedAt": now}},
        "lastState": {},
    }


def _init_status(pod: dict, container: dict, now: str) -> dict:
    if container.get("restartPolicy") == "Always":  # a sidecar keeps running
        return _running(pod, container, now)
    found = _running(pod, container, now)
    found["started"] = False
    found["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now, "containerID": found["containerID"]}}
    return found


def terminated_status(pod: dict, *, now: str) -> dict:
    """The status of a pod whose containers stopped (it was deleted): each one exited 0, so the
    pod ``Succeeded``, as a kubelet reports it before the pod goes; not ready any more."""
    status = pod.get("status") or {}
    stopped = {"Ready": "PodCompleted", "ContainersReady": "PodCompleted", "PodReadyToStartContainers": ""}
    conditions = []
    for condition in status.get("conditions") or ():
        reason = stopped.get(condition.get("type"))
        if reason is not None and condition.get("status") != "False":
            condition = {**condition, "status": "False", "lastTransitionTime": now} | ({"reason": reason} if reason else {})
        conditions.append(condition)
    return {
        "phase": "Succeeded",
        "conditions": conditions,
        "containerStatuses": [_terminated(c, now) for c in status.get("containerStatuses") or ()],
        "initContainerStatuses": [_terminated(c, now) for c in status.get("initContainerStatuses") or ()],
    }


def _terminated(container: dict, now: str) -> dict:
    state = container.get("state") or {}
    if "running" not in state:
        return container
    started_at = state["running"].get("startedAt", now)
    terminated = {"exitCode": 0, "reason": "Completed", "startedAt": started_at, "finishedAt": now, "containerID": container.get("containerID", "")}
    return {**container, "ready": False, "started": False, "state": {"terminated": terminated}}


def containers(pod: dict) -> list[tuple[str, dict]]:
    """(fieldPath, container) in start order: init containers, then containers."""
    spec = pod.get("spec") or {}
    return [(f"spec.initContainers{{{c['name']}}}", c) for c in spec.get("initContainers") or ()] + [
        (f"spec.containers{{{c['name']}}}", c) for c in spec.get("containers") or ()
    ]


def event(pod: dict, *, reason: str, message: str, node: str, now: str, name: str, field_path: str = "", warning: bool = False) -> dict:
    """A core/v1 Event on the pod, as a kubelet records it (source ``kubelet`` on the node)."""
    meta = pod["metadata"]
    involved = {
        "apiVersion": "v1", "kind": "Pod",
        "namespace": meta.get("namespace", ""), "name": meta["name"],
        "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", ""),
    }  # fmt: skip
    if field_path:
        involved["fieldPath"] = field_path
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta.get("namespace", "default")},
        "involvedObject": involved,
        "reason": reason,
        "message": message[:1024],
        "type": "Warning" if warning else "Normal",
        "source": {"component": COMPONENT, "host": node},
        "reportingComponent": COMPONENT,
        "reportingInstance": node,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
