"""Fault injection for users' tests: rules that make matching API requests fail, wait or break.

A rule (docs/fault-injection.md) matches requests by kube verb, resource
(``plural[.group][/subresource]``), namespace, name and User-Agent (a substring), and acts:

- ``error``: answer with an error as kube-apiserver writes it — 409 Conflict (optimistic
  concurrency), 429 (the in-flight limiter's plain-text answer), 500 InternalError, 503
  ServiceUnavailable, 504 Timeout — without serving the request;
- ``latencySeconds``: wait, then serve the request (or then act, with ``error``/``dropConnection``);
- ``dropConnection``: serve the request, but send only the headers and half of the first piece of
  body, then close the connection.

``count`` limits a rule to the next N matching requests (omitted: until removed). When several rules
match, the oldest live one acts. Rules are plain data, JSON in and out, so the control API, the
Python helpers and ``/metrics`` share one shape. The dispatcher consults :meth:`FaultSet.match` only
while a rule is live (``FaultSet.active``): without rules a request costs one attribute check.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from mockapi import errors

VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
ERROR_CODES = (409, 429, 500, 503, 504)
ACTIONS = ("error", "latency", "dropConnection")
MAX_LATENCY = 3600.0
# kube-apiserver's WithMaxInFlightLimit answer: http.Error's plain text, Retry-After "1".
LIMITER_MESSAGE = "Too many requests, please try again later."
TIMEOUT_MESSAGE = "request did not complete within requested timeout - context deadline exceeded"
UNAVAILABLE_MESSAGE = "the server is currently unable to handle the request"
_RULE_KEYS = ("id", "match", "action", "count")
_MATCH_KEYS = ("verb", "resource", "namespace", "name", "userAgent")
_ACTION_KEYS = ("error", "latencySeconds", "dropConnection")
_ERROR_KEYS = ("code", "reason", "message", "retryAfterSeconds")
_ID = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


@dataclass
class Rule:
    """One fault rule; ``remaining`` is None for a rule that holds until removed."""

    id: str
    verbs: frozenset[str] = frozenset()  # empty: any verb
    resource: str = ""  # as given: plural[.group][/subresource]
    namespace: str = ""
    name: str = ""
    user_agent: str = ""
    error: dict | None = None  # {"code", "reason"?, "message"?, "retryAfterSeconds"?}
    latency: float = 0.0
    drop: bool = False
    count: int | None = None
    remaining: int | None = None
    hits: int = 0
    _plural: str = field(default="", repr=False)
    _group: str | None = field(default=None, repr=False)  # None: any group
    _subresource: str | None = field(default="", repr=False)  # None: any, "" none

    def matches(self, info, agent: str) -> bool:
        if self.verbs and info.verb not in self.verbs:
            return False
        if self._plural and (info.resource != self._plural or (self._group is not None and info.group != self._group)):
            return False
        if self._subresource is not None and info.subresource != self._subresource:
            return False
        if self.namespace and info.namespace != self.namespace:
            return False
        if self.name and info.name != self.name:
            return False
        return not self.user_agent or self.user_agent in agent

    def actions(self) -> list[str]:
        """What this rule does, in order, as the ``action`` label of ``mockapi_faults_injected_total``."""
        done = ["latency"] if self.latency else []
        if self.error is not None:
            done.append("error")
        elif self.drop:
            done.append("dropConnection")
        return done

    def to_dict(self) -> dict[str, Any]:
        match: dict[str, Any] = {}
        if self.verbs:
            match["verb"] = sorted(self.verbs) if len(self.verbs) > 1 else next(iter(self.verbs))
        for key, value in (("resource", self.resource), ("namespace", self.namespace), ("name", self.name), ("userAgent", self.user_agent)):
            if value:
                match[key] = value
        action: dict[str, Any] = {}
        if self.error is not None:
            action["error"] = dict(self.error)
        if self.latency:
            action["latencySeconds"] = self.latency
        if self.drop:
            action["dropConnection"] = True
        return {"id": self.id, "match": match, "action": action, "count": self.count, "remaining": self.remaining, "hits": self.hits}

    def status_error(self, gr: errors.GroupResource, name: str) -> errors.StatusError:
        """The error this rule answers with, for a request on ``gr`` (and object ``name``, if any)."""
        spec = self.error or {}
        code, message, retry = spec["code"], spec.get("message"), spec.get("retryAfterSeconds")
        if code == 409:
            exc = errors.conflict(gr, name)
        elif code == 429:
            exc = errors.too_many_requests(message or LIMITER_MESSAGE, 1 if retry is None else retry)
        elif code == 500:
            exc = errors.internal(f"fault injected by mockapi (rule {self.id})")
        elif code == 503:
            exc = errors.StatusError(503, "ServiceUnavailable", UNAVAILABLE_MESSAGE)
        else:
            exc = errors.StatusError(504, "Timeout", f"Timeout: {TIMEOUT_MESSAGE}", {"retryAfterSeconds": retry} if retry else {})
        if message:
            exc.message = message
            exc.details.pop("causes", None)
        if spec.get("reason"):
            exc.reason = spec["reason"]
        if retry is not None and code != 429:
            exc.details["retryAfterSeconds"] = retry
            exc.headers["Retry-After"] = str(retry)
        return exc

    @property
    def plain_limiter(self) -> bool:
        """A 429 with neither reason nor message: the in-flight limiter's plain-text answer."""
        spec = self.error or {}
        return spec.get("code") == 429 and not spec.get("message") and not spec.get("reason")


