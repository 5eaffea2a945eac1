"""RBAC's PolicyRules: matching one request (kube's ``rbac.RuleAllows``) and covering other rules
(``pkg/registry/rbac/validation``'s ``Covers``, for the escalation checks), on rules compiled once.

A rule is ``verbs`` × ``apiGroups`` × ``resources`` (``*``, ``pods``, ``pods/status``,
``*/status``) × ``resourceNames`` (empty: any name), or ``verbs`` × ``nonResourceURLs`` (exact,
``*``, or a prefix ending ``*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockapi.auth.authz import Attributes
from mockapi.schema.goformat import go_quote

ALL = "*"


@dataclass(frozen=True)
class Rule:
    """One rbac/v1 PolicyRule, its lists as tuples (kept in order for rendering) and sets (for lookups)."""

    verbs: frozenset[str]
    api_groups: frozenset[str]
    resources: frozenset[str]
    resource_names: frozenset[str]
    non_resource_urls: tuple[str, ...]
    source: dict  # the rule as written, for SelfSubjectRulesReview

    def allows(self, attrs: Attributes) -> bool:
        """kube's ``RuleAllows``."""
        verbs = self.verbs
        if not (attrs.verb in verbs or ALL in verbs):
            return False
        if not attrs.resource_request:
            return any(url_matches(pattern, attrs.path) for pattern in self.non_resource_urls)
        groups = self.api_groups
        if not (attrs.api_group in groups or ALL in groups):
            return False
        resources = self.resources
        if ALL not in resources:
            if attrs.subresource:
                if f"{attrs.resource}/{attrs.subresource}" not in resources and f"*/{attrs.subresource}" not in resources:
                    return False
            elif attrs.resource not in resources:
                return False
        return not self.resource_names or attrs.name in self.resource_names


def compile_rule(rule: Any) -> Rule | None:
    """A stored PolicyRule compiled; None for something that is not one (a rule kube would refuse)."""
    if not isinstance(rule, dict):
        return None
    return Rule(
        verbs=frozenset(_strings(rule.get("verbs"))),
        api_groups=frozenset(_strings(rule.get("apiGroups"))),
        resources=frozenset(_strings(rule.get("resources"))),
        resource_names=frozenset(_strings(rule.get("resourceNames"))),
        non_resource_urls=tuple(_strings(rule.get("nonResourceURLs"))),
        source=rule,
    )


def compile_rules(rules: Any) -> list[Rule]:
    compiled = [compile_rule(rule) for rule in rules] if isinstance(rules, list) else []
    return [rule for rule in compiled if rule is not None]


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def url_matches(pattern: str, path: str) -> bool:
    """kube's ``NonResourceURLMatches``: ``*``, the path itself, or a prefix ending ``*``."""
    if pattern == ALL or pattern == path:
        return True
    return pattern.endswith("*") and path.startswith(pattern[:-1])


# ----------------------------------------------------------------------- covering (escalation)
def breakdown(rule: dict) -> list[dict]:
    """kube's ``BreakdownRule``: one rule per (group, resource, verb[, name]) and per (url, verb)."""
    groups, resources, verbs = _strings(rule.get("apiGroups")), _strings(rule.get("resources")), _strings(rule.get("verbs"))
    names = _strings(rule.get("resourceNames"))
    out = []
    for group in groups:
        for resource in resources:
            for verb in verbs:
                if names:
                    out += [{"apiGroups": [group], "resources": [resource], "verbs": [verb], "resourceNames": [name]} for name in names]
                else:
                    out.append({"apiGroups": [group], "resources": [resource], "verbs": [verb]})
    for url in _strings(rule.get("nonResourceURLs")):
        out += [{"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs]
    return out


def covers(owner: Rule, sub: dict) -> bool:
    """kube's ``ruleCovers`` for one broken-down rule."""
    verbs, groups = sub.get("verbs", []), sub.get("apiGroups", [])
    resources, names, urls = sub.get("resources", []), sub.get("resourceNames", []), sub.get("nonResourceURLs", [])
    if not (ALL in owner.verbs or all(v in owner.verbs for v in verbs)):
        return False
    if not (ALL in owner.api_groups or all(g in owner.api_groups for g in groups)):
        return False
    if not _resources_cover(owner.resources, resources):
        return False
    if names:
        if owner.resource_names and not all(n in owner.resource_names for n in names):
            return False
    elif owner.resource_names:
        return False
    return all(any(_url_covers(mine, url) for mine in owner.non_resource_urls) for url in urls)


def _resources_cover(owned: frozenset[str], wanted: list[str]) -> bool:
    if ALL in owned:
        return True
    for resource in wanted:
        if resource in owned:
            continue
        if "/" not in resource or "*/" + resource.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def uncovered(owned: list[Rule], wanted: list[Any]) -> list[dict]:
    """kube's ``Covers``: the broken-down parts of ``wanted`` that no owned rule covers."""
    missing = []
    for rule in wanted:
        for sub in breakdown(rule) if isinstance(rule, dict) else ():
            if not any(covers(owner, sub) for owner in owned):
                missing.append(sub)
    return missing


def compact(rules: list[dict]) -> list[dict]:
    """kube's ``CompactRules``: rules for one group and one resource (and at most one name) that
    differ only by verb become one rule with all the verbs, in first-seen order."""
    out, simple = [], {}
    for rule in rules:
        key = _simple_key(rule)
        if key is None:
            out.append(rule)
        elif key in simple:
            verbs = simple[key]["verbs"]
            verbs += [verb for verb in rule["verbs"] if verb not in verbs]
        else:
            simple[key] = {**rule, "verbs": list(rule["verbs"])}
    return out + list(simple.values())


def _simple_key(rule: dict) -> tuple | None:
    if len(rule.get("resourceNames", [])) > 1 or rule.get("nonResourceURLs"):
        return None
    if len(rule.get("apiGroups", [])) != 1 or len(rule.get("resources", [])) != 1:
        return None
    return (rule["apiGroups"][0], rule["resources"][0], tuple(rule.get("resourceNames", [])))


def compact_string(rule: dict) -> str:
    """kube's ``CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}``."""
    parts = []
    for label, key in (("APIGroups", "apiGroups"), ("Resources", "resources"), ("NonResourceURLs", "nonResourceURLs"),
                       ("ResourceNames", "resourceNames"), ("Verbs", "verbs")):
        if rule.get(key):
            parts.append(f"{label}:{go_strings(rule[key])}")
    return "{" + ", ".join(parts) + "}"


def go_strings(values: list[str] | tuple[str, ...]) -> str:
    """A ``[]string`` printed with ``%q``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"
