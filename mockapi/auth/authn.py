"""Authentication: who a request comes from (k8s.io/apiserver's ``WithAuthentication`` and the
authenticators it unions).

Three ways in, tried in kube-apiserver's order:

- a client certificate signed by ``--client-ca-file`` (CN is the user name, each O a group;
  k8s.io/apiserver/pkg/authentication/request/x509), verified after the handshake
  (:mod:`mockapi.auth.clientcerts`) — one that fails is an error, but as kube's union of
  authenticators a valid bearer token on the same request still authenticates it;
- a bearer token (``Authorization: Bearer ...``) from the static token file
  (``--token-auth-file``, CSV ``token,user,uid,"group1,group2"``) or from the tokens this server
  minted for tests (:meth:`TokenTable.mint`, over ``POST /mockapi/v1/users``). Minted tokens are
  random strings kept in memory, not JWTs: nothing outside this process needs to verify them;
- nothing: ``system:anonymous`` in ``system:unauthenticated`` when anonymous requests are allowed
  (``--anonymous-auth``), else 401.

A bearer token that matches nothing, or a client certificate that fails, is a 401 even when
anonymous requests are allowed, as in kube (its anonymous authenticator is behind a fail-on-error
union); the 401's reason is logged as kube logs it (``"Unable to authenticate the request"
err="invalid bearer token"``). Without credentials there is nothing to log.
Every authenticated user is also in ``system:authenticated`` (kube's AuthenticatedGroupAdder).

Cost: a request with a token it has seen before is one dict lookup on the raw ``Authorization``
header, which gives the same :class:`UserInfo` (groups tuple and all) every time. The cache holds
only successes, is bounded, and is dropped whenever the token table changes (a token file loaded, a
token added or minted: :attr:`TokenTable.version`), so a new or re-assigned token is seen at once.
"""

from __future__ import annotations

import csv
import secrets
from pathlib import Path

from mockapi.auth.clientcerts import CertificateError
from mockapi.auth.user import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo

ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(ALL_UNAUTHENTICATED,))
_HEADER_CACHE_LIMIT = 1024


class Unauthorized(Exception):
    """Credentials were given and are wrong (the message says why, as kube logs it), or none
    were and anonymous requests are refused (no message)."""


class TokenFileError(ValueError):
    pass


class TokenTable:
    """Bearer tokens → users: the static token file, and tokens minted at run time."""

    def __init__(self) -> None:
        self._users: dict[str, UserInfo] = {}
        self.version = 0  # bumped by every change: the authenticator's per-header cache is dropped then

    def __len__(self) -> int:
        return len(self._users)

    def get(self, token: str) -> UserInfo | None:
        return self._users.get(token)

    def add(self, token: str, user: UserInfo) -> None:
        self._users[token] = user
        self.version += 1

    def mint(self, name: str, *, groups: tuple[str, ...] | list[str] = (), uid: str = "") -> str:
        """A new random token for ``name`` (in ``groups``), valid until the server stops."""
        if not name:
            raise ValueError("a user needs a name")
        token = secrets.token_urlsafe(32)
        self.add(token, UserInfo(name, uid=uid, groups=tuple(groups)))
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
        self._by_header: dict[bytes, UserInfo] = {}  # raw Authorization header → its authenticated user
        self._version = tokens.version

    def authenticate(self, authorization: bytes | None, peer_certificate) -> UserInfo:
        """The user of a request from its ``Authorization`` header and its TLS peer certificate
        (DER the handshake verified, or a :class:`mockapi.auth.clientcerts.Presented` to verify);
        raises :class:`Unauthorized`. kube's order: the certificate, then the token; an error from
        one does not stop the next, and all of them are the 401's reason."""
        if authorization is not None and (peer_certificate is None or not self.client_certificates):
            return self._token_user(authorization)
        failures: list[str] = []
        if peer_certificate is not None and self.client_certificates:
            try:
                user = self._certificate_user(peer_certificate)
            except CertificateError as exc:
                failures.append(str(exc))
            else:
                if user is not None:
                    return user
        token = bearer_token(authorization)
        if token:
            user = self.tokens.get(token)
            if user is not None:
                return with_authenticated_group(user)
            failures.append("invalid bearer token")
        if failures:
            raise Unauthorized(failures[0] if len(failures) == 1 else f"[{', '.join(failures)}]")
        if self.anonymous:
            return ANONYMOUS_USER
        raise Unauthorized()

    def _token_user(self, authorization: bytes) -> UserInfo:
        """A request with an ``Authorization`` header and no certificate to try: its user from the
        cache, else as :meth:`authenticate` finds it (and cached when found)."""
        if self._version != self.tokens.version:
            self._by_header.clear()
            self._version = self.tokens.version
        user = self._by_header.get(authorization)
        if user is None:
            token = bearer_token(authorization)
            if token:
                found = self.tokens.get(token)
                if found is None:
                    raise Unauthorized("invalid bearer token")
                if len(self._by_header) >= _HEADER_CACHE_LIMIT:
                    self._by_header.clear()
                user = self._by_header[authorization] = with_authenticated_group(found)
            elif self.anonymous:
                return ANONYMOUS_USER
            else:
                raise Unauthorized()
        return user

    def _certificate_user(self, peer) -> UserInfo | None:
        der = peer if isinstance(peer, bytes) else peer.verify()
        user = self._by_certificate.get(der)
        if user is None:
            found = certificate_user(der)
            if found is None:
                return None  # no common name: not a user (kube's CommonNameUserConversion), not an error
            if len(self._by_certificate) >= 1024:
                self._by_certificate.clear()
            user = self._by_certificate[der] = with_authenticated_group(found)
        return user


def bearer_token(authorization: bytes | None) -> str:
    """The token of ``Authorization: Bearer <token>`` (the scheme case-insensitive), or ""."""
    if not authorization:
        return ""
    scheme, _, token = authorization.decode("latin-1").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def certificate_user(der: bytes) -> UserInfo | None:
    """CN is the user name, each O a group (kube's CommonNameUserConversion); None without a CN."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    subject = x509.load_der_x509_certificate(der).subject
    names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or not names[0].value:
        return None
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
