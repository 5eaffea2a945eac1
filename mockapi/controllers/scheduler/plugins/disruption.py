"""PodDisruptionBudgets as DefaultPreemption reads them (kube's ``filterPodsWithPDBViolation``).

kube-scheduler lists every PDB (``policy/v1``) when it preempts and trusts each one's
``status.disruptionsAllowed``, which kube-controller-manager's disruption controller keeps. No
disruption controller runs in mockapi (the PDB strategy stores kube's zero status, so every
budget would read "0 allowed" for ever), so a budget whose status no controller has observed —
``status.observedGeneration`` missing or older than ``metadata.generation`` — is computed here,
as the disruption controller would (``pkg/controller/disruption``):

- the budget's pods: the pods of its namespace its selector matches (the scheduler's bound pods:
  a pod not bound is never healthy);
- ``minAvailable: N`` → expected = the pods, desired healthy = N; ``minAvailable: P%`` → expected
  = the pods that have a controller, desired = ⌈P% of them⌉; ``maxUnavailable`` (N or P%, rounded
  up) → expected = the pods that have a controller, desired = expected − maxUnavailable (at
  least 0). Neither: expected 0. **Simplification**: a controller's scale is the number of its
  pods seen, not the Deployment's or StatefulSet's ``spec.replicas`` (the scheduler does not
  watch workloads): a controller short of pods allows more disruptions than kube would;
- healthy: not being deleted, ``Ready=True``, not listed in ``status.disruptedPods``;
- allowed = healthy − desired when expected > 0, else 0 (never negative).

A budget someone keeps up to date (a real disruption controller, or a test writing ``/status``
with ``observedGeneration``) is read as is, ``disruptedPods`` included.

Matching is the scheduler's: the PDB's namespace, a selector that is neither missing nor empty
(kube: "A PDB with a nil or empty selector matches nothing"), a pod with labels. A victim whose
budget has no disruption left is *violating*; each victim that matches uses up one of its
budgets' allowed disruptions (victims listed in ``disruptedPods`` excepted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mockapi.client import Kind
from mockapi.selectors import LabelSelector

PDBS = Kind("policy/v1", "PodDisruptionBudget")


@dataclass
class Budget:
    namespace: str
    selector: dict
    allowed: int
    disrupted: frozenset = field(default_factory=frozenset)  # status.disruptedPods' names


def matches(selector: dict, labels: dict) -> bool:
    """metav1.LabelSelector against labels (``LabelSelectorAsSelector``, then ``Matches``); an
    unknown operator matches nothing, as the selector fails to parse."""
    parsed = LabelSelector.from_api(selector)
    return parsed is not None and parsed.matches(labels)


def _empty(selector) -> bool:
    return not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions"))


def observed(pdb: dict) -> bool:
    """Whether a disruption controller has computed this budget's status for its current spec."""
    status = pdb.get("status") or {}
    seen = status.get("observedGeneration")
    return isinstance(seen, int) and seen >= int(pdb["metadata"].get("generation") or 0)


def budgets(pdbs, pods) -> list[Budget]:
    """The budgets that can match a pod (non-empty selector), each with its allowed disruptions:
    from its status when observed, else computed from ``pods`` (an iterable of the bound pods,
    read only when some budget needs it)."""
    found, pending = [], []
    for pdb in pdbs:
        selector = (pdb.get("spec") or {}).get("selector")
        if _empty(selector):
            continue
        namespace = pdb["metadata"].get("namespace", "")
        status = pdb.get("status") or {}
        if observed(pdb):
            found.append(Budget(namespace, selector, int(status.get("disruptionsAllowed") or 0), frozenset(status.get("disruptedPods") or ())))
        else:
            pending.append((pdb, Budget(namespace, selector, 0)))
    if pending:
        pods = list(pods)
        for pdb, budget in pending:
            selected = [p for p in pods if p["metadata"].get("namespace", "") == budget.namespace and matches(budget.selector, p["metadata"].get("labels") or {})]
            budget.allowed = disruptions_allowed(pdb.get("spec") or {}, selected)
            found.append(budget)
    return found


def disruptions_allowed(spec: dict, pods: list[dict]) -> int:
    """kube's disruption controller: ``getExpectedPodCount``, ``countHealthyPods``, ``updatePdbStatus``."""
    managed = sum(1 for p in pods if _controlled(p))
    expected, desired = 0, 0
    if spec.get("maxUnavailable") is not None:
        expected = managed
        desired = max(expected - _scaled(spec["maxUnavailable"], expected), 0)
    elif spec.get("minAvailable") is not None:
        value = spec["minAvailable"]
        if isinstance(value, int):
            expected, desired = len(pods), value
        else:
            expected = managed
            desired = _scaled(value, expected)
    healthy = sum(1 for p in pods if _healthy(p))
    allowed = healthy - desired
    return allowed if expected > 0 and allowed > 0 else 0


def _scaled(value, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%") and text[:-1].isdigit():
        return math.ceil(int(text[:-1]) * total / 100)
    return 0


def _controlled(pod: dict) -> bool:
    return any(ref.get("controller") for ref in pod["metadata"].get("ownerReferences") or ())


def _healthy(pod: dict) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def split_by_violation(pods: list[dict], found: list[Budget]) -> tuple[list[dict], list[dict]]:
    """kube's ``filterPodsWithPDBViolation``: (violating, non-violating), each in the given order.
    Each pod a budget matches uses one of its allowed disruptions (unless listed in its
    ``disruptedPods``); a pod is violating when one of its budgets goes below zero."""
    left = [budget.allowed for budget in found]
    violating, fine = [], []
    for pod in pods:
        meta = pod["metadata"]
        labels = meta.get("labels") or {}
        broke = False
        if labels:
            namespace, name = meta.get("namespace", ""), meta["name"]
            for i, budget in enumerate(found):
                if budget.namespace != namespace or not matches(budget.selector, labels) or name in budget.disrupted:
                    continue
                left[i] -= 1
                if left[i] < 0:
                    broke = True
        (violating if broke else fine).append(pod)
    return violating, fine
