"""Client certificates verified after the TLS handshake, as kube-apiserver does.

kube-apiserver asks for a client certificate without failing the handshake (Go's
``tls.RequestClientCert``) and verifies it in its x509 authenticator
(k8s.io/apiserver/pkg/authentication/request/x509): a certificate from another CA, an expired or a
tampered one gets kube's 401 and the log line ``"Unable to authenticate the request"
err="verifying certificate SN=..., SKID=..., AKID=... failed: x509: ..."`` — not a dropped
connection that clients report as EOF.

Python's ssl module has no verify callback, so :func:`defer_verification` installs one that
accepts every chain on the context's ``SSL_CTX`` through ctypes (OpenSSL's
``SSL_CTX_set_verify``, the callback returning 1), and :class:`ClientCAs` verifies the leaf as Go's
``x509.Certificate.Verify`` does with kube's options (roots: ``--client-ca-file``; key usage
clientAuth): validity period first, then a CA in the bundle whose subject is the leaf's issuer and
whose signature checks out (Go's candidate order: matching key identifiers first), then the
extended key usage along the chain. Go's messages, word for word. What Go does and this does not:
intermediates the client sends are not used (Python 3.11's ssl cannot hand them over: put
intermediates in the CA file, which Go also accepts), no name constraints.

Each certificate is checked once (a bounded cache by DER); its validity period is checked on
every request (:meth:`Presented.verify`), as kube verifies each request.
"""

from __future__ import annotations

import ctypes
import datetime
import logging
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("mockapi.auth")

UNKNOWN_AUTHORITY = "x509: certificate signed by unknown authority"
INCOMPATIBLE_USAGE = "x509: certificate specifies an incompatible key usage"
CACHE_SIZE = 1024


class CertificateError(Exception):
    """A client certificate kube would not accept (the message is Go's)."""


@dataclass(frozen=True)
class Presented:
    """A client certificate a connection presented, checked against the client CAs."""

    der: bytes
    identifier: str  # kube's certificateIdentifier: "SN=..., SKID=..., AKID=..."
    not_before: datetime.datetime
    not_after: datetime.datetime
    error: str = ""  # why the chain is refused ("" when a CA signed it for client auth)

    def verify(self, now: datetime.datetime | None = None) -> bytes:
        """The DER if the certificate authenticates now; else :class:`CertificateError` with
        kube's message (``verifying certificate ... failed: x509: ...``)."""
        now = now or datetime.datetime.now(datetime.timezone.utc)
        problem = _validity_error(now, self.not_before, self.not_after) or self.error
        if problem:
            raise CertificateError(f"verifying certificate {self.identifier} failed: {problem}")
        return self.der


class ClientCAs:
    """The certificates of ``--client-ca-file``: each one a root, as Go's ``ClientCAs`` pool."""

    def __init__(self, pem: bytes) -> None:
        from cryptography import x509

        self.roots = x509.load_pem_x509_certificates(pem)
        self._by_subject: dict[bytes, list] = {}
        for root in self.roots:
            self._by_subject.setdefault(root.subject.public_bytes(), []).append(root)
        self._raw = {root.public_bytes(_der()) for root in self.roots}
        self._checked: dict[bytes, Presented] = {}

    @classmethod
    def load(cls, path: Path) -> "ClientCAs":
        return cls(Path(path).read_bytes())

    def check(self, der: bytes) -> Presented:
        """What the certificate ``der`` is worth (cached: the chain does not change, the clock does)."""
        presented = self._checked.get(der)
        if presented is None:
            if len(self._checked) >= CACHE_SIZE:
                self._checked.clear()
            presented = self._checked[der] = self._check(der)
        return presented

    def _check(self, der: bytes) -> Presented:
        from cryptography import x509

        try:
            leaf = x509.load_der_x509_certificate(der)
        except ValueError as exc:
            return Presented(der, "SN=0, SKID=, AKID=", _EVER[0], _EVER[1], f"x509: malformed certificate: {exc}")
        return Presented(der, identifier(leaf), *_validity(leaf), self._chain_error(leaf, der))

    def _chain_error(self, leaf, der: bytes) -> str:
        if _unhandled_critical(leaf):
            return "x509: unhandled critical extension"
        if der in self._raw:
            return "" if _fits_client_auth(leaf) else INCOMPATIBLE_USAGE
        hint = ""
        now = datetime.datetime.now(datetime.timezone.utc)
        for candidate in self._candidates(leaf):
            problem = _validity_error(now, *_validity(candidate)) or _signature_error(leaf, candidate)
            if not problem:
                return "" if _fits_client_auth(leaf) and _fits_client_auth(candidate) else INCOMPATIBLE_USAGE
            if not hint:
                hint = f' (possibly because of {_go_quote(problem)} while trying to verify candidate authority certificate {_go_quote(_certificate_name(candidate))})'
        return UNKNOWN_AUTHORITY + hint

    def _candidates(self, leaf) -> list:
        """The roots whose subject is the leaf's issuer; matching key identifiers first (Go's order)."""
        found = self._by_subject.get(leaf.issuer.public_bytes(), [])
        authority = _authority_key_id(leaf)
        return sorted(found, key=lambda root: 0 if authority and _subject_key_id(root) == authority else 1)


