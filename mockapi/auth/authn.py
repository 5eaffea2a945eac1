"""Authentication: who a request comes from (k8s.io/apiserver's ``WithAuthentication`` and the
authenticators it unions).

Three ways in, tried in kube-apiserver's order:

- a client certificate, verified by the TLS handshake against ``--client-ca-file`` (CN is the user
  name, each O a group; k8s.io/apiserver/pkg/authentication/request/x509);
- a bearer token (``Authorization: Bearer ...``) from the static token file
  (``--token-auth-file``, CSV ``token,user,uid,"group1,group2"``) or from the tokens this server
  minted for tests (:meth:`TokenTable.mint`, over ``POST /mockapi/v1/users``). Minted tokens are
  random strings kept in memory, not JWTs: nothing outside this process needs to verify them;
- nothing: ``system:anonymous`` in ``system:unauthenticated`` when anonymous requests are allowed
  (``--anonymous-auth``), else 401.

A bearer token that matches nothing is a 401 even when anonymous requests are allowed, as in kube.
Every authenticated user is also in ``system:authenticated`` (kube's AuthenticatedGroupAdder).
"""

from __future__ import annotations

import csv
import secrets
from pathlib import Path

from mockapi.auth.user import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo

ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(ALL_UNAUTHENTICATED,))


class Unauthorized(Exception):
    """Credentials were given and are wrong (or none were, and anonymous requests are refused)."""


class TokenFileError(ValueError):
    pass


class TokenTable:
    """Bearer tokens → users: the static token file, and tokens minted at run time."""

    def __init__(self) -> None:
        self._users: dict[str, UserInfo] = {}

    def __len__(self) -> int:
        return len(self._users)

    def get(self, token: str) -> UserInfo | None:
        return self._users.get(token)

    def add(self, token: str, user: UserInfo) -> None:
        self._users[token] = user

    def mint(self, name: str, *, groups: tuple[str, ...] | list[str] = (), uid: str = "") -> str:
        """A new random token for ``name`` (in ``groups``), valid until the server stops."""
        if not name:
            raise ValueError("a user needs a name")
        token = secrets.token_urlsafe(32)
        self._users[token] = UserInfo(name, uid=uid, groups=tuple(groups))
        return token

    def load(self, path: Path) -> int:
        """Read kube-apiserver's token file format; returns how many tokens it holds."""
        with open(path, newline="") as handle:
            rows = [row for row in csv.reader(handle) if row and not (len(row) == 1 and not row[0].strip())]
        for line, row in enumerate(rows, 1):
            if row[0].lstrip().startswith("#"):
                continue
            if len(row) < 3:
                raise TokenFileError(f"token file '{path}' must have at least 3 columns (token, user name, user uid), found {len(row)}")
            token, name, uid = (value.strip() for value in row[:3])
            if not token or not name:
                raise TokenFileError(f"token file '{path}', record {line}: the token and the user name must not be empty")
            groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
            self.add(token, UserInfo(name, uid=uid, groups=groups))
        return len(rows)


class Authenticator:
    """The union of the configured authenticators, then anonymous (or not)."""

    def __init__(self, tokens: TokenTable, *, client_certificates: bool = False, anonymous: bool = False) -> None:
        self.tokens = tokens
        self.client_certificates = client_certificates
        self.anonymous = anonymous
        self._by_certificate: dict[bytes, UserInfo] = {}

    def authenticate(self, authorization: bytes | None, peer_certificate: bytes | None) -> UserInfo:
        """The user of a request from its ``Authorization`` header and its TLS peer certificate
        (DER, already verified by the handshake); raises :class:`Unauthorized`."""
        if peer_certificate is not None and self.client_certificates:
            return self._certificate_user(peer_certificate)
        token = bearer_token(authorization)
        if token:
            user = self.tokens.get(token)
            if user is None:
                raise Unauthorized("invalid bearer token")
            return with_authenticated_group(user)
        if self.anonymous:
            return ANONYMOUS_USER
        raise Unauthorized("no credentials")

    def _certificate_user(self, der: bytes) -> UserInfo:
        user = self._by_certificate.get(der)
        if user is None:
            user = self._by_certificate[der] = with_authenticated_group(certificate_user(der))
        return user


def bearer_token(authorization: bytes | None) -> str:
    """The token of ``Authorization: Bearer <token>`` (the scheme case-insensitive), or ""."""
    if not authorization:
        return ""
    scheme, _, token = authorization.decode("latin-1").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def certificate_user(der: bytes) -> UserInfo:
    """CN is the user name, each O a group (kube's CommonNameUserConversion)."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    subject = x509.load_der_x509_certificate(der).subject
    names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or not names[0].value:
        raise Unauthorized("the client certificate has no common name")
    groups = tuple(str(a.value) for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return UserInfo(str(names[0].value), groups=groups)


def with_authenticated_group(user: UserInfo) -> UserInfo:
    if ALL_AUTHENTICATED in user.groups or user.name == ANONYMOUS or ALL_UNAUTHENTICATED in user.groups:
        return user
    return UserInfo(user.name, uid=user.uid, groups=(*user.groups, ALL_AUTHENTICATED), extra=user.extra)


def service_account_user(namespace: str, name: str) -> UserInfo:
    """The user a ServiceAccount's token authenticates as (k8s.io/apiserver/pkg/authentication/serviceaccount)."""
    return UserInfo(
        f"system:serviceaccount:{namespace}:{name}",
        groups=("system:serviceaccounts", f"system:serviceaccounts:{namespace}", ALL_AUTHENTICATED),
    )
