"""The control endpoints under ``/mockapi/v1/``: not part of the Kubernetes API (docs/control.md).

    GET    /mockapi/v1                   what is here
    POST   /mockapi/v1/reset             delete every object but the CRDs and default namespaces
                                         (?keepCRDs=false, ?keepNamespaces=true)
    POST   /mockapi/v1/load              apply a multi-document YAML (or JSON) body (?source=NAME
                                         names it in errors)
    GET    /mockapi/v1/snapshot          the user's objects as YAML a real cluster accepts
    GET    /mockapi/v1/requests          recent API requests (?verb= &resource= &namespace= &name=
                                         &group= &subresource= &code= &userAgent= &limit=)
    DELETE /mockapi/v1/requests          forget them
    GET    /mockapi/v1/kubeconfig        a kubeconfig for this server, as the client reached it
                                         (?user=NAME&group=G...: with a token minted for that user,
                                         when authentication is on; ?token=T: with that token)
    POST   /mockapi/v1/users             {"name", "groups", "uid"} → {"token"}: a bearer token for a
                                         test user (authentication on; docs/auth.md)
    GET    /mockapi/v1/audit             recent audit events (?limit=N), when the audit log is on
    DELETE /mockapi/v1/audit             forget them
    GET    /mockapi/v1/allocation        the allocation mode and the claims it holds
    PUT    /mockapi/v1/allocation        {"mode": "immediate|delay|manual", "delaySeconds", "jitterSeconds"}
    POST   /mockapi/v1/allocation/step   {"namespace", "name"} | {"all": true} | {} (the oldest)
    GET    /mockapi/v1/faults            the fault rules (docs/fault-injection.md)
    POST   /mockapi/v1/faults            add one: {"id"?, "match": {...}, "action": {...}, "count"?}
    DELETE /mockapi/v1/faults            remove them all
    GET    /mockapi/v1/faults/{id}       one rule, with its hits
    DELETE /mockapi/v1/faults/{id}       remove it
    POST   /mockapi/v1/faults/close-watches   end every open watch now
    POST   /mockapi/v1/faults/compact    forget the watch history: older resourceVersions get 410

Errors are ``metav1.Status`` like everywhere else.
"""

from __future__ import annotations

import base64
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import yaml

from mockapi import errors
from mockapi.faults import FaultSet
from mockapi.http import bodies
from mockapi.registry.options import ListOptions
from mockapi.registry.rest import Registry

PREFIX = "/mockapi/v1"
JSON = "application/json"
YAML = "application/yaml"
ENDPOINTS = [
    f"{PREFIX}/{name}"
    for name in ("reset", "load", "snapshot", "requests", "kubeconfig", "allocation", "allocation/step", "faults", "faults/close-watches", "faults/compact", "users", "audit")
]
_FILTERS = ("verb", "group", "resource", "subresource", "namespace", "name")
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink", "ownerReferences")
_NOT_SNAPSHOTTED = {("", "events"), ("events.k8s.io", "events")}
# Finalizers our controllers add (the allocator's deallocation hook): a cluster without them would
# keep such objects forever.
_CONTROLLER_FINALIZERS = frozenset({"devmgmtproto.k8s.io/allocation"})
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class RequestLog:
    """A bounded ring of recent ``/api`` and ``/apis`` requests; ``record`` is a KubeAPI observer."""

    def __init__(self, size: int = 1000) -> None:
        self._ring: deque = deque(maxlen=size)
        self._seq = 0

    def record(self, info, code: int, seconds: float, headers: dict) -> None:
        self._seq += 1
        self._ring.append((self._seq, time.time(), info, code, seconds, headers.get(b"user-agent", b"")))

    def clear(self) -> int:
        count = len(self._ring)
        self._ring.clear()
        return count

    def query(self, filters: dict[str, str]) -> list[dict]:
        """Matching entries, oldest first. Filters: the RequestInfo fields of :data:`_FILTERS`,
        ``code``, ``userAgent`` (a substring) and ``limit`` (the newest N)."""
        items = [_entry(*row) for row in self._ring]
        for key in _FILTERS:
            if key in filters:
                items = [i for i in items if i[key] == filters[key]]
        if "code" in filters:
            items = [i for i in items if str(i["code"]) == filters["code"]]
        if "userAgent" in filters:
            items = [i for i in items if filters["userAgent"] in i["userAgent"]]
        limit = filters.get("limit")
        if limit:
            if not limit.isdigit():
                raise errors.bad_request(f"limit must be a non-negative integer, not {limit!r}")
            items = items[-int(limit):] if int(limit) else []
        return items


def _entry(seq, at, info, code, seconds, agent) -> dict:
    return {
        "seq": seq,
        "time": _rfc3339(at),
        "verb": info.verb or info.method.lower(),
        "method": info.method,
        "path": info.path,
        "group": info.group,
        "version": info.version,
        "resource": info.resource,
        "subresource": info.subresource,
        "namespace": info.namespace,
        "name": info.name,
        "code": code,
        "latencySeconds": round(seconds, 6),
        "userAgent": agent.decode("latin-1"),
    }


def _rfc3339(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1_000_000):06d}Z"


