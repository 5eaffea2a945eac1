"""TaintToleration: NoSchedule and NoExecute taints a pod does not tolerate keep it off a node;
untolerated PreferNoSchedule taints lower the node's score (kube's plugin)."""

from __future__ import annotations

from mockapi.controllers.scheduler import events, pods as pods_, status as status_
from mockapi.controllers.scheduler.plugin import Plugin, default_normalize


def taints(node_info) -> list[dict]:
    return node_info.spec().get("taints") or []


def untolerated(node_taints: list[dict], tolerations: list[dict], effects: tuple[str, ...]) -> dict | None:
    """The first taint with one of ``effects`` that no toleration tolerates (kube's
    ``FindMatchingUntoleratedTaint``)."""
    for taint in node_taints:
        if taint.get("effect") in effects and not pods_.tolerates(tolerations, taint):
            return taint
    return None


class TaintToleration(Plugin):
    NAME = "TaintToleration"
    PURE_FILTER = True
    PURE_SCORE = True
    EVENTS = (events.NODE_ADD, events.NODE_UPDATE)

    def filter(self, state, pod, node_info):
        node_taints = taints(node_info)
        if not node_taints:
            return status_.SUCCESS
        taint = untolerated(node_taints, pods_.tolerations(pod), ("NoSchedule", "NoExecute"))
        if taint is None:
            return status_.SUCCESS
        return status_.unresolvable(f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}")

    def pre_score(self, state, pod, node_infos):
        # Tolerations that could match PreferNoSchedule taints (empty effect matches every effect).
        state[self.NAME] = [t for t in pods_.tolerations(pod) if t.get("effect") in (None, "", "PreferNoSchedule")]
        return status_.SUCCESS

    def score(self, state, pod, node_info):
        node_taints = taints(node_info)
        if not node_taints:
            return 0
        tolerations = state.get(self.NAME)
        if tolerations is None:
            tolerations = pods_.tolerations(pod)
        return sum(1 for t in node_taints if t.get("effect") == "PreferNoSchedule" and not pods_.tolerates(tolerations, t))

    def normalize_score(self, state, pod, scores):
        default_normalize(scores, reverse=True)
