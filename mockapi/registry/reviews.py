"""authorization.k8s.io/v1 access reviews: SubjectAccessReview, LocalSubjectAccessReview,
SelfSubjectAccessReview and SelfSubjectRulesReview (kube's pkg/registry/authorization).

Create-only and never stored: a POST is validated (kube's pkg/apis/authorization/validation),
answered with the review and its ``status`` filled, 201 Created, and forgotten — no
resourceVersion, no watch event. The answer comes from the server's authorizer (the registry's
``access``, see :mod:`.rbac`); without one the server runs AlwaysAllow, which allows everything and
whose rules are ``*`` on ``*`` (kube's ``alwaysAllowAuthorizer.RulesFor``).
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy
from mockapi.schema.goformat import go_quote

GROUP = "authorization.k8s.io"
_ALWAYS_ALLOW_RULES = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}


class ReviewStrategy(Strategy):
    answers_create = True

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        if self.rt.kind == "SelfSubjectRulesReview":
            return []
        problems = _attribute_errors(spec)
        if self.rt.kind in ("SubjectAccessReview", "LocalSubjectAccessReview") and not spec.get("user") and not spec.get("groups"):
            problems.append(errors.FieldError("invalid", "spec.user", "at least one of user or group must be specified", value=spec.get("user", "")))
        problems.extend(selector_errors(spec.get("resourceAttributes")))
        if self.rt.kind == "LocalSubjectAccessReview":
            namespace = obj["metadata"].get("namespace", "")
            attributes = spec.get("resourceAttributes")
            if isinstance(attributes, dict) and attributes.get("namespace", "") != namespace:
                problems.append(errors.FieldError("invalid", "spec.resourceAttributes.namespace", "must match metadata.namespace", value=attributes.get("namespace", "")))
            if spec.get("nonResourceAttributes") is not None:
                problems.append(errors.FieldError("invalid", "spec.nonResourceAttributes", f"{go_non_resource(spec['nonResourceAttributes'])}: disallowed on this kind of request"))
        return problems

    def answer(self, cluster: Cluster, obj: dict, requester: Any, access: Any) -> dict:
        """The review as kube answers it: what was sent, with the status filled in."""
        meta = obj["metadata"]
        if access is not None:
            status = access.review(self.rt.kind, obj, requester)
        elif self.rt.kind == "SelfSubjectRulesReview":
            status = dict(_ALWAYS_ALLOW_RULES)
        else:
            spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
            resource = spec.get("resourceAttributes")
            problems = parse_selectors(resource)[2] if isinstance(resource, dict) else []
            status = {"allowed": True, **({"evaluationError": "; ".join(problems)} if problems else {})}
        return {"kind": obj["kind"], "apiVersion": obj["apiVersion"], "metadata": meta, "spec": obj.get("spec", {}), "status": status}


def _attribute_errors(spec: dict) -> list[errors.FieldError]:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        return [errors.FieldError("invalid", "spec.nonResourceAttributes", f"{go_non_resource(non_resource)}: cannot be specified in combination with resourceAttributes")]
    if resource is None and non_resource is None:
        # kube's field.Invalid of a nil pointer prints the string "null", quoted
        return [errors.FieldError("invalid", "spec.resourceAttributes", "exactly one of nonResourceAttributes or resourceAttributes must be specified", value="null")]
    return []


def parse_selectors(resource: dict) -> tuple[tuple, tuple, list[str]]:
    """A review's field and label requirements as kube's ``ResourceAttributesFrom`` parses them,
    and what was dropped as ``status.evaluationError`` words it (kube's ``BuildEvaluationError``)."""
    fields, field_error = field_requirements(resource.get("fieldSelector"))
    labels, label_error = label_requirements(resource.get("labelSelector"))
    problems = [
        f"spec.resourceAttributes.{which} {'partially ' if parsed else ''}ignored due to parse error"
        for which, parsed, error in (("fieldSelector", fields, field_error), ("labelSelector", labels, label_error)) if error
    ]  # fmt: skip
    return fields, labels, problems


def field_requirements(selector: Any) -> tuple[tuple, str]:
    """``FieldSelectorAttributes`` as (field, "=" or "!=", value) terms, and why some were dropped ("" if none)."""
    from mockapi import selectors

    if not isinstance(selector, dict):
        return (), ""
    terms: list = []
    problems: list[str] = []
    raw = selector.get("rawSelector")
    if isinstance(raw, str) and raw:
        try:
            parsed = selectors.FieldSelector.parse(raw)
        except errors.StatusError as exc:
            problems.append(exc.message)
        else:
            terms = [(field, "!=" if negated else "=", value) for field, value, negated in parsed._terms]
    requirements = selector.get("requirements")
    if isinstance(requirements, list) and requirements:
        terms, problems = [], []
        for requirement in requirements:
            requirement = requirement if isinstance(requirement, dict) else {}
            operator, values = requirement.get("operator"), requirement.get("values") or []
            if len(values) > 1:
                problems.append("fieldSelectors do not yet support multiple values")
            elif operator in ("In", "NotIn"):
                if len(values) != 1:
                    problems.append(f"fieldSelectors {'in' if operator == 'In' else 'not in'} must have one value")
                else:
                    terms.append((str(requirement.get("key") or ""), "=" if operator == "In" else "!=", str(values[0])))
            elif operator in ("Exists", "DoesNotExist"):
                problems.append(f"fieldSelectors do not yet support {operator}")
            else:
                problems.append(f"{go_quote(str(operator or ''))} is not a valid field selector operator")
    return tuple(terms), "; ".join(problems)


_LABEL_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_requirements(selector: Any) -> tuple[tuple, str]:
    """``LabelSelectorAttributes`` as :class:`mockapi.selectors.Requirement` s, and why some were dropped."""
    from mockapi import names, selectors

    if not isinstance(selector, dict):
        return (), ""
    found: list = []
    problems: list[str] = []
    raw = selector.get("rawSelector")
    if isinstance(raw, str) and raw:
        try:
            found = list(selectors.LabelSelector.parse(raw).requirements)
        except errors.StatusError as exc:
            problems.append(exc.message)
    requirements = selector.get("requirements")
    if isinstance(requirements, list) and requirements:
        found, problems = [], []
        for requirement in requirements:
            requirement = requirement if isinstance(requirement, dict) else {}
            operator = _LABEL_OPERATORS.get(requirement.get("operator"))
            key, values = str(requirement.get("key") or ""), [str(v) for v in requirement.get("values") or []]
            if operator is None:
                problems.append(f"{go_quote(str(requirement.get('operator') or ''))} is not a valid label selector operator")
            elif names.qualified_name_errors(key) or (operator in ("in", "notin")) != bool(values) or any(names.label_value_errors(v) for v in values):
                problems.append(f"invalid label requirement {key}")  # labels.NewRequirement's errors
            else:
                found.append(selectors.Requirement(key, operator, tuple(sorted(set(values)))))
    return tuple(found), "; ".join(problems)


def selector_errors(attributes: Any) -> list[errors.FieldError]:
    """kube's ``validateResourceAttributes``: a fieldSelector or labelSelector has a rawSelector or
    requirements (not both); each requirement as metav1 validates it, unknown operators allowed
    (a newer client's) — the label key a qualified name, the values label values."""
    if not isinstance(attributes, dict):
        return []
    problems: list[errors.FieldError] = []
    for which in ("fieldSelector", "labelSelector"):
        selector = attributes.get(which)
        if selector is None:
            continue
        selector = selector if isinstance(selector, dict) else {}
        path = f"spec.resourceAttributes.{which}"
        raw, requirements = selector.get("rawSelector") or "", selector.get("requirements") or []
        if raw and requirements:
            problems.append(errors.FieldError("invalid", f"{path}.rawSelector", "may not specified at the same time as requirements", value=raw))
        if not raw and not requirements:
            problems.append(errors.FieldError("required", f"{path}.requirements", f"when {path} is specified, requirements or rawSelector is required"))
        for i, requirement in enumerate(requirements if isinstance(requirements, list) else []):
            problems.extend(_requirement_errors(requirement if isinstance(requirement, dict) else {}, f"{path}.requirements[{i}]", label=which == "labelSelector"))
    return problems


def _requirement_errors(requirement: dict, path: str, *, label: bool) -> list[errors.FieldError]:
    """metav1validation.ValidateFieldSelectorRequirement / ValidateLabelSelectorRequirement."""
    from mockapi import names

    problems: list[errors.FieldError] = []
    key, operator, values = requirement.get("key") or "", requirement.get("operator"), requirement.get("values") or []
    if not label and not key:
        problems.append(errors.FieldError("required", f"{path}.key", "must be specified"))
    if operator in ("In", "NotIn") and not values:
        problems.append(errors.FieldError("required", f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist") and values:
        problems.append(errors.FieldError("forbidden", f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    if label:
        problems.extend(errors.FieldError("invalid", f"{path}.key", message, value=key) for message in names.qualified_name_errors(str(key)))
        for j, value in enumerate(values):
            problems.extend(errors.FieldError("invalid", f"{path}.values[{j}]", message, value=value) for message in names.label_value_errors(str(value)))
    return problems


def go_non_resource(value: Any) -> str:
    """NonResourceAttributes as Go's ``%#v`` prints them in kube's validation messages."""
    value = value if isinstance(value, dict) else {}
    return f'authorization.NonResourceAttributes{{Path:{go_quote(str(value.get("path", "")))}, Verb:{go_quote(str(value.get("verb", "")))}}}'

