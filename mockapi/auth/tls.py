"""TLS: serving over HTTPS, client certificates, and generated certificates for tests and demos.

- :func:`generate` writes a CA, a serving certificate for localhost, 127.0.0.1, ::1 and the host
  name (and the listen address), and an admin client certificate (CN ``mockapi-admin``, O
  ``system:masters``) signed by that CA — what ``mockapi serve --generate-certs DIR`` uses.
- :func:`uvicorn_options` turns settings into uvicorn's ssl options. With a client CA, the server
  asks for a client certificate (``ssl.CERT_OPTIONAL``) and, as kube-apiserver (Go's
  ``tls.RequestClientCert``), does not fail the handshake over it: the certificate is verified
  after it (:mod:`mockapi.auth.clientcerts`), so one the CA did not sign, a tampered or an expired
  one gets kube's 401 and log line. Where that cannot be arranged (uvicorn < 0.47 has no
  ``ssl_context_factory``; a Python whose ssl module is not laid out as CPython's), the handshake
  verifies as before and refuses with a TLS alert.
- :func:`tls_protocol` puts the peer certificate in each request's ASGI scope (uvicorn does not):
  the ``ssl_object`` is on the transport; checked once per connection.
"""

from __future__ import annotations

import base64
import datetime
import functools
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from mockapi.auth import clientcerts

ADMIN_USER = "mockapi-admin"
ADMIN_GROUPS = ("system:masters",)
VALIDITY = datetime.timedelta(days=365)


@dataclass(frozen=True)
class Generated:
    directory: Path
    ca: Path
    cert: Path
    key: Path
    admin_cert: Path
    admin_key: Path


