"""Authorization: the attributes of a request (k8s.io/apiserver's ``authorizer.Attributes``), the
authorizers that decide on them (AlwaysAllow here, RBAC in :mod:`mockapi.auth.rbac`) and the 403
kube-apiserver answers when they refuse, word for word (:func:`forbidden_message`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from mockapi import errors
from mockapi.auth.user import UserInfo
from mockapi.schema.goformat import go_quote


@dataclass(slots=True)
class Attributes:
    """Treat as immutable. Not a frozen dataclass because it is built for every authorized
    request: a frozen one's ``__init__`` sets each of its 12 fields through ``object.__setattr__``
    (about 4x the cost of plain slots)."""

    user: UserInfo
    verb: str  # get list watch create update patch delete deletecollection, or impersonate, bind, escalate...; for non-resource URLs the lower-case HTTP method
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""  # non-resource requests
    # kube's AuthorizeWithSelectors (beta, on since 1.32): what a list/watch limits itself to, and
    # what an access review's fieldSelector/labelSelector say. RBAC ignores them; the Node
    # authorizer reads spec.nodeName. Field requirements are (field, "=" or "!=", value); label
    # requirements mockapi.selectors.Requirement.
    field_selector: tuple = ()
    label_selector: tuple = ()


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""  # why (RBAC: the binding that allowed it), shown in access reviews and audit


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> Decision: ...


class AlwaysAllow:
    def authorize(self, attrs: Attributes) -> Decision:
        return Decision(True)


def describe(attrs: Attributes) -> str:
    """What was asked, as kube-apiserver's ``forbiddenMessage`` words it (responsewriters/errors.go):
    ``User "alice" cannot list resource "pods" in API group "" in the namespace "default"``,
    ``... at the cluster scope``, ``resource "pods/binding"`` for a subresource and
    ``User "alice" cannot get path "/metrics"`` for a non-resource URL. A name is not part of it."""
    user = attrs.user.name if attrs.user is not None else ""
    if not attrs.resource_request:
        return f"User {go_quote(user)} cannot {attrs.verb} path {go_quote(attrs.path)}"
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = f"in the namespace {go_quote(attrs.namespace)}" if attrs.namespace else "at the cluster scope"
    return f"User {go_quote(user)} cannot {attrs.verb} resource {go_quote(resource)} in API group {go_quote(attrs.api_group)} {where}"


def forbidden_message(attrs: Attributes, decision: Decision) -> str:
    """The whole ``message`` of kube's 403 for a refused request (``responsewriters.Forbidden`` through
    ``apierrors.NewForbidden``): ``pods is forbidden: User "alice" cannot list resource "pods" in API
    group "" in the namespace "default"``; ``pods "web" is forbidden: ...`` when the request names an
    object; ``deployments.apps is forbidden: ...`` in a group; ``forbidden: User "alice" cannot get
    path "/metrics"`` off the resource paths; the authorizer's reason, if any, after ``: ``."""
    why = describe(attrs)
    if decision.reason:
        why = f"{why}: {decision.reason}"
    if not attrs.resource_request or not attrs.resource:
        return f"forbidden: {why}"
    gr = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    return f"{gr} {go_quote(attrs.name)} is forbidden: {why}" if attrs.name else f"{gr} is forbidden: {why}"


def forbidden_error(attrs: Attributes, decision: Decision) -> errors.StatusError:
    """The 403 ``metav1.Status`` kube-apiserver answers a refused request with (reason Forbidden,
    details naming the group, resource and object)."""
    details: dict = {}
    if attrs.resource_request and attrs.resource:
        if attrs.name:
            details["name"] = attrs.name
        if attrs.api_group:
            details["group"] = attrs.api_group
        details["kind"] = attrs.resource
    return errors.StatusError(403, "Forbidden", forbidden_message(attrs, decision), details)
