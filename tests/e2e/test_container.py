"""The Dockerfile's promises, checked without a container engine.

The image itself is built and run by ``scripts/container-smoke`` (buildah) in ``.ci/run``; here the
Dockerfile is read instruction by instruction, and its entrypoint and HEALTHCHECK run on this
machine with the image's environment.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def one(word: str, steps=None) -> str:
    matches = [rest for w, rest in (steps or final_stage()) if w == word]
    assert len(matches) == 1, (word, matches)
    return matches[0]


def image_env() -> dict[str, str]:
    env = {}
    for word, rest in final_stage():
        if word == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def test_the_base_image_is_a_slim_python_behind_a_build_argument():
    arg = one("ARG", instructions())
    assert re.fullmatch(r"BASE_IMAGE=python:3\.11-slim(-\w+)?", arg)
    assert [rest for word, rest in instructions() if word == "FROM"] == ["${BASE_IMAGE} AS build", "${BASE_IMAGE}"]


def test_the_final_stage_copies_only_the_built_environment_and_testdata():
    copies = [rest for word, rest in final_stage() if word == "COPY"]
    assert copies == ["--from=build /opt/mockapi /opt/mockapi", "testdata /app/testdata"]
    assert not any(word == "RUN" and re.search(r"\b(pip|apt-get|gcc)\b", rest) for word, rest in final_stage())


def test_one_port_a_non_root_user_and_an_exec_form_entrypoint():
    assert one("EXPOSE") == "55441"
    assert re.fullmatch(r"\d+", one("USER")) and int(one("USER")) >= 1000
    assert json.loads(one("ENTRYPOINT")) == ["mockapi", "serve"]
    assert not [w for w, _ in final_stage() if w == "CMD"]
    env = image_env()
    assert env["MOCKAPI_HOST"] == "0.0.0.0" and env["MOCKAPI_PORT"] == "55441" and env["PYTHONUNBUFFERED"] == "1"


def test_a_volume_for_the_data_directory_is_declared_writable_and_documented_but_not_the_default():
    assert json.loads(one("VOLUME")) == ["/var/lib/mockapi"]
    assert any(word == "RUN" and "install -d -o 10001 -g 10001 /var/lib/mockapi" in rest for word, rest in final_stage())
    assert "MOCKAPI_DATA_DIR" not in image_env()  # in memory unless asked
    header = (ROOT / "Dockerfile").read_text().split("ARG ", 1)[0]
    assert "MOCKAPI_DATA_DIR=/var/lib/mockapi" in header and "-v mockapi-data:/var/lib/mockapi" in header


def test_the_healthcheck_is_a_python_one_liner_against_readyz():
    options, _, command = one("HEALTHCHECK").partition("CMD ")
    test = json.loads(command)
    assert test[:2] == ["python3", "-c"] and "/readyz" in test[2] and "curl" not in one("HEALTHCHECK")
    assert "--interval=" in options


def test_dockerignore_keeps_the_build_context_to_what_the_image_needs():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip() and not line.startswith("#")}
    assert {".git", "tests", "bench", "**/__pycache__"} <= ignored
    assert not {"mockapi", "testdata", "pyproject.toml", "README.md"} & ignored


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_entrypoint_with_the_image_environment_serves_on_all_interfaces_and_passes_the_healthcheck():
    port = free_port()
    env = {**os.environ, **{k: v for k, v in image_env().items() if k != "PATH"}, "MOCKAPI_PORT": str(port), "MOCKAPI_LOAD": str(ROOT / "testdata")}
    entrypoint = json.loads(one("ENTRYPOINT"))
    healthcheck = json.loads(one("HEALTHCHECK").partition("CMD ")[2])
    process = subprocess.Popen([sys.executable, "-m", "mockapi", *entrypoint[1:]], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = process.stdout.readline()
        assert f"serving on http://0.0.0.0:{port}" in banner, banner + (process.stderr.read() if process.poll() is not None else "")
        assert httpx.get(f"http://127.0.0.1:{port}/apis/devmgmtproto.k8s.io/v1alpha1/devicepools").json()["items"]
        assert subprocess.run([sys.executable, *healthcheck[1:]], env=env).returncode == 0
    finally:
        process.terminate()
        process.communicate(timeout=10)
    time.sleep(0.1)
    failed = subprocess.run([sys.executable, *healthcheck[1:]], env=env, capture_output=True)
    assert failed.returncode != 0


def test_ci_runs_the_container_smoke_test_after_the_test_suite():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -e '.[test]' && pytest" in ci
    assert ci.index("pytest") < ci.index("scripts/container-smoke")
    assert os.access(ROOT / "scripts" / "container-smoke", os.X_OK)