def generate(directory: Path, *, hosts: tuple[str, ...] = ()) -> Generated:
    """Write ca.crt, ca.key, server.crt, server.key, admin.crt and admin.key into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = _key()
    ca = _certificate("mockapi-ca", (), ca_key.public_key(), ca_key, None, ca=True)
    server_key = _key()
    names = ("localhost", "127.0.0.1", "::1", socket.gethostname(), *hosts)
    server = _certificate("mockapi", (), server_key.public_key(), ca_key, ca, sans=tuple(dict.fromkeys(n for n in names if n and n not in ("0.0.0.0", "::"))))
    admin_key = _key()
    admin = _certificate(ADMIN_USER, ADMIN_GROUPS, admin_key.public_key(), ca_key, ca, client=True)
    paths = Generated(directory, directory / "ca.crt", directory / "server.crt", directory / "server.key", directory / "admin.crt", directory / "admin.key")
    _write(paths.ca, _pem(ca))
    _write(directory / "ca.key", _key_pem(ca_key), private=True)
    _write(paths.cert, _pem(server))
    _write(paths.key, _key_pem(server_key), private=True)
    _write(paths.admin_cert, _pem(admin))
    _write(paths.admin_key, _key_pem(admin_key), private=True)
    return paths


def client_certificate(directory: Path, name: str, groups: tuple[str, ...] = (), *, not_after: datetime.datetime | None = None) -> tuple[Path, Path]:
    """A client certificate for ``name`` in ``groups``, signed by the CA ``generate`` wrote there."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    directory = Path(directory)
    ca = x509.load_pem_x509_certificate((directory / "ca.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((directory / "ca.key").read_bytes(), password=None)
    key = _key()
    cert = _certificate(name, tuple(groups), key.public_key(), ca_key, ca, client=True, not_after=not_after)
    stem = name.replace(":", "_").replace("/", "_")
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    _write(cert_path, _pem(cert))
    _write(key_path, _key_pem(key), private=True)
    return cert_path, key_path


def kubeconfig(server: str, *, ca: bytes | None = None, token: str | None = None, cert: bytes | None = None, key: bytes | None = None, user: str = "mockapi") -> dict:
    """A kubeconfig (as a dict) for ``server``, trusting ``ca`` (PEM), with a token or a client certificate."""
    cluster: dict = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
    credentials: dict = {}
    if token is not None:
        credentials["token"] = token
    if cert is not None and key is not None:
        credentials["client-certificate-data"] = base64.b64encode(cert).decode()
        credentials["client-key-data"] = base64.b64encode(key).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mockapi", "cluster": cluster}],
        "contexts": [{"name": "mockapi", "context": {"cluster": "mockapi", "user": user, "namespace": "default"}}],
        "current-context": "mockapi",
        "users": [{"name": user, "user": credentials}],
    }


def prepare(settings) -> dict:
    """uvicorn's ssl options for :class:`mockapi.settings.Settings` (bound to its port): with
    ``generate_certs``, the certificates and ``DIR/kubeconfig`` (the admin's client certificate)
    are written first. Raises ValueError or OSError for what a person must fix."""
    client_ca = settings.client_ca_file
    if settings.generate_certs is not None:
        generated = generate(settings.generate_certs, hosts=(settings.host,))
        settings.tls_cert_file, settings.tls_private_key_file = generated.cert, generated.key
        client_ca = client_ca or generated.ca
        config = kubeconfig(server_url(settings), ca=generated.ca.read_bytes(), cert=generated.admin_cert.read_bytes(), key=generated.admin_key.read_bytes())
        import yaml

        (Path(settings.generate_certs) / "kubeconfig").write_text(yaml.safe_dump(config, sort_keys=False))
    elif settings.tls_cert_file is None and (settings.tls_private_key_file is not None):
        raise ValueError("--tls-private-key-file needs --tls-cert-file")
    check_files(settings.tls_cert_file, settings.tls_private_key_file, client_ca)
    return uvicorn_options(cert_file=settings.tls_cert_file, key_file=settings.tls_private_key_file, client_ca_file=client_ca)


def server_url(settings) -> str:
    """How a client on this machine reaches the server."""
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    host = f"[{host}]" if ":" in host else host
    scheme = "https" if settings.tls_cert_file or settings.generate_certs else "http"
    return f"{scheme}://{host}:{settings.port}"


def uvicorn_options(*, cert_file: Path | None, key_file: Path | None, client_ca_file: Path | None) -> dict:
    """uvicorn.Config keyword arguments for HTTPS (empty without a certificate)."""
    if cert_file is None:
        return {}
    options: dict = {"ssl_certfile": str(cert_file), "ssl_keyfile": str(key_file) if key_file else None, "wrap_protocol": tls_protocol}
    if client_ca_file is not None:
        options.update(ssl_ca_certs=str(client_ca_file), ssl_cert_reqs=ssl.CERT_OPTIONAL)
        if deferring():
            verifier = clientcerts.ClientCAs.load(client_ca_file)
            options.update(ssl_context_factory=_deferring_context, wrap_protocol=functools.partial(tls_protocol, verifier=verifier))
    return options


def deferring() -> bool:
    """Whether client certificates are verified after the handshake (kube's way) here."""
    global _DEFERRING
    if _DEFERRING is None:
        import inspect

        import uvicorn

        _DEFERRING = "ssl_context_factory" in inspect.signature(uvicorn.Config).parameters and clientcerts.can_defer()
    return _DEFERRING


_DEFERRING: bool | None = None


def _deferring_context(config, default) -> ssl.SSLContext:
    """uvicorn's ``ssl_context_factory``: its context, with the handshake accepting any client certificate."""
    context = default()
    if not clientcerts.defer_verification(context):  # pragma: no cover - can_defer() said it would
        raise RuntimeError("cannot defer the verification of client certificates")
    return context


def check_files(*paths: Path | None) -> None:
    """Refuse before start-up a certificate or key that cannot be read (one line, not a traceback)."""
    for path in paths:
        if path is not None and not Path(path).is_file():
            raise FileNotFoundError(2, "No such file or directory", str(path))


def tls_protocol(base=None, *, verifier: clientcerts.ClientCAs | None = None):
    """uvicorn's HTTP protocol for TLS connections, derived from ``base`` (a uvicorn protocol class,
    e.g. the connection guard's; uvicorn's auto choice without): each connection's client
    certificate goes in the scope (uvicorn does not put it there) — the DER the handshake verified,
    or with ``verifier`` (the handshake accepted any) what :meth:`ClientCAs.check` made of it —
    and an idle connection is dropped at shutdown
    rather than closed (a TLS close waits for the client's close_notify, which a client holding a
    kept-alive connection in its pool never sends: the server would not stop)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from mockapi.auth.chain import PEER_CERTIFICATE

    if base is None or isinstance(base, str):
        base = AutoHTTPProtocol

    class TLSProtocol(base):  # type: ignore[misc, valid-type]
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            ssl_object = transport.get_extra_info("ssl_object")
            der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
            if der:
                app = self.app
                peer = verifier.check(der) if verifier is not None else der

                async def with_certificate(scope, receive, send):
                    scope[PEER_CERTIFICATE] = peer
                    await app(scope, receive, send)

                self.app = with_certificate

        def shutdown(self) -> None:
            if self.cycle is None or self.cycle.response_complete:
                self.transport.abort()
            else:
                super().shutdown()

    return TLSProtocol


# ------------------------------------------------------------------ certificates
def _key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _certificate(common_name: str, organizations: tuple[str, ...], public_key, signing_key, issuer, *, ca: bool = False, client: bool = False, sans: tuple[str, ...] = (), not_after=None):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations), x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    not_after = not_after or now + VALIDITY
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer.subject if issuer is not None else subject)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(min(now - datetime.timedelta(minutes=5), not_after - datetime.timedelta(minutes=1)))
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    else:
        builder = builder.add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signing_key.public_key()), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName([_san(name) for name in sans]), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def _san(name: str):
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _pem(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _write(path: Path, data: bytes, *, private: bool = False) -> None:
    path.write_bytes(data)
    if private:
        path.chmod(0o600)
