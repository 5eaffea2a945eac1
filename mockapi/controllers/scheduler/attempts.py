"""What happened in each pod's last scheduling attempt — what kube-scheduler only hints at in
``FailedScheduling`` messages and verbosity-10 logs.

The framework fills one :class:`Attempt` per scheduling cycle (``state.attempt``) with what it has
computed anyway — PreFilter's verdict, each node's rejecting status (in-tree plugin or extender),
each extender's filter result, each score plugin's normalized scores and weight, each extender's
scores, the totals, the extender calls — as references, so recording costs next to nothing;
:meth:`Attempt.as_dict` turns it into JSON only when asked. The controller adds the outcome
(``Scheduled``, ``Unschedulable``, ``SchedulerError``; ``Binding`` or ``Waiting`` while the binding
cycle runs) and keeps the last attempt of each pod in an :class:`AttemptLog` (the oldest dropped
beyond ``max_pods``).

``as_dict()``::

    {"pod": {"namespace", "name", "uid"}, "schedulerName", "time", "outcome", "node", "message",
     "nominatedNode", "nodes": <count>, "feasibleNodes": <count>,
     "preFilter": {"plugin", "code", "reasons"} | null,
     "filter": [{"node", "feasible", "verdicts": [{"plugin"|"extender", "code", "reasons"?}, ...]}],
     "scores": [{"node", "total", "scores": [{"plugin"|"extender", "score", "weight", "weighted"}]}],
     "extenderCalls": [{"extender", "verb", "url", "latencyMs", "outcome", "error"?, "ignored"?}]}

Scores: a plugin's is its normalized score (0..100) times its weight; an extender's is its reply
(0..10) times its weight times 10, as kube adds them.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from mockapi.controllers.scheduler.status import Status

DEFAULT_MAX_PODS = 10_000
SCHEDULED, UNSCHEDULABLE, SCHEDULER_ERROR, BINDING, WAITING = "Scheduled", "Unschedulable", "SchedulerError", "Binding", "Waiting"


@dataclass(slots=True)
class ExtenderFilter:
    extender: str
    sent: list[str]
    kept: list[str] | None = None  # None: the call failed (see the calls)
    error: str = ""


@dataclass(slots=True)
class Attempt:
    namespace: str
    name: str
    uid: str
    scheduler_name: str
    time: str = ""
    num_nodes: int = 0
    filter_plugins: tuple[str, ...] = ()
    skipped_filters: frozenset = frozenset()
    pre_filter: Status | None = None
    all_nodes: list[str] = field(default_factory=list)  # the nodes of the cycle, by name (empty: PreFilter rejected)
    restricted: set[str] | None = None  # PreFilter's restriction: only these were filtered
    statuses: dict[str, Status] = field(default_factory=dict)  # node → why it is out (plugin or extender)
    extender_filters: list[ExtenderFilter] = field(default_factory=list)
    feasible: list[str] = field(default_factory=list)
    plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict)  # plugin → node → normalized
    weights: dict[str, int] = field(default_factory=dict)
    extender_scores: dict[str, tuple[int, dict[str, int]]] = field(default_factory=dict)  # extender → (weight, node → reply)
    totals: dict[str, int] = field(default_factory=dict)
    calls: list = field(default_factory=list)  # extenders.Call
    node: str = ""
    nominated_node: str = ""
    outcome: str = ""
    message: str = ""

    # ------------------------------------------------------------------ rendering
    def as_dict(self) -> dict:
        return {
            "pod": {"namespace": self.namespace, "name": self.name, "uid": self.uid},
            "schedulerName": self.scheduler_name,
            "time": self.time,
            "outcome": self.outcome,
            "node": self.node,
            "message": self.message,
            "nominatedNode": self.nominated_node,
            "nodes": self.num_nodes,
            "feasibleNodes": len(self.feasible),
            "preFilter": _status(self.pre_filter, "plugin", self.pre_filter.plugin) if self.pre_filter is not None else None,
            "filter": [self._node_filters(name) for name in self.all_nodes],
            "scores": self._scores(),
            "extenderCalls": [call.as_dict() for call in self.calls],
        }  # fmt: skip

    def _node_filters(self, name: str) -> dict:
        status = self.statuses.get(name)
        if self.restricted is not None and name not in self.restricted:
            return {"node": name, "feasible": False, "verdicts": [_status(status, "plugin", None)] if status is not None else []}
        rejected_by = status.plugin if status is not None else None
        verdicts = []
        for plugin in self.filter_plugins:
            if plugin in self.skipped_filters:
                continue
            if plugin == rejected_by:
                verdicts.append(_status(status, "plugin", plugin))
                return {"node": name, "feasible": False, "verdicts": verdicts}
            verdicts.append({"plugin": plugin, "code": "Success"})
        for result in self.extender_filters:
            if name not in result.sent:
                break
            if result.kept is None:
                verdicts.append({"extender": result.extender, "code": "Error", "reasons": [result.error]})
                continue  # an ignorable extender: the next one had the same nodes
            if name in result.kept:
                verdicts.append({"extender": result.extender, "code": "Success"})
            elif status is not None and status.plugin == result.extender:
                verdicts.append(_status(status, "extender", result.extender))
            else:
                verdicts.append({"extender": result.extender, "code": "Unschedulable", "reasons": ["not kept by the extender (no reason given)"]})
        return {"node": name, "feasible": name in self.feasible, "verdicts": verdicts}

    def _scores(self) -> list[dict]:
        rows = []
        for name, total in sorted(self.totals.items(), key=lambda item: (-item[1], item[0])):
            parts = [
                {"plugin": plugin, "score": scores[name], "weight": self.weights.get(plugin, 1), "weighted": scores[name] * self.weights.get(plugin, 1)}
                for plugin, scores in self.plugin_scores.items() if name in scores
            ]  # fmt: skip
            for extender, (weight, scores) in self.extender_scores.items():
                if name in scores:
                    parts.append({"extender": extender, "score": scores[name], "weight": weight, "weighted": scores[name] * weight * 10})
            rows.append({"node": name, "total": total, "scores": parts})
        return rows


def _status(status: Status, kind: str, name) -> dict:
    found = {kind: name, "code": status.code.value}
    if status.reasons:
        found["reasons"] = list(status.reasons)
    return found


class AttemptLog:
    """The last attempt of each pod (``namespace/name``), the least recently updated dropped first."""

    def __init__(self, max_pods: int = DEFAULT_MAX_PODS) -> None:
        self.max_pods = max_pods
        self._attempts: OrderedDict[str, Attempt] = OrderedDict()

    def put(self, attempt: Attempt) -> None:
        key = f"{attempt.namespace}/{attempt.name}"
        self._attempts[key] = attempt
        self._attempts.move_to_end(key)
        while len(self._attempts) > self.max_pods:
            self._attempts.popitem(last=False)

    def get(self, namespace: str, name: str) -> Attempt | None:
        return self._attempts.get(f"{namespace}/{name}")

    def __len__(self) -> int:
        return len(self._attempts)
