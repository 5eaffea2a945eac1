"""TLS: `mockapi serve --generate-certs DIR` (a CA, a serving certificate, an admin client certificate
and DIR/kubeconfig), client certificates as credentials, and clear refusals for a wrong CA, an
expired certificate and a certificate the CA did not sign — never access: kube's 401 after the
handshake, and kube's log line saying why."""

from __future__ import annotations

import datetime
import json
import re
import shutil
import ssl
import subprocess
import sys

import pytest
import urllib3
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from mockapi.auth import tls

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server from the command line, one flag for TLS, authentication on: (url, certificate directory)."""
    directory = tmp_path_factory.mktemp("certs")
    with open(directory / "server.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", "--generate-certs", str(directory), "--authentication"],
            stdout=subprocess.PIPE, stderr=log, text=True,
        )  # fmt: skip
    try:
        line = process.stdout.readline()
        assert "serving on https://" in line, (line, process.poll())
        yield line.split("serving on ", 1)[1].split()[0], directory
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()


def logged(directory) -> str:
    return (directory / "server.log").read_text()


def kubectl(*args, kubeconfig=None, directory=None):
    binary = shutil.which("kubectl")
    assert binary, "kubectl must be on PATH"
    base = [binary, "--kubeconfig", str(kubeconfig)] if kubeconfig else [binary]
    return subprocess.run([*base, "--cache-dir", str(directory / "kubectl-cache"), *args], capture_output=True, text=True, timeout=60)


def test_the_generated_kubeconfig_works_for_kubectl_with_the_admins_client_certificate(served):
    url, directory = served
    whoami = kubectl("auth", "whoami", "-o", "json", kubeconfig=directory / "kubeconfig", directory=directory)
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)["status"]["userInfo"] == {"username": "mockapi-admin", "groups": ["system:masters", "system:authenticated"]}
    assert kubectl("get", "namespaces", kubeconfig=directory / "kubeconfig", directory=directory).returncode == 0


def test_the_python_client_loads_the_generated_kubeconfig(served):
    _, directory = served
    with config.new_client_from_config(config_file=str(directory / "kubeconfig")) as api:
        names = [ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items]
    assert "kube-system" in names


def test_a_client_certificate_names_the_user_and_its_groups(served):
    url, directory = served
    cert, key = tls.client_certificate(directory, "erin", ("qa", "ops"))
    whoami = kubectl("auth", "whoami", "-o", "json", "--server", url, "--certificate-authority", str(directory / "ca.crt"),
                     "--client-certificate", str(cert), "--client-key", str(key), directory=directory)  # fmt: skip
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)["status"]["userInfo"] == {"username": "erin", "groups": ["qa", "ops", "system:authenticated"]}


def test_the_python_client_with_the_wrong_ca_fails_with_a_clear_ssl_error(served, tmp_path):
    url, directory = served
    other = tls.generate(tmp_path / "other")
    configuration = client.Configuration()
    configuration.host = url
    configuration.ssl_ca_cert = str(other.ca)
    configuration.retries = 0
    with client.ApiClient(configuration) as api:
        with pytest.raises(urllib3.exceptions.MaxRetryError) as failed:
            client.CoreV1Api(api).list_namespace()
    assert isinstance(failed.value.reason, urllib3.exceptions.SSLError)
    assert "certificate verify failed" in str(failed.value.reason)


def test_kubectl_with_the_wrong_ca_is_refused_by_kubectl(served, tmp_path):
    url, directory = served
    other = tls.generate(tmp_path / "other")
    refused = kubectl("get", "pods", "--server", url, "--certificate-authority", str(other.ca), "--token", "x", directory=directory)
    assert refused.returncode == 1
    assert "x509: certificate signed by unknown authority" in refused.stderr


def test_an_expired_client_certificate_is_kubes_401_and_log_line(served):
    url, directory = served
    yesterday = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
    cert, key = tls.client_certificate(directory, "old-admin", ("system:masters",), not_after=yesterday)
    assert_refused(url, directory, cert, key)
    expired = f"is after {yesterday.strftime('%Y-%m-%dT%H:%M:%SZ')}"
    assert re.search(r'ERROR mockapi.auth: "Unable to authenticate the request" err="verifying certificate SN=\d+, SKID=, AKID=[0-9A-F:]+ failed: '
                     r'x509: certificate has expired or is not yet valid: current time \S+Z ' + re.escape(expired), logged(directory)), logged(directory)  # fmt: skip


def test_a_client_certificate_from_another_ca_is_kubes_401(served, tmp_path):
    url, directory = served
    other = tls.generate(tmp_path / "other")
    cert, key = tls.client_certificate(other.directory, "intruder", ("system:masters",))
    assert_refused(url, directory, cert, key)
    # the other CA has our CA's name: Go names the candidate it tried (x509.UnknownAuthorityError)
    hint = r'x509: certificate signed by unknown authority \(possibly because of \\"x509: ECDSA verification failure\\" while trying to verify candidate authority certificate \\"mockapi-ca\\"\)'
    assert re.search(r'"Unable to authenticate the request" err="verifying certificate SN=\d+, SKID=, AKID=[0-9A-F:]+ failed: ' + hint + '"', logged(directory))


def test_a_tampered_client_certificate_is_kubes_401(served, tmp_path):
    url, directory = served
    cert, key = tls.client_certificate(directory, "mallory", ("system:masters",))
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    der = bytearray(x509.load_pem_x509_certificate(cert.read_bytes()).public_bytes(serialization.Encoding.DER))
    der[-5] ^= 0xFF  # in the signature
    tampered = tmp_path / "tampered.crt"
    tampered.write_text(ssl.DER_cert_to_PEM_cert(bytes(der)))
    assert_refused(url, directory, tampered, key)


def test_a_serving_certificate_is_no_client_certificate(served):
    url, directory = served
    assert_refused(url, directory, directory / "server.crt", directory / "server.key")
    assert "failed: x509: certificate specifies an incompatible key usage" in logged(directory)


def test_a_refused_certificate_with_a_valid_token_authenticates_by_the_token(served, tmp_path):
    """kube's union of authenticators: the certificate's error does not stop the token."""
    url, directory = served
    other = tls.generate(tmp_path / "other")
    cert, key = tls.client_certificate(other.directory, "intruder", ("system:masters",))
    admin = urllib3.PoolManager(ca_certs=str(directory / "ca.crt"), cert_file=str(directory / "admin.crt"), key_file=str(directory / "admin.key"), retries=False)
    token = json.loads(admin.request("POST", url + "/mockapi/v1/users", json={"name": "tina"}).data)["token"]
    http = urllib3.PoolManager(ca_certs=str(directory / "ca.crt"), cert_file=str(cert), key_file=str(key), retries=False)
    who = http.request("POST", url + "/apis/authentication.k8s.io/v1/selfsubjectreviews", json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, headers={"Authorization": f"Bearer {token}"})
    assert who.status == 201 and json.loads(who.data)["status"]["userInfo"]["username"] == "tina"
    both_bad = http.request("GET", url + "/api/v1/namespaces", headers={"Authorization": "Bearer wrong"})
    assert both_bad.status == 401
    assert re.search(r'err="\[verifying certificate SN=\d+, SKID=, AKID=[0-9A-F:]+ failed: x509: certificate signed by unknown authority .*, invalid bearer token\]"', logged(directory))


def test_an_invalid_bearer_token_is_logged_as_kube_logs_it(served):
    url, directory = served
    http = urllib3.PoolManager(ca_certs=str(directory / "ca.crt"), retries=False)
    assert http.request("GET", url + "/api/v1/pods", headers={"Authorization": "Bearer nope"}).status == 401
    assert 'ERROR mockapi.auth: "Unable to authenticate the request" err="invalid bearer token"' in logged(directory)


def test_no_credentials_over_tls_is_kubes_401(served):
    url, directory = served
    http = urllib3.PoolManager(ca_certs=str(directory / "ca.crt"), retries=False)
    response = http.request("GET", url + "/api/v1/namespaces/default/pods")
    assert response.status == 401
    assert json.loads(response.data) == UNAUTHORIZED
    assert http.request("GET", url + "/readyz").data == b"ok"


def test_the_in_process_fixture_serves_tls_and_kubectl_trusts_its_kubeconfig(tmp_path):
    from mockapi.testing import MockAPIServer

    with MockAPIServer(allocator=False, tls=True) as mockapi:
        assert mockapi.url.startswith("https://")
        listed = kubectl("get", "namespaces", "-o", "name", kubeconfig=mockapi.kubeconfig_path, directory=tmp_path)
        assert listed.returncode == 0 and "namespace/default" in listed.stdout
        with mockapi.api_client() as api:
            assert client.VersionApi(api).get_code().major == "1"
        with pytest.raises(ApiException):
            with mockapi.api_client() as api:
                client.CoreV1Api(api).read_namespace("nope")


def assert_alive(url, directory) -> None:
    admin = urllib3.PoolManager(ca_certs=str(directory / "ca.crt"), cert_file=str(directory / "admin.crt"), key_file=str(directory / "admin.key"), retries=False)
    assert admin.request("GET", url + "/api/v1/namespaces").status == 200


def assert_refused(url: str, directory, cert, key) -> None:
    """kube's answer to a client certificate it does not accept: the handshake succeeds (Go's
    RequestClientCert), the request is a 401 with kube's body — for the Python client, urllib3
    and kubectl alike — and the server carries on."""
    http = urllib3.PoolManager(ca_certs=str(directory / "ca.crt"), cert_file=str(cert), key_file=str(key), retries=False)
    for path in ("/api/v1/namespaces", "/version"):  # a certificate that fails is a 401 even where none is needed
        response = http.request("GET", url + path)
        assert response.status == 401, (path, response.status, response.data)
        assert json.loads(response.data) == UNAUTHORIZED
    configuration = client.Configuration()
    configuration.host, configuration.ssl_ca_cert, configuration.cert_file, configuration.key_file = url, str(directory / "ca.crt"), str(cert), str(key)
    with client.ApiClient(configuration) as api:
        with pytest.raises(ApiException) as refused:
            client.CoreV1Api(api).list_namespace()
    assert refused.value.status == 401 and json.loads(refused.value.body) == UNAUTHORIZED
    listed = kubectl("get", "namespaces", "--server", url, "--certificate-authority", str(directory / "ca.crt"),
                     "--client-certificate", str(cert), "--client-key", str(key), directory=directory)  # fmt: skip
    assert listed.returncode == 1
    # kubectl's words for a 401 ("(Unauthorized)", or "(the server has asked for the client to provide credentials)" from discovery)
    assert "error: You must be logged in to the server (" in listed.stderr, listed.stderr
    assert_alive(url, directory)


def test_serve_with_its_own_certificate_files_a_client_ca_and_a_token_file(tmp_path):
    certs = tls.generate(tmp_path / "pki")
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('s3cret,frank,7,"ops"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", "--tls-cert-file", str(certs.cert),
         "--tls-private-key-file", str(certs.key), "--client-ca-file", str(certs.ca), "--token-auth-file", str(tokens)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = process.stdout.readline()
        assert "serving on https://" in line, (line, process.poll())
        url = line.split("serving on ", 1)[1].split()[0]
        common = ["--server", url, "--certificate-authority", str(certs.ca)]
        by_token = kubectl("auth", "whoami", "-o", "json", *common, "--token", "s3cret", directory=tmp_path)
        assert json.loads(by_token.stdout)["status"]["userInfo"] == {"username": "frank", "uid": "7", "groups": ["ops", "system:authenticated"]}
        by_certificate = kubectl("get", "namespaces", "-o", "name", *common, "--client-certificate", str(certs.admin_cert), "--client-key", str(certs.admin_key), directory=tmp_path)
        assert "namespace/kube-system" in by_certificate.stdout, by_certificate.stderr
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()
