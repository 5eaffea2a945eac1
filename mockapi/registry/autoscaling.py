"""autoscaling/v2 HorizontalPodAutoscaler as kube-apiserver stores it, also served as autoscaling/v1
(what ``kubectl autoscale`` posts): kube's defaults, the conversion between the two, and the
validation clients meet (``pkg/apis/autoscaling/validation``). No HPA controller runs and no
metrics server answers: ``status`` stays zero (``desiredReplicas: 0``), TARGETS shows
``<unknown>`` and nothing is scaled.

- **Conversion** (``pkg/apis/autoscaling/v1/conversion.go``): objects are stored as v2. Read as
  v1, a CPU utilization metric becomes ``targetCPUUtilizationPercentage`` (its current value
  ``status.currentCPUUtilizationPercentage``); what v1 has no field for — the other metrics, their
  current values, ``behavior`` and the conditions — rides in kube's annotations
  (``autoscaling.alpha.kubernetes.io/metrics``, ``current-metrics``, ``behavior``, ``conditions``)
  and comes back from them when a v1 object is written. Those annotations hold the v2 shapes here
  (kube writes v1's own MetricSpec shapes); a v1 client that only passes them through sees no
  difference.

- **Defaults** (``SetDefaults_HorizontalPodAutoscaler``): ``minReplicas: 1``; no metrics → one
  CPU metric at 80% average utilization; a ``behavior`` given gets kube's rules for what it leaves
  out (``GenerateHPAScaleUpRules``: no stabilization window, ``selectPolicy: Max``, 4 pods or
  100% per 15 s; ``GenerateHPAScaleDownRules``: ``Max``, 100% per 15 s, and no
  ``stabilizationWindowSeconds``, so that the controller's 300 s applies). A v2 object loses
  kube's ``autoscaling.alpha.kubernetes.io/*`` annotations (v2 has fields for all of them: kube's
  round trip drops them, ``TestHorizontalPodAutoscalerAnnotations``).
- **Validation**: ``minReplicas`` ≥ 1, ``maxReplicas`` > 0 and ≥ ``minReplicas``; each metric's
  ``type`` is a known source and that source is filled in; a resource metric targets a
  utilization or an average value, not both; utilizations > 0; behavior rules in kube's ranges.
"""

from __future__ import annotations

from typing import Any

import orjson

from mockapi import errors
from mockapi.registry.strategy import Strategy, json_copy, not_supported

GROUP = "autoscaling"
DEFAULT_CPU_UTILIZATION = 80
METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCE = {"ContainerResource": "containerResource", "External": "external", "Object": "object", "Pods": "pods", "Resource": "resource"}
TARGET_TYPES = ("AverageValue", "Utilization", "Value")
SELECT_POLICIES = ("Disabled", "Max", "Min")
_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
             "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}  # fmt: skip
# no stabilizationWindowSeconds: "Remain nil to use the downscale stabilization window from the controller"
_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
MAX_PERIOD, MAX_WINDOW = 1800, 3600


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


