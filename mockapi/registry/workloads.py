"""apps/v1 workloads — Deployment, ReplicaSet, StatefulSet, DaemonSet — as kube-apiserver stores
them: kube's defaults, the validation clients meet, generation and status.

- **Defaults** (``pkg/apis/apps/v1/defaults.go``), where the object leaves them out: ``replicas: 1``
  (not DaemonSet); Deployment ``strategy`` RollingUpdate 25%/25%, ``revisionHistoryLimit: 10``,
  ``progressDeadlineSeconds: 600``; StatefulSet ``podManagementPolicy: OrderedReady``,
  ``updateStrategy`` RollingUpdate with ``partition: 0``, ``revisionHistoryLimit: 10``,
  ``persistentVolumeClaimRetentionPolicy`` Retain/Retain; DaemonSet ``updateStrategy``
  RollingUpdate with ``maxUnavailable: 1``, ``maxSurge: 0``, ``revisionHistoryLimit: 10``. The pod
  template gets a pod's schema defaults (its schema is the Pod's).
- **Validation**: a selector is required and not empty, must match the template's labels, and
  cannot change; ``replicas`` ≥ 0; the template's ``restartPolicy`` is ``Always``.
- **Generation and status**: ``metadata.generation`` starts at 1 and counts spec changes; status
  starts as kube's zero status and changes only through ``/status``. No controller writes it:
  ``status.observedGeneration`` stays unset and a Deployment's READY stays 0/N (a later step).
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.registry.strategy import Strategy, json_copy, not_supported

GROUP = "apps"
# The status each kind's zero value serializes to (fields without omitempty).
_INITIAL_STATUS = {
    "Deployment": {},
    "ReplicaSet": {"replicas": 0},
    "StatefulSet": {"replicas": 0, "availableReplicas": 0},
    "DaemonSet": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0},
}


class WorkloadStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = dict(_INITIAL_STATUS[self.rt.kind])
        set_defaults(self.rt.kind, obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "status":
            set_defaults(self.rt.kind, new)
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = selector_errors(spec, self.rt.kind)
        replicas = spec.get("replicas")
        if isinstance(replicas, int) and replicas < 0:
            problems.append(errors.FieldError("invalid", "spec.replicas", "must be greater than or equal to 0", value=replicas))
        policy = _dict(_dict(spec.get("template")).get("spec")).get("restartPolicy")
        if policy is not None and policy != "Always":
            problems.append(not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
        if old is not None and spec.get("selector") != _dict(old.get("spec")).get("selector"):
            problems.append(errors.FieldError("invalid", "spec.selector", "field is immutable", value=spec.get("selector")))
        return problems


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def set_defaults(kind: str, obj: dict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind != "DaemonSet" and spec.get("replicas") is None:
        spec["replicas"] = 1
    if kind == "Deployment":
        strategy = spec.setdefault("strategy", {})
        if isinstance(strategy, dict):
            strategy["type"] = strategy.get("type") or "RollingUpdate"
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif kind == "StatefulSet":
        spec["podManagementPolicy"] = spec.get("podManagementPolicy") or "OrderedReady"
        _rolling_update(spec, {"partition": 0})
        retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        if isinstance(retention, dict):
            retention["whenDeleted"] = retention.get("whenDeleted") or "Retain"
            retention["whenScaled"] = retention.get("whenScaled") or "Retain"
        spec.setdefault("revisionHistoryLimit", 10)
    elif kind == "DaemonSet":
        _rolling_update(spec, {"maxUnavailable": 1, "maxSurge": 0})
        spec.setdefault("revisionHistoryLimit", 10)


def _rolling_update(spec: dict, defaults: dict) -> None:
    strategy = spec.setdefault("updateStrategy", {})
    if not isinstance(strategy, dict):
        return
    strategy["type"] = strategy.get("type") or "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        if isinstance(rolling, dict):
            for key, value in defaults.items():
                rolling.setdefault(key, json_copy(value))


def selector_errors(spec: dict, kind: str) -> list[errors.FieldError]:
    """ValidateDeploymentSpec & co.: a non-empty selector that selects the template's labels."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [errors.FieldError("required", "spec.selector", "")]
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return [errors.FieldError("invalid", "spec.selector", f"empty selector is invalid for {kind.lower()}", value=selector)]
    labels = _dict(_dict(_dict(spec.get("template")).get("metadata")).get("labels"))
    if not matches(selector, labels):
        return [errors.FieldError("invalid", "spec.template.metadata.labels", "`selector` does not match template `labels`", value=labels)]
    return []


def matches(selector: dict, labels: dict) -> bool:
    """metav1.LabelSelector against a set of labels."""
    for key, value in _dict(selector.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for requirement in selector.get("matchExpressions") or []:
        if not isinstance(requirement, dict):
            return False
        key, operator, values = requirement.get("key"), requirement.get("operator"), requirement.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present or operator == "DoesNotExist" and present:
            return False
    return True
