"""NodeAffinity: ``spec.nodeSelector`` and ``spec.affinity.nodeAffinity`` (kube's plugin).

Filter: every ``nodeSelector`` label must match, and one of the required ``nodeSelectorTerms``
(ORed; within a term, matchExpressions and matchFields ANDed; an empty term matches nothing; an
invalid requirement makes its term match nothing, as kube's parse error does). Score: the sum of
the weights of the preferred terms the node matches, normalized to 0..100 by the highest.
"""

from __future__ import annotations

from mockapi.controllers.scheduler import events, status as status_
from mockapi.controllers.scheduler.plugin import Plugin, default_normalize

REASON = "node(s) didn't match Pod's node affinity/selector"
CONSTRAINED = ("NodeAffinity", "constrained")  # the cycle state's key: does Filter have anything to check


def node_affinity(pod: dict) -> dict:
    return ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}


def matches_requirement(expression: dict, value: str | None) -> bool:
    """One ``NodeSelectorRequirement`` against a label (or field) value; None: absent."""
    operator, values = expression.get("operator"), expression.get("values") or []
    if operator == "In":
        return bool(values) and value is not None and value in values
    if operator == "NotIn":
        return bool(values) and (value is None or value not in values)
    if operator == "Exists":
        return not values and value is not None
    if operator == "DoesNotExist":
        return not values and value is None
    if operator in ("Gt", "Lt"):
        bound, have = _int(values[0]) if len(values) == 1 else None, _int(value)
        if bound is None or have is None:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def _int(text) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def matches_term(term: dict, node: dict) -> bool:
    """A ``NodeSelectorTerm``: its expressions (labels) and fields (``metadata.name``) all match."""
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    if not all(matches_requirement(e, labels.get(e.get("key", ""))) for e in expressions):
        return False
    return all(f.get("key") == "metadata.name" and f.get("operator") in ("In", "NotIn") and matches_requirement(f, node["metadata"]["name"]) for f in fields)


def matches_required(pod: dict, node: dict) -> bool:
    """``nodeSelector`` and the required node affinity (kube's ``RequiredNodeAffinity.Match``)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = (pod.get("spec") or {}).get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return any(matches_term(term, node) for term in required.get("nodeSelectorTerms") or [])


class NodeAffinity(Plugin):
    NAME = "NodeAffinity"
    PURE_FILTER = True
    PURE_SCORE = True
    EVENTS = (events.NODE_ADD, events.NODE_UPDATE)

    def filter(self, state, pod, node_info):
        constrained = state.get(CONSTRAINED)
        if constrained is None:  # whether the pod has a nodeSelector or a required affinity (once per cycle)
            spec = pod.get("spec") or {}
            constrained = state[CONSTRAINED] = bool(spec.get("nodeSelector")) or node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution") is not None
        if not constrained or matches_required(pod, node_info.node):
            return status_.SUCCESS
        return status_.unresolvable(REASON)

    def pre_score(self, state, pod, node_infos):
        preferred = node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution") or []
        if not preferred:
            return status_.skip()
        state[self.NAME] = preferred
        return status_.SUCCESS

    def score(self, state, pod, node_info):
        preferred = state.get(self.NAME)
        if preferred is None:  # PreScore did not run (kube computes the terms here then)
            preferred = node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution") or []
        return sum(int(t.get("weight", 0)) for t in preferred if matches_term(t.get("preference") or {}, node_info.node))

    def normalize_score(self, state, pod, scores):
        default_normalize(scores)
