"""Client certificates verified after the handshake (mockapi.auth.clientcerts): Go's checks and
Go's messages, as kube-apiserver's x509 authenticator writes them."""

from __future__ import annotations

import datetime
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from mockapi.auth import authn, clientcerts, tls
from mockapi.auth.clientcerts import ClientCAs

NOW = datetime.datetime.now(datetime.timezone.utc)


def name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "no-cn")])


def certificate(subject: str, key, issuer: str, signer, *, ca=False, usages=(ExtendedKeyUsageOID.CLIENT_AUTH,), not_after=None, extra=()):
    builder = (
        x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer)).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(NOW - datetime.timedelta(hours=1))
        .not_valid_after(not_after or NOW + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )  # fmt: skip
    if ca:
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    if usages:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(usages)), critical=False)
    for extension, critical in extra:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signer, hashes.SHA256())


def der(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def pem(*certs) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


@pytest.fixture(scope="module")
def pki():
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate("ca", ca_key, "ca", ca_key, ca=True, usages=())
    return ca_key, ca, ClientCAs(pem(ca))


def refusal(cas: ClientCAs, cert) -> str:
    with pytest.raises(clientcerts.CertificateError) as refused:
        cas.check(der(cert)).verify()
    return str(refused.value)


def test_a_certificate_the_ca_signed_for_client_auth_passes(pki):
    ca_key, _, cas = pki
    key = ec.generate_private_key(ec.SECP256R1())
    alice = der(certificate("alice", key, "ca", ca_key))
    assert cas.check(alice).verify() == alice
    assert cas.check(alice) is cas.check(alice)  # checked once
    assert cas.check(der(certificate("carol", key, "ca", ca_key, usages=()))).error == ""  # no EKU: any usage (Go)
    assert cas.check(der(certificate("dave", key, "ca", ca_key, usages=(ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,)))).error == ""


def test_another_ca_is_an_unknown_authority_with_go_s_hint_when_it_has_the_same_name(pki):
    _, _, cas = pki
    stranger = ec.generate_private_key(ec.SECP256R1())
    key = ec.generate_private_key(ec.SECP256R1())
    assert refusal(cas, certificate("eve", key, "elsewhere", stranger)).endswith("failed: x509: certificate signed by unknown authority")
    assert refusal(cas, certificate("eve", key, "ca", stranger)).endswith(
        'failed: x509: certificate signed by unknown authority (possibly because of "x509: ECDSA verification failure" while trying to verify candidate authority certificate "ca")'
    )


def test_an_rsa_ca_names_go_s_rsa_error():
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = certificate("rsa-ca", ca_key, "rsa-ca", ca_key, ca=True, usages=())
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    message = refusal(ClientCAs(pem(ca)), certificate("eve", other, "rsa-ca", other))
    assert message.endswith('(possibly because of "crypto/rsa: verification error" while trying to verify candidate authority certificate "rsa-ca")')


def test_expired_and_not_yet_valid_say_go_s_times(pki):
    ca_key, _, cas = pki
    key = ec.generate_private_key(ec.SECP256R1())
    yesterday = (NOW - datetime.timedelta(minutes=30)).replace(microsecond=0)
    message = refusal(cas, certificate("old", key, "ca", ca_key, not_after=yesterday))
    assert "x509: certificate has expired or is not yet valid: current time " in message and message.endswith(f"is after {yesterday.strftime('%Y-%m-%dT%H:%M:%SZ')}")
    presented = cas.check(der(certificate("later", key, "ca", ca_key)))
    with pytest.raises(clientcerts.CertificateError, match=r"current time \S+Z is before "):
        presented.verify(NOW - datetime.timedelta(days=2))  # checked at each request: the clock moves, the cache does not


def test_a_tampered_signature_and_the_wrong_key_usage_are_refused(pki):
    ca_key, _, cas = pki
    key = ec.generate_private_key(ec.SECP256R1())
    tampered = bytearray(der(certificate("mallory", key, "ca", ca_key)))
    tampered[-5] ^= 0xFF
    presented = cas.check(bytes(tampered))
    assert "x509: certificate signed by unknown authority (possibly because of" in presented.error
    assert refusal(cas, certificate("web", key, "ca", ca_key, usages=(ExtendedKeyUsageOID.SERVER_AUTH,))).endswith("failed: x509: certificate specifies an incompatible key usage")


def test_a_leaf_cannot_sign_and_unknown_critical_extensions_are_refused(pki):
    ca_key, _, cas = pki
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = certificate("leaf", leaf_key, "ca", ca_key)
    by_leaf = ClientCAs(pem(leaf))
    assert by_leaf.check(der(certificate("sub", leaf_key, "leaf", leaf_key))).error.endswith(
        '(possibly because of "x509: invalid signature: parent certificate cannot sign this kind of certificate" while trying to verify candidate authority certificate "leaf")'
    )
    odd = x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.3.4"), b"\x05\x00")
    assert refusal(cas, certificate("odd", leaf_key, "ca", ca_key, extra=[(odd, True)])).endswith("failed: x509: unhandled critical extension")


def test_the_identifier_is_kube_s(pki):
    _, ca, _ = pki
    skid = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    assert clientcerts.identifier(ca) == f"SN={ca.serial_number}, SKID={':'.join(f'{b:02X}' for b in skid)}, AKID="


def test_garbage_is_refused_not_raised(pki):
    _, _, cas = pki
    assert cas.check(b"\x30\x03junk").error.startswith("x509: malformed certificate")


def test_the_authenticator_unions_certificate_and_token_as_kube(pki, tmp_path):
    ca_key, _, cas = pki
    tokens = authn.TokenTable()
    token = tokens.mint("tina")
    auth = authn.Authenticator(tokens, client_certificates=True, anonymous=True)
    key = ec.generate_private_key(ec.SECP256R1())
    good = cas.check(der(certificate("alice", key, "ca", ca_key)))
    bad = cas.check(der(certificate("eve", key, "ca", ec.generate_private_key(ec.SECP256R1()))))
    assert auth.authenticate(None, good).name == "alice"
    assert auth.authenticate(f"Bearer {token}".encode(), bad).name == "tina"
    with pytest.raises(authn.Unauthorized, match=r"^verifying certificate .* failed: x509: certificate signed by unknown authority"):
        auth.authenticate(None, bad)  # not anonymous: kube's fail-on-error union
    with pytest.raises(authn.Unauthorized, match=r"^\[verifying certificate .*, invalid bearer token\]$"):
        auth.authenticate(b"Bearer wrong", bad)
    nameless = cas.check(der(certificate("", key, "ca", ca_key)))
    assert auth.authenticate(None, nameless).name == "system:anonymous"  # no CN: no user, no error (kube)


def test_the_handshake_accepts_any_certificate_once_deferred(tmp_path):
    generated = tls.generate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(generated.cert, generated.key)
    context.verify_mode = ssl.CERT_OPTIONAL
    context.load_verify_locations(generated.ca)
    assert clientcerts.defer_verification(context)
    assert context.verify_mode == ssl.CERT_OPTIONAL  # Python's view unchanged

    other = tls.generate(tmp_path / "other")
    client = ssl.create_default_context(cafile=str(generated.ca))
    client.load_cert_chain(other.admin_cert, other.admin_key)
    server_in, server_out, client_in, client_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    server = context.wrap_bio(server_in, server_out, server_side=True)
    peer = client.wrap_bio(client_in, client_out, server_hostname="localhost")
    for _ in range(10):
        for side in (peer, server):
            try:
                side.do_handshake()
            except ssl.SSLWantReadError:
                pass
        server_in.write(client_out.read())
        client_in.write(server_out.read())
    assert server.getpeercert(binary_form=True) == ssl.PEM_cert_to_DER_cert(other.admin_cert.read_text())


def test_uvicorn_is_told_to_defer_or_to_verify_at_the_handshake(monkeypatch, tmp_path):
    generated = tls.generate(tmp_path)
    files = dict(cert_file=generated.cert, key_file=generated.key, client_ca_file=generated.ca)
    monkeypatch.setattr(tls, "_DEFERRING", None)
    assert tls.deferring()  # uvicorn >= 0.47 and CPython's ssl here
    deferred = tls.uvicorn_options(**files)
    assert deferred["ssl_cert_reqs"] == ssl.CERT_OPTIONAL and deferred["ssl_context_factory"] is tls._deferring_context
    assert deferred["wrap_protocol"].keywords["verifier"].roots[0].subject.rfc4514_string() == "CN=mockapi-ca"
    monkeypatch.setattr(tls, "_DEFERRING", False)  # the fallback: the handshake verifies, as before
    at_handshake = tls.uvicorn_options(**files)
    assert "ssl_context_factory" not in at_handshake and at_handshake["wrap_protocol"] is tls.tls_protocol
    assert "ssl_context_factory" not in tls.uvicorn_options(cert_file=generated.cert, key_file=generated.key, client_ca_file=None)
