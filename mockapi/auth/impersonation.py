"""Impersonation: ``Impersonate-User``, ``-Group``, ``-Uid`` and ``-Extra-<key>`` headers
(``kubectl --as``/``--as-group``), k8s.io/apiserver's ``WithImpersonation``.

Each thing asked for is authorized as verb ``impersonate`` on ``users``, ``serviceaccounts``
(a ``system:serviceaccount:NS:NAME`` user: in namespace NS), ``groups`` (API group ""),
``userextras/<key>`` or ``uids`` (API group authentication.k8s.io), as the requester; the first
refusal is the 403. Then the request runs as the impersonated user: with the groups asked for (a
ServiceAccount without ``--as-group`` gets its fixed groups), plus ``system:authenticated``
unless one of the two "all" groups was given (``system:unauthenticated`` for system:anonymous).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from mockapi import errors
from mockapi.auth.authz import Attributes
from mockapi.auth.user import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo

USER = b"impersonate-user"
GROUP = b"impersonate-group"
UID = b"impersonate-uid"
EXTRA = b"impersonate-extra-"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
AUTHENTICATION_GROUP = "authentication.k8s.io"


@dataclass(frozen=True)
class Asked:
    """One thing impersonated, as the attributes of its ``impersonate`` check (the requester to be filled in)."""

    resource: str
    name: str
    group: str = ""
    namespace: str = ""
    subresource: str = ""

    def attributes(self, requester: UserInfo) -> Attributes:
        version = "v1"
        return Attributes(
            requester, "impersonate", api_group=self.group, api_version=version, resource=self.resource,
            subresource=self.subresource, namespace=self.namespace, name=self.name,
        )  # fmt: skip


def requested(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request asks to impersonate anyone (one pass over the raw headers)."""
    return any(name.startswith(b"impersonate-") for name, _ in headers)


def parse(headers: list[tuple[bytes, bytes]]) -> tuple[list[Asked], UserInfo]:
    """What the headers ask for, in kube's order (user, groups, extras, uid), and the user it makes."""
    user, groups, extra, uid = "", [], {}, ""
    for name, value in headers:
        text = value.decode("latin-1").strip()
        if name == USER:
            user = text
        elif name == GROUP:
            groups.append(text)
        elif name == UID:
            uid = text
        elif name.startswith(EXTRA):
            key = unquote(name[len(EXTRA):].decode("latin-1").lower())
            extra.setdefault(key, []).append(text)
    if not user and (groups or extra or uid):
        raise errors.internal(f"requested {_describe(groups, extra, uid)} without impersonating a user")
    asked = [_user_asked(user)]
    asked += [Asked("groups", group) for group in groups]
    asked += [Asked("userextras", value, AUTHENTICATION_GROUP, subresource=key) for key, values in extra.items() for value in values]
    if uid:
        asked.append(Asked("uids", uid, AUTHENTICATION_GROUP))
    return asked, UserInfo(user, uid=uid, groups=tuple(_groups(user, groups)), extra={k: tuple(v) for k, v in extra.items()})


def _user_asked(user: str) -> Asked:
    if user.startswith(SERVICE_ACCOUNT_PREFIX) and user.count(":") == 3:
        namespace, name = user[len(SERVICE_ACCOUNT_PREFIX):].split(":")
        if namespace and name:
            return Asked("serviceaccounts", name, namespace=namespace)
    return Asked("users", user)


def _groups(user: str, asked: list[str]) -> list[str]:
    groups = list(asked)
    asked_for_service_account = _user_asked(user).resource == "serviceaccounts"
    if asked_for_service_account and not asked:
        namespace = user.split(":")[2]
        groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    if user == ANONYMOUS:
        if ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_UNAUTHENTICATED)
    elif ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_AUTHENTICATED)
    return groups


def _describe(groups, extra, uid) -> str:
    parts = [f"group {g!r}" for g in groups] + [f"extra {k}={v!r}" for k, v in extra.items()] + ([f"uid {uid!r}"] if uid else [])
    return ", ".join(parts)
