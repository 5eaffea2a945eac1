"""policy/v1 PodDisruptionBudget as kube-apiserver stores it: generation, kube's zero status, and
the validation clients meet (``pkg/apis/policy/validation``). No disruption controller runs:
``status`` stays zero (ALLOWED DISRUPTIONS 0) until something writes ``/status``, and evictions
are not checked against budgets.

- **Create** (the PDB strategy): ``status`` is kube's zero status (``disruptionsAllowed``,
  ``currentHealthy``, ``desiredHealthy``, ``expectedPods`` all 0: they have no omitempty),
  ``metadata.generation`` 1 and counting spec changes. No defaults (policy/v1 has none).
- **Validation** (``ValidatePodDisruptionBudgetSpec``): ``minAvailable`` and ``maxUnavailable``
  are not both set; each is a non-negative integer or a percent no greater than 100%;
  ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow`` or ``IfHealthyBudget``; a selector's
  expressions use kube's operators and its keys and values are label keys and values
  (``ValidateLabelSelector``: a key is a qualified name, a value a label value). The spec is mutable (since kube 1.15). On ``/status``, counts
  are not negative.
"""

from __future__ import annotations

import re
from typing import Any

from mockapi import errors
from mockapi.names import label_value_errors, qualified_name_errors
from mockapi.registry.strategy import Strategy, not_supported

GROUP = "policy"
EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
_ZERO_STATUS = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
_PERCENT = re.compile(r"^[0-9]+%$")
PERCENT_MESSAGE = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
OPERATORS = ("DoesNotExist", "Exists", "In", "NotIn")


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


class PodDisruptionBudgetStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = dict(_ZERO_STATUS)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = []
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            problems.append(errors.FieldError("invalid", "spec", "minAvailable and maxUnavailable cannot be both set", value=spec))
        for key in ("minAvailable", "maxUnavailable"):
            if spec.get(key) is not None:
                problems += int_or_percent_errors(spec[key], f"spec.{key}")
        policy = spec.get("unhealthyPodEvictionPolicy")
        if policy is not None and policy not in EVICTION_POLICIES:
            problems.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES))
        problems += label_selector_errors(spec.get("selector"), "spec.selector")
        status = _dict(obj.get("status"))
        for key in _ZERO_STATUS:
            value = status.get(key)
            if isinstance(value, int) and value < 0:
                problems.append(errors.FieldError("invalid", f"status.{key}", "must be greater than or equal to 0", value=value))
        return problems


def int_or_percent_errors(value: Any, path: str) -> list[errors.FieldError]:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    if isinstance(value, str):
        if not _PERCENT.match(value):
            return [errors.FieldError("invalid", path, PERCENT_MESSAGE, value=value)]
        if int(value[:-1]) > 100:
            return [errors.FieldError("invalid", path, "must not be greater than 100%", value=value)]
    elif isinstance(value, int) and value < 0:
        return [errors.FieldError("invalid", path, "must be greater than or equal to 0", value=value)]
    return []


def label_selector_errors(selector: Any, path: str) -> list[errors.FieldError]:
    """ValidateLabelSelector (values checked: AllowInvalidLabelValueInSelector false, as on create).
    A ``matchLabels`` problem is reported at ``matchLabels`` itself with the key or value, as kube's
    ValidateLabels does."""
    problems = []
    for key, value in _dict(_dict(selector).get("matchLabels")).items():
        problems += [errors.FieldError("invalid", f"{path}.matchLabels", msg, value=key) for msg in qualified_name_errors(key)]
        if isinstance(value, str):
            problems += [errors.FieldError("invalid", f"{path}.matchLabels", msg, value=value) for msg in label_value_errors(value)]
    for index, requirement in enumerate(_dict(selector).get("matchExpressions") or []):
        if not isinstance(requirement, dict):
            continue
        where, operator, values = f"{path}.matchExpressions[{index}]", requirement.get("operator"), requirement.get("values") or []
        if operator in ("In", "NotIn") and not values:
            problems.append(errors.FieldError("required", f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist") and values:
            problems.append(errors.FieldError("forbidden", f"{where}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif operator not in OPERATORS:
            problems.append(errors.FieldError("invalid", f"{where}.operator", "not a valid selector operator", value=operator))
        key = requirement.get("key")
        if isinstance(key, str):
            problems += [errors.FieldError("invalid", f"{where}.key", msg, value=key) for msg in qualified_name_errors(key)]
        for v, value in enumerate(values if isinstance(values, list) else []):
            if isinstance(value, str):
                problems += [errors.FieldError("invalid", f"{where}.values[{v}]", msg, value=value) for msg in label_value_errors(value)]
    return problems
