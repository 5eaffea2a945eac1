"""Request options (metav1 ListOptions, CreateOptions/UpdateOptions/PatchOptions, DeleteOptions),
parsed once from the query string (and, for DELETE, the body) with kube-apiserver's validation."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

import orjson

from mockapi import errors, selectors
from mockapi.wire import parse_int64, query_bool

FIELD_VALIDATION = ("Ignore", "Warn", "Strict")
DEFAULT_FIELD_VALIDATION = "Warn"


def _int_param(query: dict[str, str], name: str) -> int | None:
    """An integer parameter as kube decodes it (400 ``strconv.ParseInt: parsing "1_0": invalid syntax``)."""
    raw = query.get(name)
    if raw is None:
        return None
    return parse_int64(raw)


def _dry_run(query: dict[str, str]) -> bool:
    value = query.get("dryRun")
    if value in (None, ""):
        return False
    if value != "All":
        raise errors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return True


@dataclass
class ListOptions:
    label_selector: selectors.LabelSelector | None = None
    field_selector: selectors.FieldSelector | None = None
    limit: int = 0
    continue_token: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    # watch only
    allow_bookmarks: bool = False
    timeout_seconds: int | None = None
    send_initial_events: bool | None = None

    @classmethod
    def parse(cls, query: dict[str, str], *, watch: bool = False) -> "ListOptions":
        label = query.get("labelSelector") or ""
        fields = query.get("fieldSelector") or ""
        opts = cls(
            label_selector=selectors.LabelSelector.parse(label) if label else None,
            field_selector=selectors.FieldSelector.parse(fields) if fields else None,
            limit=max(_int_param(query, "limit") or 0, 0),
            continue_token=query.get("continue") or "",
            resource_version=query.get("resourceVersion") or "",
            resource_version_match=query.get("resourceVersionMatch") or "",
            allow_bookmarks=query_bool(query, "allowWatchBookmarks"),
            timeout_seconds=_int_param(query, "timeoutSeconds"),
        )
        if "sendInitialEvents" in query:
            opts.send_initial_events = query_bool(query, "sendInitialEvents")
        opts._validate(watch=watch)
        return opts

    def _validate(self, *, watch: bool) -> None:
        match = self.resource_version_match
        if match not in ("", "Exact", "NotOlderThan"):
            raise errors.bad_request(f'resourceVersionMatch: Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"')
        if match and not self.resource_version and not (watch and self.send_initial_events):
            raise errors.bad_request("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")
        if self.continue_token and self.resource_version and self.resource_version != "0":
            raise errors.bad_request("resourceVersion: Forbidden: specifying resource version is not allowed when using continue")
        if self.send_initial_events is not None:
            if not watch:
                raise errors.bad_request("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list")
            if match != "NotOlderThan":
                raise errors.bad_request(
                    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                )
            if self.send_initial_events and not self.allow_bookmarks:
                raise errors.bad_request("allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true")
        elif watch and match:
            raise errors.bad_request("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
        if self.resource_version and self.resource_version != "0":
            parse_resource_version(self.resource_version)


def parse_resource_version(value: str) -> int:
    """A resourceVersion as the storage layer parses it (Go ``strconv.ParseUint(value, 10, 64)``):
    ASCII digits only, so ``1_0``, ``+1`` and `` 1`` are refused as ``-1`` is."""
    if not value.isascii() or not value.isdigit() or int(value) >= 2**64:
        raise errors.bad_request(f'resourceVersion: Invalid value: "{value}": must be a non-negative integer')
    return int(value)


@dataclass
class WriteOptions:
    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = DEFAULT_FIELD_VALIDATION
    force: bool = False
    warnings: list[str] = field(default_factory=list)
    # Who asks (mockapi.auth.user.UserInfo), set by the HTTP edge when authentication is on;
    # None in-process and with authentication off. Access reviews and RBAC's escalation checks read it.
    user: Any = None
    # The body is the registry's to keep: decoded from JSON for this request alone (the HTTP edge),
    # or a copy. What a create or update stores is then the registry's own, and the store hands it
    # to in-process watchers as it is instead of their parsing the event (Store.create's ``shared``).
    owned: bool = False

    @classmethod
    def parse(cls, query: dict[str, str]) -> "WriteOptions":
        if not query:  # most writes: every default
            return cls()
        validation = query.get("fieldValidation") or DEFAULT_FIELD_VALIDATION
        if validation not in FIELD_VALIDATION:
            raise errors.bad_request(
                f'fieldValidation: Unsupported value: "{validation}": supported values: "Ignore", "Strict", "Warn"'
            )
        manager = query.get("fieldManager") or ""
        if len(manager) > 128:
            raise errors.unprocessable('fieldManager: Too long: may not be more than 128 bytes')
        return cls(dry_run=_dry_run(query), field_manager=manager, field_validation=validation, force=query_bool(query, "force"))


@dataclass
class DeleteOptions:
    dry_run: bool = False
    propagation_policy: str = ""
    grace_period_seconds: int | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None

    @classmethod
    def parse(cls, query: dict[str, str], body: Any) -> "DeleteOptions":
        body = body or {}
        if not isinstance(body, dict):
            raise errors.bad_request("DeleteOptions must be a JSON object")
        preconditions = body.get("preconditions") or {}
        policy = query.get("propagationPolicy") or body.get("propagationPolicy") or ""
        if policy not in ("", "Orphan", "Background", "Foreground"):
            raise errors.unprocessable(
                f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan", "nil"'
            )
        dry_run = _dry_run(query) or body.get("dryRun") == ["All"]
        grace = _int_param(query, "gracePeriodSeconds")
        if grace is None and isinstance(body.get("gracePeriodSeconds"), int):
            grace = body["gracePeriodSeconds"]
        return cls(
            dry_run=dry_run,
            propagation_policy=policy,
            grace_period_seconds=grace,
            precondition_uid=preconditions.get("uid") if isinstance(preconditions, dict) else None,
            precondition_rv=preconditions.get("resourceVersion") if isinstance(preconditions, dict) else None,
        )


# ---------------------------------------------------------------- continue tokens
def encode_continue(rv: int, namespace: str, name: str) -> str:
    payload = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": [namespace, name]})
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = orjson.loads(base64.urlsafe_b64decode(padded.encode()))
        rv, (namespace, name) = payload["rv"], payload["start"]
        if payload.get("v") != "meta.k8s.io/v1" or not isinstance(rv, int) or not isinstance(namespace, str) or not isinstance(name, str):
            raise ValueError("unknown continue token version")
    except (ValueError, KeyError, TypeError, binascii.Error, orjson.JSONDecodeError) as exc:
        raise errors.bad_request(f"continue key is not valid: {exc}") from None
    return rv, (namespace, name)