class FaultSet:
    """The rules of one server: added, listed, removed, and matched against each request."""

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}  # every rule until removed, exhausted ones too (hits stay visible)
        self.active: list[Rule] = []  # the rules that still act, oldest first
        self.listeners: list[Callable[[str, str], None]] = []  # (rule id, action) per injection: /metrics
        self._seq = 0

    def add(self, body: Any) -> Rule:
        """Add a rule from its JSON form; a bad one is a 400 naming the field."""
        rule = parse(body, default_id=f"fault-{self._seq + 1}")
        if rule.id in self.rules:
            raise errors.StatusError(409, "AlreadyExists", f'fault rule "{rule.id}" already exists', {"name": rule.id, "kind": "faults"})
        self._seq += 1
        self.rules[rule.id] = rule
        self.active.append(rule)
        return rule

    def get(self, rule_id: str) -> Rule:
        rule = self.rules.get(rule_id)
        if rule is None:
            raise errors.StatusError(404, "NotFound", f'fault rule "{rule_id}" not found', {"name": rule_id, "kind": "faults"})
        return rule

    def remove(self, rule_id: str) -> Rule:
        rule = self.get(rule_id)
        del self.rules[rule_id]
        if rule in self.active:
            self.active.remove(rule)
        return rule

    def clear(self) -> int:
        count = len(self.rules)
        self.rules.clear()
        self.active.clear()
        return count

    def match(self, info, headers: dict) -> Rule | None:
        """The oldest live rule matching this request, counted as hit; None if none matches."""
        agent = headers.get(b"user-agent", b"").decode("latin-1")
        for rule in self.active:
            if rule.matches(info, agent):
                rule.hits += 1
                if rule.remaining is not None:
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self.active.remove(rule)
                return rule
        return None

    def injected(self, rule: Rule, action: str) -> None:
        for listener in self.listeners:
            listener(rule.id, action)


# ---------------------------------------------------------------- parsing
def parse(body: Any, *, default_id: str) -> Rule:
    """A :class:`Rule` from its JSON form, or a 400 listing every problem (``match.verb: ...``)."""
    problems: list[errors.FieldError] = []
    if not isinstance(body, dict):
        raise errors.bad_request("a fault rule must be a JSON object")
    _unknown(body, _RULE_KEYS, "", problems)
    rule = Rule(id=_rule_id(body.get("id"), default_id, problems))
    match = _object(body.get("match"), "match", problems)
    action = _object(body.get("action"), "action", problems)
    _unknown(match, _MATCH_KEYS, "match.", problems)
    _unknown(action, _ACTION_KEYS, "action.", problems)
    _parse_match(rule, match, problems)
    _parse_action(rule, action, problems)
    rule.count = rule.remaining = _count(body.get("count"), problems)
    if problems:
        summary = str(problems[0]) if len(problems) == 1 else "[" + ", ".join(str(p) for p in problems) + "]"
        raise errors.StatusError(400, "BadRequest", f"invalid fault rule: {summary}", {"causes": [p.cause() for p in problems]})
    return rule


def _rule_id(value: Any, default: str, problems: list) -> str:
    if value is None or value == "":
        return default
    if not isinstance(value, str) or not _ID.fullmatch(value):
        problems.append(errors.FieldError("invalid", "id", "must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)", value))
        return default
    return value


def _object(value: Any, path: str, problems: list) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(errors.FieldError("type_invalid", path, "must be an object", value))
        return {}
    return value


@dataclass(frozen=True)
class _UnknownField:
    """A key a rule may not have, worded as kube's strict decoding words it (``unknown field "x"``)."""

    field: str
    known: tuple[str, ...]

    def __str__(self) -> str:
        return f'unknown field "{self.field}" (known: {", ".join(self.known)})'

    def cause(self) -> dict:
        return {"reason": "FieldValueInvalid", "message": str(self), "field": self.field}