def identifier(cert) -> str:
    """kube's ``certificateIdentifier``: the serial number, SKID and AKID (hex, colon-separated)."""
    return f"SN={cert.serial_number}, SKID={_hex(_subject_key_id(cert))}, AKID={_hex(_authority_key_id(cert))}"


# ------------------------------------------------------------------ Go's checks
def _validity_error(now: datetime.datetime, not_before: datetime.datetime, not_after: datetime.datetime) -> str:
    if now < not_before:
        return f"x509: certificate has expired or is not yet valid: current time {_rfc3339(now)} is before {_rfc3339(not_before)}"
    if now > not_after:
        return f"x509: certificate has expired or is not yet valid: current time {_rfc3339(now)} is after {_rfc3339(not_after)}"
    return ""


_EVER = (datetime.datetime.min.replace(tzinfo=datetime.timezone.utc), datetime.datetime.max.replace(tzinfo=datetime.timezone.utc))


def _validity(cert) -> tuple[datetime.datetime, datetime.datetime]:
    """notBefore and notAfter, aware (cryptography < 42 has only the naive UTC ones)."""
    if hasattr(cert, "not_valid_before_utc"):
        return cert.not_valid_before_utc, cert.not_valid_after_utc
    return cert.not_valid_before.replace(tzinfo=datetime.timezone.utc), cert.not_valid_after.replace(tzinfo=datetime.timezone.utc)


def _signature_error(cert, parent) -> str:
    """Go's ``CheckSignatureFrom``: the parent must be a CA allowed to sign certificates, and the signature must check out."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    constraints = _extension(parent, x509.BasicConstraints)
    usage = _extension(parent, x509.KeyUsage)
    if (constraints is None and parent.version == x509.Version.v3) or (constraints is not None and not constraints.ca) or (usage is not None and not usage.key_cert_sign):
        return "x509: invalid signature: parent certificate cannot sign this kind of certificate"
    try:
        cert.verify_directly_issued_by(parent)
    except InvalidSignature:
        key = parent.public_key()
        if isinstance(key, rsa.RSAPublicKey):
            return "crypto/rsa: verification error"
        if isinstance(key, ec.EllipticCurvePublicKey):
            return "x509: ECDSA verification failure"
        if isinstance(key, ed25519.Ed25519PublicKey):
            return "x509: Ed25519 verification failure"
        return "x509: signature verification failure"
    except (ValueError, TypeError) as exc:
        return f"x509: cannot verify signature: {exc}"
    return ""


def _fits_client_auth(cert) -> bool:
    """Go's ``checkChainForKeyUsage`` for clientAuth: no EKU, anyExtendedKeyUsage or clientAuth."""
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    usages = _extension(cert, x509.ExtendedKeyUsage)
    return usages is None or ExtendedKeyUsageOID.CLIENT_AUTH in usages or ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE in usages


