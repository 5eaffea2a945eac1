"""The built-in controllers' identities: who the allocator, the scheduler, the pods' claims
controller, the simulated kubelet and the garbage collector are when they call the registry
in-process (:class:`mockapi.client.LocalClient`), the roles that let them (bootstrapped in RBAC
mode), and the :class:`Guard` that authorizes and audits their calls as kube-apiserver does its
controllers' requests.

Each controller is the ServiceAccount ``devmgmtproto-system/<name>`` of ``schemas/rbac`` — the roles
one would ship to a real cluster. Their packaged copy (``controller_roles/``; the repository's
``schemas/`` is not in the wheel) is kept byte-equal to ``schemas/rbac`` by a test: ``cp
schemas/rbac/*.yaml mockapi/auth/controller_roles/`` after editing them.

With ``--authorization-mode=RBAC`` each call is checked against the server's authorizer with the
attributes its HTTP twin would have (verb, group, resource, subresource, namespace, name); a
refusal is kube's 403 :class:`~mockapi.errors.StatusError`, which the controller handles like any
API error. With the audit log on, writes (create, update, patch, delete, bind) are audited with the
controller's user and user agent; reads are not (an informer's list and watch, an allocator's
config lookups would drown the log; kube's controllers read from informer caches). With neither,
no Guard exists: the in-process client does no work for it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mockapi import errors
from mockapi.auth import authz
from mockapi.auth.authz import Attributes, Decision
from mockapi.auth.user import ALL_AUTHENTICATED, UserInfo

NAMESPACE = "devmgmtproto-system"
ROLES_DIR = Path(__file__).parent / "controller_roles"
SOURCE_IPS = ("127.0.0.1",)  # in-process, as kube's loopback clients appear in its audit log


@dataclass(frozen=True)
class Identity:
    """A controller's user (its ServiceAccount's) and the user agent its calls are audited with."""

    user: UserInfo
    user_agent: str


def service_account(name: str, namespace: str = NAMESPACE) -> UserInfo:
    """The user a ServiceAccount's token authenticates as (kube's serviceaccount.UserInfo)."""
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", ALL_AUTHENTICATED)
    return UserInfo(f"system:serviceaccount:{namespace}:{name}", groups=groups)


def _identity(name: str) -> Identity:
    return Identity(service_account(name), f"mockapi-{name}")


ALLOCATOR = _identity("allocator")
SCHEDULER = _identity("scheduler")
POD_CLAIMS = _identity("pod-claims-controller")
KUBELET = _identity("kubelet")
GARBAGE_COLLECTOR = _identity("garbage-collector")
ALL = (ALLOCATOR, SCHEDULER, POD_CLAIMS, KUBELET, GARBAGE_COLLECTOR)


# ------------------------------------------------------------------ roles
def manifests() -> list[dict]:
    """The Namespace, ServiceAccounts, ClusterRoles and ClusterRoleBindings of ``schemas/rbac``
    (its packaged copy), in file order."""
    from mockapi import loader

    return [obj for path in sorted(ROLES_DIR.glob("*.yaml")) for obj in loader.documents(path.read_bytes(), source=str(path))]


def bootstrap(registry: Any) -> int:
    """Create what of :func:`manifests` is missing (as kube's bootstrap roles: an administrator's
    edits are kept, a restart from a data directory creates nothing twice); returns how many."""
    from mockapi import gvk
    from mockapi.registry.options import WriteOptions

    created = 0
    for obj in manifests():
        rt = registry.types.by_kind(*gvk.parse_api_version(obj["apiVersion"]), obj["kind"])
        meta = obj["metadata"]
        namespace = meta.get("namespace", "") if rt.namespaced else ""
        if registry.store.get(rt.group_resource, namespace, meta["name"]) is None:
            registry.create(rt, namespace, obj, WriteOptions(field_validation="Strict"))
            created += 1
    return created


# ------------------------------------------------------------------ the guard
class Guard:
    """Authorizes (``authorizer``: None allows all) and audits (``audit``: None logs nothing) one
    controller's in-process calls."""

    def __init__(self, identity: Identity, *, authorizer: authz.Authorizer | None = None, audit: Any = None) -> None:
        self.identity, self.authorizer, self.audit = identity, authorizer, audit

    def attributes(self, verb: str, rt, namespace: str, name: str = "", subresource: str = "") -> Attributes:
        return Attributes(
            self.identity.user, verb, api_group=rt.group, api_version=rt.version, resource=rt.plural,
            subresource=subresource, namespace=namespace if rt.namespaced else "", name=name, path=_path(rt, namespace, name, subresource),
        )  # fmt: skip

    def decide(self, attrs: Attributes) -> Decision:
        return self.authorizer.authorize(attrs) if self.authorizer is not None else _ALLOWED

    def check(self, verb: str, rt, namespace: str, name: str = "", subresource: str = "") -> None:
        """A read: authorized, not audited."""
        if self.authorizer is not None:
            attrs = self.attributes(verb, rt, namespace, name, subresource)
            decision = self.authorizer.authorize(attrs)
            if not decision.allowed:
                raise authz.forbidden_error(attrs, decision)

    def write(self, verb: str, rt, namespace: str, name: str, call: Callable[[], Any], *, subresource: str = "", body: Any = None, code: int = 200) -> Any:
        """A write: authorized, then ``call()``; audited (RequestReceived, ResponseComplete with
        the code, or the error's Status) when the audit policy logs it."""
        attrs = self.attributes(verb, rt, namespace, name, subresource)
        record = _Record(self, attrs, body) if self.audit is not None else None
        decision = self.decide(attrs)
        if record is not None:
            record.decision = decision
        try:
            if not decision.allowed:
                raise authz.forbidden_error(attrs, decision)
            result = call()
        except errors.StatusError as exc:
            if record is not None:
                record.finish(exc.code, exc.status())
            raise
        if record is not None:
            record.finish(code, None, result)
        return result


