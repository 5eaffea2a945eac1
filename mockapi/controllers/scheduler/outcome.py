"""What the scheduler writes, as kube-scheduler writes it: the pod's ``PodScheduled`` condition
(and ``nominatedNodeName``) on failure, the v1 Binding on success, and Events (``Scheduled``,
``FailedScheduling``) on the pod.

The condition follows kube's ``updatePod``: ``lastTransitionTime`` moves only when the status flips;
a patch that would change nothing is not sent (:func:`unschedulable_patch` returns None), so a pod
retried with the same verdict does not write again.
"""

from __future__ import annotations

from mockapi.client import Kind

PODS = Kind("v1", "Pod")
NODES = Kind("v1", "Node")
CONDITION = "PodScheduled"
UNSCHEDULABLE = "Unschedulable"
SCHEDULER_ERROR = "SchedulerError"
EVENT_MESSAGE_LIMIT = 1024


def binding(pod: dict, node_name: str) -> dict:
    """The v1 Binding a binder POSTs to ``pods/{name}/binding``."""
    meta = pod["metadata"]
    return {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": meta["name"], "namespace": meta.get("namespace", ""), "uid": meta.get("uid", "")},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }  # fmt: skip


def scheduled_message(pod: dict, node_name: str) -> str:
    meta = pod["metadata"]
    return f"Successfully assigned {meta.get('namespace', '')}/{meta['name']} to {node_name}"


def unschedulable_patch(pod: dict, *, reason: str, message: str, now: str, nominated_node: str = "") -> dict | None:
    """The ``/status`` merge patch that records the failure, or None when the pod shows it already."""
    status = pod.get("status") or {}
    conditions = list(status.get("conditions") or [])
    current = next((c for c in conditions if c.get("type") == CONDITION), None)
    same = current is not None and (current.get("status"), current.get("reason"), current.get("message")) == ("False", reason, message)
    if same and (not nominated_node or status.get("nominatedNodeName") == nominated_node):
        return None
    fresh = {
        "type": CONDITION, "status": "False", "lastProbeTime": None,
        "lastTransitionTime": current.get("lastTransitionTime", now) if current is not None and current.get("status") == "False" else now,
        "reason": reason, "message": message,
    }  # fmt: skip
    if current is None:
        conditions.append(fresh)
    else:
        conditions[conditions.index(current)] = fresh
    patch = {"status": {"conditions": conditions}}
    if nominated_node:
        patch["status"]["nominatedNodeName"] = nominated_node
    return patch


def event(pod: dict, *, reason: str, message: str, warning: bool, now: str, name: str, component: str) -> dict:
    """A core/v1 Event on the pod (``kubectl describe pod`` shows it), reported by the scheduler profile."""
    meta = pod["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta.get("namespace", "default")},
        "involvedObject": {
            "apiVersion": "v1", "kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"],
            "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", ""),
        },
        "reason": reason,
        "message": message[:EVENT_MESSAGE_LIMIT],
        "type": "Warning" if warning else "Normal",
        "source": {"component": component},
        "reportingComponent": component,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }  # fmt: skip
