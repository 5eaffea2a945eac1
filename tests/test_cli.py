"""`mockapi serve` as a user runs it: a real process, a free port, the example data loaded."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.e2e


def start(*args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "mockapi", "serve", "--port", "0", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    return process


def test_serve_with_port_zero_prints_its_url_and_loads_testdata_quickly():
    started = time.monotonic()
    process = start("--load", "testdata/")
    try:
        line = process.stdout.readline()
        match = re.search(r"serving on (http://127\.0\.0\.1:\d+) \((\d+) objects loaded", line)
        assert match, line + process.stderr.read() if process.poll() is not None else line
        url = match.group(1)
        assert int(match.group(2)) > 20
        deadline = time.monotonic() + 10
        while True:
            try:
                if httpx.get(f"{url}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        ready = time.monotonic() - started
        pools = httpx.get(f"{url}/apis/devmgmtproto.k8s.io/v1alpha1/devicepools").json()["items"]
        assert pools and ready < 5, ready
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_a_bad_manifest_names_the_file_and_document(tmp_path):
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n"
        "apiVersion: devmgmtproto.k8s.io/v1alpha1\nkind: DeviceClass\nmetadata: {name: Bad_Name}\nspec: {driver: d, deviceType: gpu}\n"
    )
    process = start("--load", str(manifest))
    out, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert f"{manifest}, document 2" in err and "Bad_Name" in err


def test_crds_check_passes_on_the_committed_schemas():
    result = subprocess.run([sys.executable, "-m", "mockapi", "crds", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
