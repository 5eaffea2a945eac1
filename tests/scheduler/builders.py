"""Pods and Nodes in a line, as the API returns them, and a fake monotonic clock."""

from __future__ import annotations

import itertools

_created = itertools.count()


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def node(name: str, *, cpu="4", memory="8Gi", pods=110, labels=None, taints=None, unschedulable=False, extended=None) -> dict:
    allocatable = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extended or {})}
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec, "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }  # fmt: skip


def pod(name: str, *, namespace="default", cpu=None, memory=None, priority=None, node_name=None, labels=None, annotations=None,
        created=None, spec=None, requests=None, start=None) -> dict:  # fmt: skip
    wanted = dict(requests or {})
    if cpu is not None:
        wanted["cpu"] = cpu
    if memory is not None:
        wanted["memory"] = memory
    container = {"name": "main", "image": "busybox"}
    if wanted:
        container["resources"] = {"requests": wanted}
    body = {"containers": [container], "schedulerName": "default-scheduler", **(spec or {})}
    if priority is not None:
        body["priority"] = priority
    if node_name:
        body["nodeName"] = node_name
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "creationTimestamp": created or f"2024-01-01T00:00:{next(_created) % 60:02d}Z"}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    status = {"phase": "Pending"}
    if start:
        status["startTime"] = start
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body, "status": status}
