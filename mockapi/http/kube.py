"""The thin ASGI dispatcher for ``/api`` and ``/apis``: parse once, route by verb, render errors once.

No per-resource routes: a request becomes a :class:`RequestInfo`, the type is one dict lookup, the
verb one more. Every exception leaves through :func:`errors.to_status` and is sent as a
``metav1.Status`` (unknown ones are logged and become a 500).
"""

from __future__ import annotations

import logging
import time

from mockapi import errors, faults
from mockapi.http import discovery as discovery_
from mockapi.http import injection, requestinfo, responses, table, verbs
from mockapi.http import watch as watch_
from mockapi.http.verbs import Call
from mockapi.registry.rest import Registry

log = logging.getLogger("mockapi.http")

HANDLERS: dict[str, verbs.Handler] = {
    "get": verbs.get,
    "list": verbs.list_,
    "watch": watch_.watch,
    "create": verbs.create,
    "update": verbs.update,
    "patch": verbs.patch,
    "delete": verbs.delete,
    "deletecollection": verbs.delete_collection,
}
SUBRESOURCE_VERBS = {"status": ("get", "update", "patch"), "scale": ("get", "update", "patch"), "finalize": ("update",), "binding": ("create",)}
# Subresources of core kinds that no CRD-style declaration names: namespaces/finalize, pods/binding.
_CORE_SUBRESOURCES = {("namespaces", "finalize"), ("pods", "binding")}
# The methods kube-apiserver routes on each URL shape; any other gets go-restful's 405.
COLLECTION_METHODS = frozenset({"GET", "POST", "DELETE"})
ITEM_METHODS = frozenset({"GET", "PUT", "PATCH", "DELETE"})
_NOT_FOUND = ("the server could not find the requested resource",)


def _not_found() -> errors.StatusError:
    return errors.StatusError(404, "NotFound", _NOT_FOUND[0], {})


class KubeAPI:
    def __init__(self, registry: Registry, discovery: discovery_.Discovery, *, max_body: int, watch_settings: dict | None = None, observer=None, fault_set: faults.FaultSet | None = None) -> None:
        self.registry = registry
        self.discovery = discovery
        self.max_body = max_body
        self.watch_settings = watch_settings or {}
        # Called after each request with (RequestInfo, status code, seconds taken, headers), if set:
        # the hook for metrics and the recent-requests ring.
        self.observer = observer
        # Users' fault rules (mockapi.faults), consulted before the handler while one is live.
        self.faults = fault_set if fault_set is not None else faults.FaultSet()
        # Create-only kinds no type serves, e.g. SelfSubjectReview (mockapi.auth.whoami):
        # (group, resource) → handler(info, user, receive, send). Consulted only when no type matches.
        self.virtual: dict = {}

    async def __call__(self, scope, receive, send) -> None:
        started = time.perf_counter()
        info = requestinfo.parse(scope["method"], scope["path"], scope.get("query_string", b""))
        code = [0]
        headers: dict = {}

        async def tracking_send(message):
            if message["type"] == "http.response.start":
                code[0] = message["status"]
            await send(message)

        try:
            headers = dict(scope.get("headers") or ())
            if info.is_resource_request:
                await self._resource(info, headers, receive, tracking_send, scope.get("user"))
            else:
                await self._discovery(info, headers, tracking_send)
        except ConnectionAbortedError:
            return
        except Exception as exc:  # noqa: BLE001 - the one place errors become responses
            status = errors.to_status(exc)
            if not isinstance(exc, errors.StatusError):
                log.exception("internal error serving %s %s", info.method, info.path)
            if code[0]:
                return  # a stream already started: nothing more can be said over HTTP
            await responses.send_error(tracking_send, status)
        finally:
            if self.observer is not None:
                self.observer(info, code[0], time.perf_counter() - started, headers)

    async def _resource(self, info, headers, receive, send, user) -> None:
        rt = self.registry.types.find(info.group, info.version, info.resource)
        if rt is None:
            virtual = self.virtual.get((info.group, info.resource))
            if virtual is None:
                raise _not_found()
            await virtual(info, user, receive, send)
            return
        if info.subresource:
            allowed = SUBRESOURCE_VERBS.get(info.subresource, ()) if info.subresource != "scale" or rt.builtin else ()  # CRDs' scale: not served
            if info.subresource not in rt.subresources and not (rt.builtin and not rt.group and (rt.plural, info.subresource) in _CORE_SUBRESOURCES):
                raise _not_found()
            if info.verb not in allowed:
                raise errors.method_not_allowed()
        if rt.namespaced and not info.namespace and info.verb not in ("list", "watch"):
            raise _not_found() if info.name else errors.method_not_allowed()
        if not rt.namespaced and info.namespace and rt.plural != "namespaces":
            raise _not_found()
        if not info.subresource and info.method not in (ITEM_METHODS if info.name else COLLECTION_METHODS):
            raise errors.method_not_allowed()
        handler = HANDLERS.get(info.verb)
        if handler is None:
            raise errors.method_not_allowed()
        table.negotiate(headers.get(b"accept", b"").decode("latin-1"))  # 406 before anything is done
        deprecated = "" if rt.builtin else self.registry.deprecation_warning(rt)  # only CRs' versions are deprecated
        if deprecated:
            send = responses.with_headers(send, [responses.warning_header(deprecated)])
        call = Call(info, rt, self.registry, headers, receive, send, self.max_body, self.watch_settings, user)
        if self.faults.active and await injection.intercept(self.faults, call):
            return
        await handler(call)

    async def _discovery(self, info, headers, send) -> None:
        if info.method != "GET":
            raise errors.method_not_allowed()
        accept = headers.get(b"accept", b"").decode("latin-1")
        d = self.discovery
        path = info.path.rstrip("/")
        if path in ("/api", "/apis") and discovery_.wants_aggregated(accept):
            body = d.aggregated(core=path == "/api")
            await responses.send_bytes(send, 200, body, content_type=discovery_.AGGREGATED_CONTENT_TYPE)
            return
        if path == "/api":
            body = d.api_versions()
        elif path == "/apis":
            body = d.group_list()
        elif info.api_prefix == "api" and info.version and not info.resource and path.count("/") == 2:
            body = d.resource_list("", info.version)
        elif info.api_prefix == "apis" and info.group and not info.version:
            body = d.group(info.group)
        elif info.api_prefix == "apis" and info.version and path.count("/") == 3:
            body = d.resource_list(info.group, info.version)
        else:
            raise _not_found()
        await responses.send_bytes(send, 200, body)