_ALLOWED = Decision(True)


def _path(rt, namespace: str, name: str, subresource: str) -> str:
    """The request URI the call's HTTP twin would have."""
    path = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    if rt.namespaced and namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{rt.plural}"
    if name:
        path += f"/{name}"
    return f"{path}/{subresource}" if subresource else path


class _Record:
    """One audited in-process write: the event fields of :class:`mockapi.auth.chain.Record`."""

    def __init__(self, guard: Guard, attrs: Attributes, body: Any) -> None:
        self.audit, self.attrs, self.body = guard.audit, attrs, body
        self.level, self.omit = guard.audit.policy.level(attrs)
        self.decision: Decision | None = None
        if self.level == "None":
            return
        self.about = {
            "auditID": str(uuid.uuid4()),
            "requestURI": attrs.path, "verb": attrs.verb, "user": attrs.user.to_json(),
            "sourceIPs": list(SOURCE_IPS), "userAgent": guard.identity.user_agent, "objectRef": _object_ref(attrs),
        }  # fmt: skip
        self.received = _timestamp(time.time())
        if "RequestReceived" not in self.omit:
            self.audit.write(self._event("RequestReceived"))

    def finish(self, code: int, status: dict | None, result: Any = None) -> None:
        if self.level == "None" or "ResponseComplete" in self.omit:
            return
        event = self._event("ResponseComplete")
        response: dict = {"metadata": {}, "code": code}
        if status is not None:
            response.update({k: status[k] for k in ("status", "message", "reason", "details") if status.get(k)})
        event["responseStatus"] = response
        if self.level in ("Request", "RequestResponse") and self.body is not None:
            event["requestObject"] = self.body
        if self.level == "RequestResponse" and (status is not None or isinstance(result, dict)):
            event["responseObject"] = status if status is not None else result
        self.audit.write(self._reorder(event))

    def _event(self, stage: str) -> dict:
        head = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": self.level}
        return {**head, "auditID": self.about["auditID"], "stage": stage, **{k: v for k, v in self.about.items() if k != "auditID"}, "requestReceivedTimestamp": self.received, "stageTimestamp": _timestamp(time.time()), **self._annotations()}

    def _annotations(self) -> dict:
        if self.decision is None:
            return {}
        return {"annotations": {"authorization.k8s.io/decision": "allow" if self.decision.allowed else "forbid", "authorization.k8s.io/reason": self.decision.reason}}

    @staticmethod
    def _reorder(event: dict) -> dict:
        """The timestamps and annotations last, as the HTTP chain writes them."""
        tail = ("requestReceivedTimestamp", "stageTimestamp", "annotations")
        return {**{k: v for k, v in event.items() if k not in tail}, **{k: event[k] for k in tail if k in event}}


def _object_ref(attrs: Attributes) -> dict:
    ref = {"resource": attrs.resource, "namespace": attrs.namespace, "name": attrs.name, "apiGroup": attrs.api_group, "apiVersion": attrs.api_version, "subresource": attrs.subresource}
    return {k: v for k, v in ref.items() if v}


def _timestamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1_000_000):06d}Z"
