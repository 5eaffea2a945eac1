"""The answers to authorization.k8s.io/v1 access reviews under RBAC (kube's
pkg/registry/authorization/*): the review's ``status`` given its ``spec`` and who asks.

- **SubjectAccessReview** / **LocalSubjectAccessReview**: may ``spec.user`` (with ``groups``,
  ``uid``, ``extra``) do ``resourceAttributes`` or ``nonResourceAttributes``? ``status.allowed``,
  ``status.reason`` (``RBAC: allowed by ClusterRoleBinding "..." ...``); RBAC never says
  ``denied`` (it has no opinion on what no rule allows), so ``denied`` is left out as kube leaves it.
- ``resourceAttributes.fieldSelector`` / ``labelSelector`` (kube 1.31+, AuthorizeWithSelectors):
  ``rawSelector`` parsed as a query's selector, or ``requirements`` converted as kube's
  ``ResourceAttributesFrom`` does (a field requirement: ``In``/``NotIn`` with one value only);
  what cannot be parsed is dropped — requirements only narrow a request, so dropping one is a
  broader check — and named in ``status.evaluationError`` (``spec.resourceAttributes.fieldSelector
  ignored due to parse error``, ``partially ignored`` when some survived). RBAC decides without
  them; the Node authorizer reads ``spec.nodeName``.
- **SelfSubjectAccessReview**: the same for the requester (``system:admin`` when none is known:
  in-process or with authentication off).
- **SelfSubjectRulesReview**: the requester's rules in ``spec.namespace``, as
  ``status.resourceRules`` and ``status.nonResourceRules`` (what ``kubectl auth can-i --list``
  prints); ``incomplete`` is false, ``evaluationError`` names roles that bindings point at but that
  do not exist.
"""

from __future__ import annotations

from typing import Any

from mockapi.auth.authz import Attributes
from mockapi.auth.user import UNAUTHENTICATED_ADMIN, UserInfo
from mockapi.registry.reviews import parse_selectors


def review(rbac: Any, kind: str, obj: dict, requester: Any) -> dict:
    """The status of an access review (rbac: the RBACAuthorizer that answers)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
        user = subject_of(spec)
    else:
        user = requester if requester is not None else UNAUTHENTICATED_ADMIN
    if kind == "SelfSubjectRulesReview":
        return rules_review(rbac, user, spec.get("namespace") or "")
    attrs, problems = attributes_and_problems(user, spec)
    decision = rbac.authorize(attrs)
    status: dict = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    if problems:
        status["evaluationError"] = "; ".join(problems)
    return status


def subject_of(spec: dict) -> UserInfo:
    extra = spec.get("extra") if isinstance(spec.get("extra"), dict) else {}
    return UserInfo(
        name=spec.get("user") or "",
        uid=spec.get("uid") or "",
        groups=tuple(g for g in spec.get("groups") or () if isinstance(g, str)),
        extra={k: tuple(v) for k, v in extra.items() if isinstance(v, list)},
    )


def attributes_of(user: UserInfo, spec: dict) -> Attributes:
    """kube's ``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``."""
    return attributes_and_problems(user, spec)[0]


def attributes_and_problems(user: UserInfo, spec: dict) -> tuple[Attributes, list[str]]:
    """The attributes, and the selectors' parse problems as ``status.evaluationError`` words them
    (kube's ``BuildEvaluationError``)."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        fields, labels, problems = parse_selectors(resource)
        attrs = Attributes(
            user=user, verb=resource.get("verb") or "", api_group=resource.get("group") or "",
            api_version=resource.get("version") or "", resource=resource.get("resource") or "",
            subresource=resource.get("subresource") or "", namespace=resource.get("namespace") or "",
            name=resource.get("name") or "", field_selector=fields, label_selector=labels,
        )  # fmt: skip
        return attrs, problems
    non_resource = spec.get("nonResourceAttributes") if isinstance(spec.get("nonResourceAttributes"), dict) else {}
    return Attributes(user=user, verb=non_resource.get("verb") or "", resource_request=False, path=non_resource.get("path") or ""), []


def rules_review(rbac: Any, user: UserInfo, namespace: str) -> dict:
    """kube's RBAC ``RulesFor``: each rule with resources as a resource rule, each with
    non-resource URLs as a non-resource rule, in the order the bindings grant them."""
    rules, problems = rbac.rules_for(user, namespace)
    resource_rules, non_resource_rules = [], []
    for rule in rules:
        source = rule.source
        if source.get("resources"):
            entry = {"verbs": list(source.get("verbs") or [])}
            for key in ("apiGroups", "resources", "resourceNames"):
                if source.get(key):
                    entry[key] = list(source[key])
            resource_rules.append(entry)
        if source.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": list(source.get("verbs") or []), "nonResourceURLs": list(source["nonResourceURLs"])})
    status: dict = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
    if problems:
        status["evaluationError"] = ", ".join(dict.fromkeys(problems))
    return status
