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
            from mockapi.auth.reviews import attributes_and_problems
            from mockapi.auth.user import UNAUTHENTICATED_ADMIN

            problems = attributes_and_problems(UNAUTHENTICATED_ADMIN, obj.get("spec") if isinstance(obj.get("spec"), dict) else {})[1]
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