_HANDLED = {
    "2.5.29.15", "2.5.29.19", "2.5.29.17", "2.5.29.30", "2.5.29.32", "2.5.29.37", "2.5.29.35", "2.5.29.14",
    "2.5.29.31", "2.5.29.33", "2.5.29.36", "2.5.29.54", "1.3.6.1.5.5.7.1.1",
}  # fmt: skip  # key usage, basic constraints, SAN, name constraints, policies, EKU, AKI, SKI, CRL points, policy mappings/constraints, inhibit any, AIA


def _unhandled_critical(cert) -> bool:
    return any(ext.critical and ext.oid.dotted_string not in _HANDLED for ext in cert.extensions)


def _extension(cert, kind):
    from cryptography import x509

    try:
        return cert.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def _subject_key_id(cert) -> bytes:
    from cryptography import x509

    found = _extension(cert, x509.SubjectKeyIdentifier)
    return found.digest if found is not None else b""


def _authority_key_id(cert) -> bytes:
    from cryptography import x509

    found = _extension(cert, x509.AuthorityKeyIdentifier)
    return (found.key_identifier or b"") if found is not None else b""


def _certificate_name(cert) -> str:
    """How Go names a candidate CA in its hint: CN, else the first O, else the serial number."""
    from cryptography.x509.oid import NameOID

    for oid in (NameOID.COMMON_NAME, NameOID.ORGANIZATION_NAME):
        values = cert.subject.get_attributes_for_oid(oid)
        if values and values[0].value:
            return str(values[0].value)
    return f"serial:{cert.serial_number}"


def _hex(data: bytes) -> str:
    return ":".join(f"{b:02X}" for b in data)


def _rfc3339(at: datetime.datetime) -> str:
    return at.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _der():
    from cryptography.hazmat.primitives.serialization import Encoding

    return Encoding.DER


# ------------------------------------------------------------------ deferring the handshake's check
_VERIFY_CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)


@_VERIFY_CALLBACK_TYPE
def _accept_any_chain(preverified: int, store_context) -> int:  # pragma: no cover - called by OpenSSL
    return 1


def _libssl():
    """The libssl the ``_ssl`` module uses (its symbols, looked up through its own handle)."""
    import _ssl

    library = ctypes.CDLL(getattr(_ssl, "__file__", None))
    library.SSL_CTX_set_verify.argtypes = [ctypes.c_void_p, ctypes.c_int, _VERIFY_CALLBACK_TYPE]
    library.SSL_CTX_set_verify.restype = None
    library.SSL_CTX_get_verify_mode.argtypes = [ctypes.c_void_p]
    library.SSL_CTX_get_verify_mode.restype = ctypes.c_int
    library.SSL_CTX_get_options.argtypes = [ctypes.c_void_p]
    library.SSL_CTX_get_options.restype = ctypes.c_uint64
    return library


def _ssl_ctx(context: ssl.SSLContext) -> int:
    """The ``SSL_CTX *`` of a CPython SSLContext: its first field after the object header."""
    return ctypes.c_void_p.from_address(id(context) + object.__basicsize__).value or 0


def defer_verification(context: ssl.SSLContext) -> bool:
    """Let ``context`` (a server context asking for client certificates) accept any certificate
    at the handshake, so the authenticator can refuse it with a 401. False (nothing changed) where
    this CPython's layout or libssl is not the expected one."""
    if sys.implementation.name != "cpython":
        return False
    try:
        library = _libssl()
        pointer = _ssl_ctx(context)
        if not pointer or library.SSL_CTX_get_options(pointer) != int(context.options) or library.SSL_CTX_get_verify_mode(pointer) != _openssl_mode(context.verify_mode):
            return False
        library.SSL_CTX_set_verify(pointer, library.SSL_CTX_get_verify_mode(pointer), _accept_any_chain)
    except (OSError, AttributeError, ValueError) as exc:  # pragma: no cover - another libssl
        log.warning("client certificates are verified at the TLS handshake (cannot defer: %s)", exc)
        return False
    return True


def _openssl_mode(mode: ssl.VerifyMode) -> int:
    return {ssl.CERT_NONE: 0, ssl.CERT_OPTIONAL: 1, ssl.CERT_REQUIRED: 3}[mode]


def can_defer() -> bool:
    """Whether :func:`defer_verification` works here (tried on a throwaway context)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.verify_mode = ssl.CERT_OPTIONAL
    return defer_verification(context)