def _unknown(value: dict, known: tuple[str, ...], prefix: str, problems: list) -> None:
    problems.extend(_UnknownField(f"{prefix}{key}", known) for key in value if key not in known)


def _parse_match(rule: Rule, match: dict, problems: list) -> None:
    verbs = match.get("verb")
    if verbs is not None:
        listed = [verbs] if isinstance(verbs, str) else verbs
        if not isinstance(listed, list) or not all(isinstance(v, str) for v in listed):
            problems.append(errors.FieldError("type_invalid", "match.verb", "must be a verb or a list of verbs", verbs))
        else:
            for verb in listed:
                if verb not in VERBS and verb != "*":
                    problems.append(errors.FieldError("not_supported", "match.verb", "supported values: " + ", ".join(f'"{v}"' for v in VERBS), verb))
            rule.verbs = frozenset(listed) if "*" not in listed else frozenset()
    for key, attribute in (("resource", "resource"), ("namespace", "namespace"), ("name", "name"), ("userAgent", "user_agent")):
        value = match.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            problems.append(errors.FieldError("type_invalid", f"match.{key}", "must be a string", value))
            continue
        setattr(rule, attribute, value)
    if rule.resource and rule.resource != "*":
        _parse_resource(rule, problems)


def _parse_resource(rule: Rule, problems: list) -> None:
    """``pods`` (no subresource), ``pods/status``, ``pods/*`` (with or without any subresource), each
    optionally with a group: ``deviceclaims.devmgmtproto.k8s.io/status``."""
    resource, _, subresource = rule.resource.partition("/")
    plural, _, group = resource.partition(".")
    if not plural or "/" in subresource or (rule.resource.endswith("/") and not subresource):
        problems.append(errors.FieldError("invalid", "match.resource", "must be plural[.group][/subresource], e.g. pods, pods/status or deviceclaims.devmgmtproto.k8s.io", rule.resource))
        return
    rule._plural = plural
    rule._group = group or None
    rule._subresource = None if subresource == "*" else subresource


def _parse_action(rule: Rule, action: dict, problems: list) -> None:
    if "error" in action:
        rule.error = _parse_error(action["error"], problems)
    latency = action.get("latencySeconds")
    if latency is not None:
        if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not math.isfinite(latency) or not 0 <= latency <= MAX_LATENCY:
            problems.append(errors.FieldError("invalid", "action.latencySeconds", f"must be a number of seconds from 0 to {MAX_LATENCY:g}", latency))
        else:
            rule.latency = float(latency)
    drop = action.get("dropConnection")
    if drop is not None and not isinstance(drop, bool):
        problems.append(errors.FieldError("type_invalid", "action.dropConnection", "must be a boolean", drop))
    rule.drop = drop is True
    if rule.error is not None and rule.drop:
        problems.append(errors.FieldError("forbidden", "action", "error and dropConnection cannot be combined"))
    if rule.error is None and not rule.drop and not rule.latency and not problems:
        problems.append(errors.FieldError("required", "action", "one of error, latencySeconds (above 0) or dropConnection"))


def _parse_error(value: Any, problems: list) -> dict | None:
    spec = {"code": value} if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(spec, dict):
        problems.append(errors.FieldError("type_invalid", "action.error", "must be an HTTP code or an object with code, reason, message, retryAfterSeconds", value))
        return None
    _unknown(spec, _ERROR_KEYS, "action.error.", problems)
    code = spec.get("code")
    if code not in ERROR_CODES or isinstance(code, bool):
        supported = ", ".join(str(c) for c in ERROR_CODES)
        if code is None:
            problems.append(errors.FieldError("required", "action.error.code", f"one of {supported}"))
        else:
            problems.append(errors.FieldError("not_supported", "action.error.code", f"supported values: {supported}", code))
        return None
    for key in ("reason", "message"):
        if key in spec and not isinstance(spec[key], str):
            problems.append(errors.FieldError("type_invalid", f"action.error.{key}", "must be a string", spec[key]))
    retry = spec.get("retryAfterSeconds")
    if retry is not None and (isinstance(retry, bool) or not isinstance(retry, int) or not 0 <= retry <= 86400):
        problems.append(errors.FieldError("invalid", "action.error.retryAfterSeconds", "must be a whole number of seconds from 0 to 86400", retry))
    return {key: spec[key] for key in _ERROR_KEYS if spec.get(key) is not None}


def _count(value: Any, problems: list) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.append(errors.FieldError("invalid", "count", "must be a positive whole number (omit it for a rule that holds until removed)", value))
        return None
    return value
