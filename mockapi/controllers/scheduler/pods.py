"""What the scheduler reads from a Pod dict: its key, priority, creation time, and the resources it
requests, computed as kube-scheduler computes them (``k8s.io/component-helpers/resource``):

- the containers' requests summed;
- each init container runs alone, so the pod needs at least the largest of them — except that a
  *restartable* init container (a sidecar, ``restartPolicy: Always``) keeps running: it adds to
  every init container that starts after it and to the main containers;
- ``spec.overhead`` (the runtime class's) on top;
- ``pods``: one.

Quantities become integers as kube's ``Resource`` holds them: ``cpu`` in millicores, the rest in
units, rounded up. Scoring uses the "non-zero" requests: a container that requests no cpu counts
100m, no memory 200Mi (kube's ``DefaultMilliCPURequest`` and ``DefaultMemoryRequest``).
"""

from __future__ import annotations

import functools
import math

from mockapi import quantity as quantities

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Resources = dict[str, int]  # resource name → amount (cpu in millicores)


def key(pod: dict) -> str:
    """``namespace/name``: how the queue, the snapshot and the messages name a pod."""
    meta = pod["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def priority(pod: dict) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


def created(pod: dict) -> str:
    return pod["metadata"].get("creationTimestamp", "")


@functools.lru_cache(maxsize=4096)
def amount(name: str, text) -> int:
    """One quantity as kube's ``Resource`` holds it: ``MilliValue()`` for cpu, ``Value()`` (rounded up)
    otherwise. Remembered: every pod event the scheduler's informer sees counts the pod's requests
    again, and pods of one template ask for the same few quantities."""
    value = quantities.parse(text).value
    return math.ceil(value * 1000) if name == CPU else math.ceil(value)


def resource_list(values: dict | None) -> Resources:
    return {name: amount(name, text) for name, text in (values or {}).items()}


def _requests(container: dict) -> Resources:
    return resource_list((container.get("resources") or {}).get("requests"))


def _add(into: Resources, more: Resources) -> None:
    for name, value in more.items():
        into[name] = into.get(name, 0) + value


def _max(into: Resources, other: Resources) -> None:
    for name, value in other.items():
        into[name] = max(into.get(name, 0), value)


def requests(pod: dict, *, non_zero: bool = False) -> Resources:
    """What the pod asks of a node (without the ``pods`` count). ``non_zero``: scoring's variant."""
    spec = pod.get("spec") or {}
    total: Resources = {}
    for container in spec.get("containers") or []:
        _add(total, _non_zero(_requests(container)) if non_zero else _requests(container))
    sidecars: Resources = {}
    largest_init: Resources = {}
    for container in spec.get("initContainers") or []:
        wanted = _non_zero(_requests(container)) if non_zero else _requests(container)
        if container.get("restartPolicy") == "Always":
            _add(sidecars, wanted)
            _max(largest_init, sidecars)
        else:
            running = dict(sidecars)
            _add(running, wanted)
            _max(largest_init, running)
    _add(total, sidecars)
    _max(total, largest_init)
    _add(total, resource_list(spec.get("overhead")))
    return total


def _non_zero(requested: Resources) -> Resources:
    found = dict(requested)
    found.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    found.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return found


def is_scalar(name: str) -> bool:
    """Extended resources (``example.com/foo``), hugepages and attachable volumes: kube's scalar resources."""
    return name not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) and ("/" in name or name.startswith("hugepages-"))


def tolerations(pod: dict) -> list[dict]:
    return (pod.get("spec") or {}).get("tolerations") or []


def tolerates(tolerations_: list[dict], taint: dict) -> bool:
    """``v1.Toleration.ToleratesTaint``: effect (empty matches all), key (empty with Exists matches
    all), then Exists, or Equal (the default) on the value."""
    return any(_tolerates(t, taint) for t in tolerations_)


def _tolerates(toleration: dict, taint: dict) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key_ = toleration.get("key") or ""
    if key_ and key_ != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")