class HorizontalPodAutoscalerStrategy(Strategy):
    """The same rules through either version: a v1 object is checked as the v2 one it converts to."""

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"currentReplicas": 0, "desiredReplicas": 0} if self.rt.version == "v1" else {"desiredReplicas": 0}
        self._defaults(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "status":
            self._defaults(new)
        return new

    def _defaults(self, obj: dict) -> None:
        if self.rt.version != "v1":
            set_defaults(obj)
        elif isinstance(obj.get("spec"), dict) and obj["spec"].get("minReplicas") is None:
            obj["spec"]["minReplicas"] = 1  # autoscaling/v1's SetDefaults_HorizontalPodAutoscaler

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        if self.rt.version == "v1":
            obj = convert(obj, f"{GROUP}/v2")
        spec = _dict(obj.get("spec"))
        problems = []
        low, high = spec.get("minReplicas"), spec.get("maxReplicas")
        if isinstance(low, int) and low < 1:
            problems.append(errors.FieldError("invalid", "spec.minReplicas", "must be greater than or equal to 1", value=low))
        if isinstance(high, int) and high < 1:
            problems.append(errors.FieldError("invalid", "spec.maxReplicas", "must be greater than 0", value=high))
        if isinstance(low, int) and isinstance(high, int) and low > high:
            problems.append(errors.FieldError("invalid", "spec.maxReplicas", "must be greater than or equal to `minReplicas`", value=high))
        for index, metric in enumerate(spec.get("metrics") or []):
            problems += _metric_errors(_dict(metric), f"spec.metrics[{index}]")
        behavior = _dict(spec.get("behavior"))
        for direction in ("scaleUp", "scaleDown"):
            if isinstance(behavior.get(direction), dict):
                problems += _rules_errors(behavior[direction], f"spec.behavior.{direction}")
        return problems


def set_defaults(obj: dict) -> None:
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    for name in _ANNOTATIONS.values():
        annotations.pop(name, None)
    if "annotations" in _dict(obj.get("metadata")) and not annotations:
        del obj["metadata"]["annotations"]
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for direction, defaults in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
            rules = behavior.get(direction)
            if rules is None:
                behavior[direction] = json_copy(defaults)
            elif isinstance(rules, dict):
                for key, value in defaults.items():
                    if rules.get(key) is None:
                        rules[key] = json_copy(value)


def _metric_errors(metric: dict, where: str) -> list[errors.FieldError]:
    kind = metric.get("type")
    if kind not in METRIC_TYPES:
        return [not_supported(f"{where}.type", kind, METRIC_TYPES)]
    source = _SOURCE[kind]
    if not isinstance(metric.get(source), dict):
        return [errors.FieldError("required", f"{where}.{source}", "must populate information for the given metric source")]
    problems = [errors.FieldError("forbidden", f"{where}.{other}", "must populate the given metric source only")
                for other in _SOURCE.values() if other != source and metric.get(other) is not None]  # fmt: skip
    target = _dict(metric[source].get("target"))
    if target.get("type") is not None and target["type"] not in TARGET_TYPES:
        problems.append(not_supported(f"{where}.{source}.target.type", target["type"], TARGET_TYPES))
    utilization = target.get("averageUtilization")
    if isinstance(utilization, int) and utilization < 1:
        problems.append(errors.FieldError("invalid", f"{where}.{source}.target.averageUtilization", "must be greater than 0", value=utilization))
    if kind in ("Resource", "ContainerResource"):
        if utilization is None and target.get("averageValue") is None:
            problems.append(errors.FieldError("required", f"{where}.{source}.target.averageUtilization", "must set either a target raw value or a target utilization"))
        elif utilization is not None and target.get("averageValue") is not None:
            problems.append(errors.FieldError("forbidden", f"{where}.{source}.target.averageValue", "may not set both a target raw value and a target utilization"))
    return problems


def _rules_errors(rules: dict, where: str) -> list[errors.FieldError]:
    problems = []
    window = rules.get("stabilizationWindowSeconds")
    if isinstance(window, int) and window < 0:
        problems.append(errors.FieldError("invalid", f"{where}.stabilizationWindowSeconds", "must be greater than or equal to zero", value=window))
    elif isinstance(window, int) and window > MAX_WINDOW:
        problems.append(errors.FieldError("invalid", f"{where}.stabilizationWindowSeconds", f"must be less than or equal to {MAX_WINDOW}", value=window))
    if rules.get("selectPolicy") is not None and rules["selectPolicy"] not in SELECT_POLICIES:
        problems.append(not_supported(f"{where}.selectPolicy", rules["selectPolicy"], SELECT_POLICIES))
    for index, policy in enumerate(rules.get("policies") or []):
        policy, at = _dict(policy), f"{where}.policies[{index}]"
        value, period = policy.get("value"), policy.get("periodSeconds")
        if isinstance(value, int) and value <= 0:
            problems.append(errors.FieldError("invalid", f"{at}.value", "must be greater than zero", value=value))
        if isinstance(period, int) and period <= 0:
            problems.append(errors.FieldError("invalid", f"{at}.periodSeconds", "must be greater than zero", value=period))
        elif isinstance(period, int) and period > MAX_PERIOD:
            problems.append(errors.FieldError("invalid", f"{at}.periodSeconds", f"must be less than or equal to {MAX_PERIOD}", value=period))
    return problems


# ------------------------------------------------------------------------------- v1 <-> v2
_ANNOTATIONS = {  # kube's annotations for what autoscaling/v1 has no field for
    "metrics": "autoscaling.alpha.kubernetes.io/metrics",
    "currentMetrics": "autoscaling.alpha.kubernetes.io/current-metrics",
    "behavior": "autoscaling.alpha.kubernetes.io/behavior",
    "conditions": "autoscaling.alpha.kubernetes.io/conditions",
}


def convert(obj: dict, api_version: str) -> dict:
    """The HPA in ``api_version`` (autoscaling/v1 or /v2), ``apiVersion`` first; a fresh object."""
    obj = json_copy(obj)
    if obj.get("apiVersion") != api_version:
        obj = _to_v1(obj) if api_version == f"{GROUP}/v1" else _to_v2(obj)
    return {"apiVersion": api_version, **{k: v for k, v in obj.items() if k != "apiVersion"}}


def _is_cpu_utilization(metric: Any) -> bool:
    resource = _dict(_dict(metric).get("resource"))
    target = _dict(resource.get("target"))
    return _dict(metric).get("type") == "Resource" and resource.get("name") == "cpu" and target.get("type") == "Utilization" and target.get("averageUtilization") is not None


def _to_v1(obj: dict) -> dict:
    meta, spec, status = obj.setdefault("metadata", {}), _dict(obj.pop("spec", None)), _dict(obj.pop("status", None))
    annotations = dict(meta.get("annotations") or {})
    metrics = [m for m in spec.get("metrics") or []]
    cpu = next((m for m in metrics if _is_cpu_utilization(m)), None)
    others = [m for m in metrics if m is not cpu]
    v1_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    if cpu is not None:
        v1_spec["targetCPUUtilizationPercentage"] = cpu["resource"]["target"]["averageUtilization"]
    current = [m for m in status.get("currentMetrics") or []]
    current_cpu = next((m for m in current if _dict(m).get("type") == "Resource" and _dict(_dict(m).get("resource")).get("name") == "cpu"
                        and _dict(_dict(m["resource"]).get("current")).get("averageUtilization") is not None), None)  # fmt: skip
    v1_status = {k: status[k] for k in ("observedGeneration", "lastScaleTime") if k in status}
    v1_status.update(currentReplicas=status.get("currentReplicas", 0), desiredReplicas=status.get("desiredReplicas", 0))
    if current_cpu is not None:
        v1_status["currentCPUUtilizationPercentage"] = current_cpu["resource"]["current"]["averageUtilization"]
    carried = {"metrics": others, "currentMetrics": [m for m in current if m is not current_cpu], "behavior": spec.get("behavior"), "conditions": status.get("conditions")}
    for key, value in carried.items():
        if value:
            annotations[_ANNOTATIONS[key]] = orjson.dumps(value).decode()
    if annotations:
        meta["annotations"] = annotations
    obj["spec"] = v1_spec
    obj["status"] = v1_status
    return obj


def _to_v2(obj: dict) -> dict:
    meta, spec, status = obj.setdefault("metadata", {}), _dict(obj.pop("spec", None)), _dict(obj.pop("status", None))
    annotations = dict(meta.get("annotations") or {})
    carried = {key: _carried(annotations.pop(name, None)) for key, name in _ANNOTATIONS.items()}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    v2_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    metrics = list(carried["metrics"] or [])
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": spec["targetCPUUtilizationPercentage"]}}})
    if metrics:
        v2_spec["metrics"] = metrics
    if carried["behavior"]:
        v2_spec["behavior"] = carried["behavior"]
    v2_status = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas") if status.get(k)}  # omitempty in v2
    v2_status["desiredReplicas"] = status.get("desiredReplicas", 0)
    current = list(carried["currentMetrics"] or [])
    if status.get("currentCPUUtilizationPercentage") is not None:
        current.append({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": status["currentCPUUtilizationPercentage"]}}})
    if current:
        v2_status["currentMetrics"] = current
    if carried["conditions"]:
        v2_status["conditions"] = carried["conditions"]
    obj["spec"] = v2_spec
    if status:
        obj["status"] = v2_status
    set_defaults(obj)  # kube defaults the v2 object it decodes from storage
    return obj


def _carried(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