@dataclass
class ControlPlane:
    """What the control endpoints act on; built by the composition root."""

    registry: Registry
    requests: RequestLog
    load: Callable[[bytes, str], Any]  # (YAML, source name) → applied (mockapi.loader.load_text)
    seed_crds: Callable[[], list[dict]]  # our CRDs as generated, restored by reset(keepCRDs=false)
    gate: Any = None  # mockapi.controllers.gate.AllocationGate (duck-typed: http sits below controllers)
    faults: FaultSet = field(default_factory=FaultSet)
    close_watches: Callable[[], int] = lambda: 0  # the store's: end every open watch, how many
    compact: Callable[[], int] = lambda: 0  # the store's: forget the history, the oldest RV left
    users: Any = None  # mockapi.auth.authn.TokenTable when authentication is on (duck-typed, as gate)
    audit: Any = None  # mockapi.auth.audit.AuditLog when the audit log is on
    ca: bytes | None = None  # the CA (PEM) of a server started with --generate-certs, for kubeconfigs
    # ... and its admin's client certificate and key (PEM): the credentials of a kubeconfig given
    # without a token (kubectl asks for a password over HTTPS when a kubeconfig names no credentials)
    admin_certificate: tuple[bytes, bytes] | None = None
    max_body: int = bodies.DEFAULT_MAX_BODY  # --max-body: the control API's bodies are bounded as the API's are

    def mint(self, name: Any, groups: Any = (), uid: Any = "") -> str:
        if self.users is None:
            raise errors.StatusError(404, "NotFound", "authentication is off in this server: every request is allowed (see `mockapi serve --authentication`)", {})
        if not isinstance(name, str) or not name:
            raise errors.bad_request("name: Required value: a user needs a name")
        if not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups):
            raise errors.bad_request("groups: Invalid value: expected a list of group names")
        return self.users.mint(name, groups=groups, uid=str(uid or ""))

    def reset(self, *, keep_crds: bool = True, keep_namespaces: bool = False) -> dict:
        from mockapi.registry import reset as resets  # with the first reset, not at start-up

        self.faults.clear()  # first: the reset's own writes must not meet a rule
        deleted = resets.reset(self.registry, keep_crds=keep_crds, keep_namespaces=keep_namespaces, seed_crds=self.seed_crds)
        self.requests.clear()
        if self.gate is not None:
            self.gate.reset()
        return {"deleted": deleted}

    def snapshot(self, *, namespace: str = "") -> str:
        objects = [_strip(rt, stored.load()) for rt, stored in self._user_objects(namespace)]
        return yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)

    def _user_objects(self, namespace: str):
        seeded = {crd["metadata"]["name"] for crd in self.seed_crds()}
        for rt in _types_in_apply_order(self.registry):
            if namespace and not rt.namespaced and rt.plural != "namespaces":
                continue
            try:
                page = self.registry.list(rt, namespace if rt.namespaced else "", ListOptions())
            except errors.StatusError as exc:
                if exc.code == 405:
                    continue  # a kind that is only created, never stored (access reviews)
                raise
            for stored in page.items:
                if _skip(rt, stored, seeded, namespace):
                    continue
                yield rt, stored


def _types_in_apply_order(registry: Registry) -> list:
    """One type per resource: Namespaces, then CRDs, then cluster-scoped kinds, then namespaced ones."""
    chosen: dict = {}
    for rt in registry.types.all():
        if (rt.group, rt.plural) not in _NOT_SNAPSHOTTED:
            chosen.setdefault(rt.group_resource, rt)

    def order(rt) -> tuple:
        first = {"namespaces": 0, "customresourcedefinitions": 1}.get(rt.plural, 3 if rt.namespaced else 2)
        return first, rt.group, rt.kind

    return sorted(chosen.values(), key=order)


def _skip(rt, stored, seeded: set[str], namespace: str) -> bool:
    from mockapi.registry import reset as resets  # with the first snapshot, not at start-up

    if rt.plural == "customresourcedefinitions":
        return stored.name in seeded
    if rt.plural == "namespaces" and not rt.group:
        if namespace and stored.name != namespace:
            return True
        if stored.name in resets.PROTECTED_NAMESPACES:
            meta = stored.load()["metadata"]
            return meta.get("labels") == {resets.NAME_LABEL: stored.name} and not meta.get("annotations")
    if b'"deletionTimestamp"' in stored.raw or resets.system_object(rt.group_resource, stored.name, raw=stored.raw):
        return True
    # made by a controller from its owner (a pod's claims): the fresh cluster's controllers make it again
    return b'"controller":true' in stored.raw and any(ref.get("controller") for ref in stored.load()["metadata"].get("ownerReferences") or ())


def _strip(rt, obj: dict) -> dict:
    """Drop what the server set, so a real cluster (with schemas/ applied) accepts the object."""
    from mockapi.registry import reset as resets

    meta = obj["metadata"]
    for key in _SERVER_SET:
        meta.pop(key, None)
    finalizers = [f for f in meta.pop("finalizers", None) or () if f not in _CONTROLLER_FINALIZERS]
    if finalizers:
        meta["finalizers"] = finalizers
    if "status" in rt.subresources or rt.plural == "namespaces":
        obj.pop("status", None)
    if rt.plural == "namespaces" and not rt.group:
        labels = meta.get("labels") or {}
        labels.pop(resets.NAME_LABEL, None)
        if not labels:
            meta.pop("labels", None)
        if (obj.get("spec") or {}).get("finalizers") == ["kubernetes"]:
            obj.pop("spec")
    return obj


def kubeconfig(server: str, *, ca: bytes | None = None, token: str | None = None, certificate: tuple[bytes, bytes] | None = None) -> str:
    cluster: dict = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
    credentials: dict = {"token": token} if token else {}
    if certificate is not None and not token:
        credentials = {"client-certificate-data": base64.b64encode(certificate[0]).decode(), "client-key-data": base64.b64encode(certificate[1]).decode()}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mockapi", "cluster": cluster}],
        "contexts": [{"name": "mockapi", "context": {"cluster": "mockapi", "user": "mockapi", "namespace": "default"}}],
        "current-context": "mockapi",
        "users": [{"name": "mockapi", "user": credentials}],
    }
    return yaml.dump(config, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
