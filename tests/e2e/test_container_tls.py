"""The Dockerfile's HEALTHCHECK against the image's HTTPS modes, by construction (no container
engine runs here): the command parsed from the Dockerfile runs on this machine, with the image's
environment, against its entrypoint started with ``MOCKAPI_GENERATE_CERTS`` (authentication and
RBAC on: a probe has no credentials) and with ``MOCKAPI_TLS_CERT_FILE``; it passes while the
server is up and fails once it is gone. The plain-HTTP mode is tests/e2e/test_container.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from mockapi.auth import tls
from tests.e2e.test_container import free_port, image_env, one

pytestmark = pytest.mark.e2e


def healthcheck() -> list[str]:
    test = json.loads(one("HEALTHCHECK").partition("CMD ")[2])
    assert test[0] == "python3", test
    return [sys.executable, *test[1:]]


def environment(tmp_path, **extra) -> dict[str, str]:
    return {**os.environ, **{k: v for k, v in image_env().items() if k != "PATH"}, "MOCKAPI_PORT": str(free_port()), **extra}


def served(env, scheme: str):
    entrypoint = json.loads(one("ENTRYPOINT"))
    process = subprocess.Popen([sys.executable, "-m", "mockapi", *entrypoint[1:], "--no-allocator"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    banner = process.stdout.readline()
    assert f"serving on {scheme}://0.0.0.0:{env['MOCKAPI_PORT']}" in banner, banner + (process.stderr.read() if process.poll() is not None else "")
    return process


def stopped(process) -> None:
    process.terminate()
    process.communicate(timeout=10)
    time.sleep(0.1)


@pytest.mark.parametrize("rbac", [False, True], ids=["authentication", "rbac"])
def test_the_healthcheck_passes_against_generated_certificates_without_credentials(tmp_path, rbac):
    extra = {"MOCKAPI_GENERATE_CERTS": str(tmp_path / "certs"), "MOCKAPI_AUTHENTICATION": "1"}
    if rbac:
        extra["MOCKAPI_AUTHORIZATION_MODE"] = "RBAC"
    env = environment(tmp_path, **extra)
    process = served(env, "https")
    try:
        probe = subprocess.run(healthcheck(), env=env, capture_output=True, text=True, timeout=30)
        assert probe.returncode == 0, probe.stderr
    finally:
        stopped(process)
    assert subprocess.run(healthcheck(), env=env, capture_output=True, timeout=30).returncode != 0


def test_the_healthcheck_passes_against_a_certificate_of_ones_own(tmp_path):
    certs = tls.generate(tmp_path / "pki")
    env = environment(tmp_path, MOCKAPI_TLS_CERT_FILE=str(certs.cert), MOCKAPI_TLS_PRIVATE_KEY_FILE=str(certs.key), MOCKAPI_CLIENT_CA_FILE=str(certs.ca))
    process = served(env, "https")
    try:
        probe = subprocess.run(healthcheck(), env=env, capture_output=True, text=True, timeout=30)
        assert probe.returncode == 0, probe.stderr
        plain = subprocess.run(healthcheck(), env={**env, "MOCKAPI_TLS_CERT_FILE": ""}, capture_output=True, timeout=30)
        assert plain.returncode != 0  # the probe speaks HTTPS because the image's environment says so
    finally:
        stopped(process)
