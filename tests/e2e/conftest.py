"""End-to-end fixtures: the official kubernetes client and raw HTTP against a live server."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import time

import httpx
import pytest
from kubernetes import client, config

GROUP, VERSION = "devmgmtproto.k8s.io", "v1alpha1"


def wait_for(what, timeout: float = 10.0, interval: float = 0.02):
    """``what()`` once it is truthy, or its last (falsy) value after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = what()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(interval)


@contextlib.contextmanager
def served(*args: str):
    """``mockapi serve --port 0 ARGS`` in a process of its own; yields a kubernetes client
    Configuration for the URL its banner names, and stops it with SIGTERM at the end."""
    process = subprocess.Popen([sys.executable, "-m", "mockapi", "serve", "--port", "0", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        line = process.stdout.readline()
        assert "serving on http://" in line, (line, process.poll(), process.stderr.read() if process.poll() is not None else "")
        configuration = client.Configuration()
        configuration.host = line.split("serving on ", 1)[1].split()[0]
        yield configuration
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


@pytest.fixture
def api(live):
    api_client = config.new_client_from_config(config_file=str(live.kubeconfig))
    yield api_client
    api_client.close()


@pytest.fixture
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture
def kubectl(live, tmp_path):
    """``kubectl`` against the test's server: ``kubectl("get", "pods", check=True, stdin=None)``."""
    binary = shutil.which("kubectl")
    assert binary, "kubectl must be on PATH: the end-to-end suite drives the real client"

    def run(*args, check=True, stdin=None):
        result = subprocess.run([binary, "--kubeconfig", str(live.kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args],
                                capture_output=True, text=True, timeout=60, input=stdin)  # fmt: skip
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    return run


@pytest.fixture
def http(live):
    with httpx.Client(base_url=live.url, timeout=10) as session:
        yield session


def device_class(name, **spec):
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"driver": "example.com-foozer", "deviceType": "gpu", **spec},
    }


def device_claim(name, namespace="default", **labels):
    meta = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "DeviceClaim",
        "metadata": meta,
        "spec": {"claims": [{"deviceClass": "example.com-foozer-single"}]},
    }
