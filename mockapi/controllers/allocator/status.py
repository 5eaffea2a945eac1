"""The claim status the allocator writes, and the Events it records (rule 13).

Only the allocator's own fields change: ``allocations``, ``classConfigs``, ``claimConfigs``,
``nodeName`` and the ``Allocated`` condition. ``deviceStatuses``, ``podNames`` and any other
condition belong to others and are kept as they are. The condition follows
``meta.SetStatusCondition``: ``lastTransitionTime`` moves only when the status flips.
"""

from __future__ import annotations

import copy

from mockapi import quantity as quantities
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.search import Solution

MESSAGE_DEVICES = 20


def entries(solution: Solution) -> list[dict]:
    """``status.allocations``: one entry per device, in claim-entry order."""
    found = []
    for picks in solution.picks:
        for pick in picks:
            entry = {"devicePoolName": pick.device.pool.name, "deviceName": pick.device.name}
            if pick.amounts:
                entry["allocations"] = [{"name": n, "allocation": str(quantities.Quantity(a, f))} for n, a, f in pick.amounts]
            if pick.option.admin:
                entry["adminAccess"] = True
            found.append(entry)
    return found


def allocated(claim: dict, solution: Solution, configs: tuple[list, list], *, generation: int, now: str) -> dict:
    status = _base(claim)
    status["allocations"] = entries(solution)
    class_configs, claim_configs = configs
    _set(status, "classConfigs", class_configs)
    _set(status, "claimConfigs", claim_configs)
    _set(status, "nodeName", solution.node if solution.uses_node else None)
    _condition(status, "True", kinds.ALLOCATED, allocated_message(solution), generation, now)
    return status


def failed(claim: dict, failure: kinds.Failure, *, generation: int, now: str) -> dict:
    status = _base(claim)
    for name in ("allocations", "classConfigs", "claimConfigs", "nodeName"):
        status.pop(name, None)
    _condition(status, "False", failure.reason, failure.message, generation, now)
    return status


def allocated_message(solution: Solution) -> str:
    devices = [f"{p.device.pool.name}/{p.device.name}" for picks in solution.picks for p in picks]
    shown = ", ".join(devices[:MESSAGE_DEVICES]) + (f", and {len(devices) - MESSAGE_DEVICES} more" if len(devices) > MESSAGE_DEVICES else "")
    where = f"on node {solution.node}" if solution.uses_node else "from network-attached pools"
    return f"allocated {len(devices)} device{'s' if len(devices) != 1 else ''} {where}: {shown}"


def condition_of(claim: dict) -> dict | None:
    for item in (claim.get("status") or {}).get("conditions") or []:
        if item.get("type") == kinds.CONDITION:
            return item
    return None


def _base(claim: dict) -> dict:
    return copy.deepcopy(claim.get("status") or {})


def _set(status: dict, name: str, value) -> None:
    if value:
        status[name] = value
    else:
        status.pop(name, None)


def _condition(status: dict, value: str, reason: str, message: str, generation: int, now: str) -> None:
    conditions = status.setdefault("conditions", [])
    current = next((c for c in conditions if c.get("type") == kinds.CONDITION), None)
    fresh = {
        "type": kinds.CONDITION,
        "status": value,
        "observedGeneration": generation,
        "lastTransitionTime": now if current is None or current.get("status") != value else current.get("lastTransitionTime", now),
        "reason": reason,
        "message": message[:32768],
    }
    if current is None:
        conditions.append(fresh)
    else:
        conditions[conditions.index(current)] = fresh


def event(claim: dict, *, reason: str, message: str, warning: bool, now: str, name: str) -> dict:
    """A core/v1 Event on the claim (``kubectl describe`` shows it)."""
    meta = claim["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta.get("namespace", "default")},
        "involvedObject": {
            "apiVersion": claim.get("apiVersion", kinds.API_VERSION),
            "kind": claim.get("kind", kinds.CLAIMS.kind),
            "namespace": meta.get("namespace", ""),
            "name": meta["name"],
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        },
        "reason": reason,
        "message": message[:1024],
        "type": "Warning" if warning else "Normal",
        "source": {"component": kinds.COMPONENT},
        "reportingComponent": kinds.COMPONENT,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
