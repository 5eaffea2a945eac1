"""The request filters in front of the whole application when authentication, authorization or the
audit log is on, in kube-apiserver's order (k8s.io/apiserver/pkg/server/config.go
``DefaultBuildHandlerChain``): authentication (401) → audit → impersonation (403) → authorization
(403) → the handler, which finds the user in ``scope["user"]``.

With none of them configured the composition root does not install this at all: the default
mode's hot path does no work for it.

What needs no credentials or permission:

- ``/healthz``, ``/livez``, ``/readyz`` (and their checks) and ``/version``: reachable without
  credentials, as kube's ``system:public-info-viewer`` allows them to anyone (a container's
  health probe has no token); a bad token is still a 401.
- discovery (``/api``, ``/apis`` and below, no resource), ``/openapi/*`` and
  ``selfsubjectreviews`` (``kubectl auth whoami``): any authenticated user, as kube's
  ``system:discovery`` and ``system:basic-user`` allow.
- ``system:masters``: everything, before any authorizer is asked (kube's privileged-group authorizer).

Everything else — every resource, the control API ``/mockapi/v1/*`` and ``/metrics`` — is the
authorizer's call (RBAC: a ClusterRole with ``nonResourceURLs: ["/mockapi/*"]`` opens the control API).

Cost (docs/auth.md, "What it costs"): one ASGI callable, not nested wrappers; one pass over the
headers finds ``Authorization`` and any ``Impersonate-*``; the user comes from the authenticator's
per-header cache; the authorizer's attributes are built only when an authorizer other than
AlwaysAllow has to decide (not for ``system:masters``, public paths or discovery).
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Callable

import orjson

from mockapi import errors
from mockapi.auth import authz, impersonation
from mockapi.auth.audit import AuditLog
from mockapi.auth.authn import ANONYMOUS_USER, Authenticator, Unauthorized
from mockapi.auth.authz import AlwaysAllow, Attributes, Authorizer, Decision
from mockapi.auth.user import ALL_AUTHENTICATED, MASTERS, UNAUTHENTICATED_ADMIN, UserInfo
from mockapi.http import requestinfo, responses

log = logging.getLogger("mockapi.auth")
PEER_CERTIFICATE = "mockapi.peer_certificate"  # the scope key mockapi.auth.tls puts a connection's client certificate under
UNAUTHORIZED = errors.StatusError(401, "Unauthorized", "Unauthorized", {})
_PUBLIC = ("/healthz", "/livez", "/readyz")
_BASIC_USER = frozenset({"selfsubjectreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews"})
_BASIC_USER_GROUPS = frozenset({"authentication.k8s.io", "authorization.k8s.io"})


def public(path: str) -> bool:
    """Health checks and the version: no credentials needed."""
    return path == "/version" or path.startswith(_PUBLIC) and path.split("/", 2)[1] in ("healthz", "livez", "readyz")


def discovery(info) -> bool:
    if info.is_resource_request:
        return info.verb == "create" and info.resource in _BASIC_USER and info.group in _BASIC_USER_GROUPS and not info.name
    path = info.path
    return info.method == "GET" and (path in ("/api", "/apis", "/api/", "/apis/") or path.startswith(("/api/", "/apis/", "/openapi/")))


def attributes(info, user: UserInfo) -> Attributes:
    """What the authorizer decides on (kube's ``GetAuthorizerAttributes``)."""
    if not info.is_resource_request:
        return Attributes(user, info.method.lower(), resource_request=False, path=info.path)
    query = info.query
    return Attributes(
        user, info.verb, api_group=info.group, api_version=info.version, resource=info.resource,
        subresource=info.subresource, namespace=info.namespace, name=info.name, path=info.path,
        field_selector=_field_selector(query["fieldSelector"]) if "fieldSelector" in query else (),
        label_selector=_label_selector(query["labelSelector"]) if "labelSelector" in query else (),
    )  # fmt: skip


def _field_selector(text: str) -> tuple:
    """The request's field selector as the authorizer sees it (kube's AuthorizeWithSelectors); one
    that does not parse is none here (the handler answers its 400)."""
    from mockapi.registry.reviews import field_requirements

    return field_requirements({"rawSelector": text})[0]


def _label_selector(text: str) -> tuple:
    from mockapi.registry.reviews import label_requirements

    return label_requirements({"rawSelector": text})[0]


def forbidden(attrs: Attributes, decision: Decision) -> errors.StatusError:
    """The 403 kube writes (``responsewriters.Forbidden``; :func:`mockapi.auth.authz.forbidden_error`)."""
    refusal = authz.forbidden_error(attrs, decision)
    if attrs.resource_request:
        return refusal
    return _PathForbidden(403, "Forbidden", refusal.message, {})


class _PathForbidden(errors.StatusError):
    """A 403 on a non-resource path: kube writes its empty details as ``{}``."""

    def status(self) -> dict:
        body = super().status()
        code = body.pop("code")
        return {**body, "details": {}, "code": code}


_ALLOWED = Decision(True)


def _scan(headers) -> tuple[bytes | None, bool]:
    """One pass over the raw headers: the ``Authorization`` value (the first) and whether any
    ``Impersonate-*`` header is there (ASGI servers give the names in lower case)."""
    authorization, impersonating = None, False
    for name, value in headers:
        if name == b"authorization":
            if authorization is None:
                authorization = value
        elif name[:12] == b"impersonate-":
            impersonating = True
    return authorization, impersonating


class Chain:
    """The ASGI filters around ``app``; each part optional (None: that filter is off)."""

    def __init__(self, app, *, authenticator: Authenticator | None = None, authorizer: Authorizer | None = None, audit: AuditLog | None = None) -> None:
        self.app = app
        self.authenticator = authenticator
        self.authorizer = authorizer or AlwaysAllow()
        self.audit = audit
        self._allow_all = type(self.authorizer) is AlwaysAllow  # nothing to build attributes for

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        info = requestinfo.parse(scope["method"], scope["path"], scope.get("query_string", b""))
        headers = scope.get("headers") or []
        authorization, impersonating = _scan(headers)
        record = Record(self.audit, scope, info) if self.audit is not None else None
        try:
            user = self._authenticate(scope, authorization)
        except Unauthorized as exc:
            if exc.args:
                log.error('"Unable to authenticate the request" err=%s', orjson.dumps(exc.args[0]).decode())
            if record is not None:
                record.begin(UserInfo(""))
                record.end(401, UNAUTHORIZED.status())
            await responses.send_error(send, UNAUTHORIZED)
            return
        if record is not None:
            record.begin(user)
            send, receive = record.wrap(send, receive)
        try:
            if impersonating:
                user = self._impersonate(user, headers, record)
            self._authorize(info, user, record)
        except errors.StatusError as exc:
            await responses.send_error(send, exc)
            if record is not None:
                record.finish()
            return
        scope["user"] = user
        if record is None:
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            record.finish()

    def _authenticate(self, scope, authorization: bytes | None) -> UserInfo:
        if self.authenticator is None:
            return UNAUTHENTICATED_ADMIN
        peer = scope.get(PEER_CERTIFICATE)
        try:
            return self.authenticator.authenticate(authorization, peer)
        except Unauthorized:
            if authorization is None and peer is None and public(scope["path"]):
                return ANONYMOUS_USER
            raise

    def _impersonate(self, user: UserInfo, headers, record) -> UserInfo:
        asked, target = impersonation.parse(headers)
        for one in asked:
            attrs = one.attributes(user)
            decision = self._decide(attrs)
            if not decision.allowed:
                if record is not None:
                    record.decided(decision)
                raise forbidden(attrs, decision)
        if record is not None:
            record.impersonated = target
        return target

    def _authorize(self, info, user: UserInfo, record) -> None:
        """The request's decision. Under AlwaysAllow, for ``system:masters``, on the public paths and
        for discovery it is an allow without building the authorizer's attributes (kube's
        privileged-group authorizer and ``system:public-info-viewer``/``system:discovery`` come
        first; AlwaysAllow's decision has no reason either)."""
        groups = user.groups
        if self._allow_all or MASTERS in groups or public(info.path) or (ALL_AUTHENTICATED in groups and discovery(info)):
            if record is not None:
                record.decided(_ALLOWED)
            return
        attrs = attributes(info, user)
        decision = self.authorizer.authorize(attrs)
        if record is not None:
            record.decided(decision)
        if not decision.allowed:
            raise forbidden(attrs, decision)

    def _decide(self, attrs: Attributes) -> Decision:
        if MASTERS in attrs.user.groups:
            return Decision(True)
        return self.authorizer.authorize(attrs)


# ------------------------------------------------------------------ audit events
class Record:
    """One request's audit events: RequestReceived when it is let in, ResponseComplete at the end."""

    def __init__(self, audit: AuditLog, scope, info) -> None:
        self.audit, self.scope, self.info = audit, scope, info
        self.received = time.time()
        self.id = str(uuid.uuid4())
        self.level, self.omit = "None", frozenset()
        self.user: UserInfo | None = None
        self.impersonated: UserInfo | None = None
        self.decision: Decision | None = None
        self.code = 0
        self.request_body: list[bytes] = []
        self.response_body: list[bytes] = []
        self.content_type = b""
        self._done = False
        self._about_request: dict | None = None
        self._received = ""

    def begin(self, user: UserInfo) -> None:
        self.user = user
        self.level, self.omit = self.audit.policy.level(attributes(self.info, user))
        if self.level != "None" and "RequestReceived" not in self.omit:
            self.audit.write(self._event("RequestReceived"))

    def decided(self, decision: Decision) -> None:
        self.decision = decision

    def wrap(self, send, receive) -> tuple[Callable, Callable]:
        if self.level == "None":
            return send, receive
        wants_request = self.level in ("Request", "RequestResponse")

        async def recording_receive():
            message = await receive()
            if wants_request and message["type"] == "http.request":
                self.request_body.append(message.get("body", b""))
            return message

        async def recording_send(message):
            if message["type"] == "http.response.start":
                self.code = message["status"]
                self.content_type = next((v for k, v in message.get("headers", ()) if k == b"content-type"), b"")
            elif message["type"] == "http.response.body" and (self.code >= 400 or self.level == "RequestResponse") and self.info.verb != "watch":
                self.response_body.append(message.get("body", b""))
            await send(message)

        return recording_send, recording_receive

    def end(self, code: int, status: dict | None) -> None:
        self.code = code
        if status is not None:
            self.response_body = [orjson.dumps(status)]
            self.content_type = b"application/json"
        self.finish()

    def finish(self) -> None:
        if self._done or self.level == "None" or "ResponseComplete" in self.omit:
            return
        self._done = True
        self.audit.write(self._event("ResponseComplete"))

    def _event(self, stage: str) -> dict:
        event = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": self.level, "auditID": self.id, "stage": stage, **self._about()}
        if self.impersonated is not None:
            event = _after(event, "user", "impersonatedUser", self.impersonated.to_json())
        if stage != "RequestReceived":
            event["responseStatus"] = self._response_status()
            if self.level in ("Request", "RequestResponse") and self.request_body:
                _put_json(event, "requestObject", b"".join(self.request_body))
            if self.level == "RequestResponse" and self.response_body and self.content_type.startswith(b"application/json"):
                _put_json(event, "responseObject", b"".join(self.response_body))
        event["requestReceivedTimestamp"] = self._received
        event["stageTimestamp"] = _timestamp(time.time())
        if self.decision is not None:
            event["annotations"] = {"authorization.k8s.io/decision": "allow" if self.decision.allowed else "forbid", "authorization.k8s.io/reason": self.decision.reason}
        return event

    def _about(self) -> dict:
        """What both stages say about the request (computed once)."""
        if self._about_request is None:
            info, scope = self.info, self.scope
            query = scope.get("query_string", b"").decode("latin-1")
            about: dict = {
                "requestURI": info.path + (f"?{query}" if query else ""),
                "verb": info.verb if info.is_resource_request else info.method.lower(),
                "user": self.user.to_json() if self.user and self.user.name else {},
                "sourceIPs": _source_ips(scope),
            }
            agent = next((v for k, v in scope.get("headers") or () if k == b"user-agent"), None)
            if agent is not None:
                about["userAgent"] = agent.decode("latin-1")
            if info.is_resource_request:
                about["objectRef"] = _object_ref(info)
            self._about_request = about
            self._received = _timestamp(self.received)
        return self._about_request

    def _response_status(self) -> dict:
        status = {"metadata": {}, "code": self.code}
        if self.response_body and self.content_type.startswith(b"application/json"):
            try:
                body = orjson.loads(b"".join(self.response_body))
            except orjson.JSONDecodeError:
                return status
            if isinstance(body, dict) and body.get("kind") == "Status":
                status.update({k: body[k] for k in ("status", "message", "reason", "details") if body.get(k)})
        return status


def _after(event: dict, key: str, new_key: str, value) -> dict:
    """``event`` with ``new_key`` right after ``key`` (kube's field order)."""
    out: dict = {}
    for k, v in event.items():
        out[k] = v
        if k == key:
            out[new_key] = value
    return out


def _put_json(event: dict, key: str, raw: bytes) -> None:
    try:
        event[key] = orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass  # YAML apply bodies, protobuf: not logged as objects


def _object_ref(info) -> dict:
    ref = {"resource": info.resource, "namespace": info.namespace, "name": info.name, "apiGroup": info.group, "apiVersion": info.version, "subresource": info.subresource}
    return {k: v for k, v in ref.items() if v}


def _source_ips(scope) -> list[str]:
    forwarded = next((v for k, v in scope.get("headers") or () if k == b"x-forwarded-for"), b"")
    ips = [ip.strip() for ip in forwarded.decode("latin-1").split(",") if ip.strip()]
    client = scope.get("client")
    if client and client[0] not in ips:
        ips.append(client[0])
    return ips


def _timestamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1_000_000):06d}Z"
