"""The audit log: an ``audit.k8s.io/v1`` Policy decides each request's level; one JSON ``Event`` per
line, as kube-apiserver's log backend writes them (``--audit-log-path``, ``-`` for stdout); the
recent ones also in a bounded ring (``GET /mockapi/v1/audit``).

Levels: ``None`` (not logged), ``Metadata`` (who, what, when, the response code),
``Request`` (+ the request body), ``RequestResponse`` (+ the response body). Rules are matched in
order, the first match wins, no match is ``None`` (k8s.io/apiserver/pkg/audit/policy/checker.go).
Without a policy file every request is logged at ``Metadata``.

Stages written: ``RequestReceived`` (as the request arrives) and ``ResponseComplete`` (after the
last byte; for a watch, when it ends), less the ``omitStages`` of the policy and of the rule.
``ResponseStarted`` and ``Panic`` are never written.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from mockapi.auth.authz import Attributes

LEVELS = ("None", "Metadata", "Request", "RequestResponse")
STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")


class PolicyError(ValueError):
    pass


@dataclass(frozen=True)
class Rule:
    level: str
    users: frozenset[str] = frozenset()
    user_groups: frozenset[str] = frozenset()
    verbs: frozenset[str] = frozenset()
    resources: tuple[dict, ...] = ()  # [{group, resources, resourceNames}]
    namespaces: frozenset[str] | None = None  # None: not given; "" names cluster-scoped requests
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: frozenset[str] = frozenset()

    def matches(self, attrs: Attributes) -> bool:
        if self.users and attrs.user.name not in self.users:
            return False
        if self.user_groups and not self.user_groups.intersection(attrs.user.groups):
            return False
        if self.verbs and attrs.verb not in self.verbs:
            return False
        if self.namespaces is not None or self.resources:
            return attrs.resource_request and self._matches_resource(attrs)
        if self.non_resource_urls:
            return not attrs.resource_request and any(_path_matches(attrs.path, spec) for spec in self.non_resource_urls)
        return True

    def _matches_resource(self, attrs: Attributes) -> bool:
        if self.namespaces is not None and attrs.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        for gr in self.resources:
            if gr.get("group", "") != attrs.api_group:
                continue
            names = gr.get("resourceNames") or ()
            if not gr.get("resources"):
                return True
            if names and attrs.name not in names:
                continue
            for resource in gr["resources"]:
                if resource in (combined, "*"):
                    return True
                if attrs.subresource and resource.startswith("*/") and resource[2:] == attrs.subresource:
                    return True
                if resource.endswith("/*") and resource[:-2] == attrs.resource:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    return spec in ("*", path) or (spec.endswith("*") and path.startswith(spec.rstrip("*")))


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...]
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False

    def level(self, attrs: Attributes) -> tuple[str, frozenset[str]]:
        """The level of a request and the stages not to write."""
        for rule in self.rules:
            if rule.matches(attrs):
                return rule.level, self.omit_stages | rule.omit_stages
        return "None", self.omit_stages


METADATA_FOR_ALL = Policy((Rule("Metadata"),))


def load_policy(path: Path) -> Policy:
    try:
        document = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as exc:
        raise PolicyError(f"{path}: not YAML: {exc}") from None
    return parse_policy(document, source=str(path))


def parse_policy(document: Any, *, source: str = "policy") -> Policy:
    if not isinstance(document, dict) or document.get("kind") != "Policy" or document.get("apiVersion") not in ("audit.k8s.io/v1",):
        raise PolicyError(f"{source}: expected an audit.k8s.io/v1 Policy")
    rules = document.get("rules")
    if not isinstance(rules, list) or not rules:
        raise PolicyError(f"{source}: a policy needs at least one rule")
    return Policy(
        tuple(_rule(rule, f"{source}: rules[{i}]") for i, rule in enumerate(rules)),
        omit_stages=_stages(document.get("omitStages"), f"{source}: omitStages"),
        omit_managed_fields=bool(document.get("omitManagedFields")),
    )


def _rule(rule: Any, where: str) -> Rule:
    if not isinstance(rule, dict) or rule.get("level") not in LEVELS:
        raise PolicyError(f'{where}.level: Unsupported value: {rule.get("level") if isinstance(rule, dict) else rule!r}: supported values: {", ".join(map(repr, LEVELS))}')
    resources = tuple(rule.get("resources") or ())
    urls = tuple(rule.get("nonResourceURLs") or ())
    if (resources or rule.get("namespaces") is not None) and urls:
        raise PolicyError(f"{where}: rules cannot apply to both regular resources and non-resource URLs")
    namespaces = rule.get("namespaces")
    return Rule(
        level=rule["level"],
        users=frozenset(rule.get("users") or ()),
        user_groups=frozenset(rule.get("userGroups") or ()),
        verbs=frozenset(rule.get("verbs") or ()),
        resources=resources,
        namespaces=frozenset(namespaces) if namespaces else None,
        non_resource_urls=urls,
        omit_stages=_stages(rule.get("omitStages"), f"{where}.omitStages"),
    )


def _stages(stages: Any, where: str) -> frozenset[str]:
    stages = stages or ()
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise PolicyError(f"{where}: Unsupported value: {unknown[0]!r}: supported values: {', '.join(map(repr, STAGES))}")
    return frozenset(stages)


@dataclass
class AuditLog:
    """Where events go: a file (or stdout) and a ring of the newest ``size``."""

    policy: Policy = METADATA_FOR_ALL
    path: str | None = None
    size: int = 1000
    _ring: deque = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _out: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._ring = deque(maxlen=self.size)
        if self.path == "-":
            self._out = sys.stdout.buffer
        elif self.path:
            self._out = open(self.path, "ab", buffering=0)

    def write(self, event: dict) -> None:
        line = orjson.dumps(event) + b"\n"
        with self._lock:
            self._ring.append(event)
            if self._out is not None:
                self._out.write(line)
                if self.path == "-":
                    self._out.flush()

    def events(self, *, limit: int | None = None) -> list[dict]:
        with self._lock:
            items = list(self._ring)
        return items[-limit:] if limit else items

    def clear(self) -> int:
        with self._lock:
            count = len(self._ring)
            self._ring.clear()
        return count

    def close(self) -> None:
        if self._out is not None and self.path != "-":
            self._out.close()
        self._out = None
