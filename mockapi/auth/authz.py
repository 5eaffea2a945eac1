"""Authorization: the attributes of a request (k8s.io/apiserver's ``authorizer.Attributes``) and the
authorizers that decide on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from mockapi.auth.user import UserInfo


@dataclass(frozen=True)
class Attributes:
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


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""  # why (RBAC: the binding that allowed it), shown in access reviews and audit


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> Decision: ...


class AlwaysAllow:
    def authorize(self, attrs: Attributes) -> Decision:
        return Decision(True)
