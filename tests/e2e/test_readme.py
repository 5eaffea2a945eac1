"""The README's examples, run as written.

Every fenced block is accounted for: shell commands run in order against the server the README
starts (``mockapi serve --load testdata/`` on the default port 55441) from a directory that holds
the repository's ``kubeconfig``, ``testdata/`` and ``examples/``; Python scripts run there too; the pytest example
runs as a test file; what cannot run here (``docker``, the CI snippets) is checked against the
Dockerfile and the variables the server reads. ``pip install`` and ``pytest`` are what CI runs.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PORT = 55441
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
INSTALLS = {"pip install .", "pip install -e '.[test]'"}


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README.read_text()) if lang == language]


def commands(block: str) -> list[str]:
    """The commands of a shell block: one per line, ``a && b`` split, comments dropped."""
    found = []
    for line in block.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            found.extend(part.strip() for part in line.split(" && "))
    return found


def kind_of(command: str) -> str:
    if command in INSTALLS:
        return "install"
    if command == "pytest":
        return "ci"
    if command.startswith("mockapi serve"):
        return "server"
    if command.startswith("docker "):
        return "docker"
    return "run"


def server_variables() -> set[str]:
    cli = (ROOT / "mockapi" / "cli.py").read_text()
    return {f"MOCKAPI_{name}" for name in re.findall(r'_env(?:_paths)?\("(\w+)"', cli)}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("readme")
    (directory / "testdata").symlink_to(ROOT / "testdata")
    (directory / "examples").symlink_to(ROOT / "examples")
    shutil.copy(ROOT / "kubeconfig", directory / "kubeconfig")
    return directory


@pytest.fixture(scope="module")
def readme_server(workdir):
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", PORT)) == 0:
            pytest.skip(f"port {PORT} is taken: the README's examples use the default port")
    [command] = [c for block in blocks("sh") for c in commands(block) if kind_of(c) == "server"]
    process = subprocess.Popen(shlex.split(command), cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 15
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{PORT}/readyz").status_code == 200:
                break
        except httpx.TransportError:
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[1] if process.poll() is not None else "not ready"
            time.sleep(0.05)
    yield process
    process.terminate()
    process.communicate(timeout=10)


def test_every_example_is_a_kind_this_test_knows():
    languages = [lang for lang, _ in BLOCK.findall(README.read_text())]
    assert set(languages) <= {"sh", "python", "yaml"}, languages
    for block in blocks("sh"):
        for command in commands(block):
            if kind_of(command) == "install":
                assert command in INSTALLS


def test_shell_commands_and_python_scripts_run_in_order_as_written(readme_server, workdir):
    """The tour: kubectl, the Python client script, the in-process server, curl on the control API."""
    for language, body in BLOCK.findall(README.read_text()):
        if language == "sh":
            for command in commands(body):
                if kind_of(command) == "run":
                    result = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=workdir, capture_output=True, text=True, timeout=60)
                    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
                    assert '"status":"Failure"' not in result.stdout.replace(" ", ""), f"{command}\n{result.stdout}"
        elif language == "python" and "def test_" not in body:
            result = subprocess.run([sys.executable, "-c", body], cwd=workdir, capture_output=True, text=True, timeout=60)
            assert result.returncode == 0, f"{body}\n{result.stderr}"
    assert (workdir / "snapshot.yaml").read_text().startswith("apiVersion:")
    assert yaml.safe_load((workdir / "my-kubeconfig").read_text())["clusters"][0]["cluster"]["server"] == f"http://localhost:{PORT}"


def test_the_pytest_example_passes_as_written(workdir):
    [example] = [body for body in blocks("python") if "def test_" in body]
    (workdir / "test_readme_example.py").write_text(example)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_readme_example.py"], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b2 passed\b", result.stdout)


def test_the_docker_commands_match_the_dockerfile():
    dockerfile = (ROOT / "Dockerfile").read_text()
    exposed = re.findall(r"^EXPOSE (\d+)$", dockerfile, re.M)
    docker = [c for block in blocks("sh") for c in commands(block) if kind_of(c) == "docker"]
    assert docker[0] == "docker build -t mockapi ."
    volumes = {path for found in re.findall(r"^VOLUME (.+)$", dockerfile, re.M) for path in json.loads(found)}
    for command in docker[1:]:
        run = shlex.split(command)
        assert run[:2] == ["docker", "run"] and run[-1] == "mockapi"
        assert run[run.index("-p") + 1].split(":")[1] == exposed[0] == str(PORT)
        variables = {run[i + 1].split("=")[0] for i, word in enumerate(run) if word == "-e"}
        assert variables and variables <= server_variables()
        mounts = {run[i + 1].split(":")[1] for i, word in enumerate(run) if word == "-v"}
        assert mounts <= volumes, (mounts, volumes)
    assert "/app/testdata" in dockerfile


def test_the_ci_snippets_configure_the_service_as_the_image_and_the_plugin_expect():
    github, gitlab = [yaml.safe_load(body) for body in blocks("yaml")]
    job = github["jobs"]["test"]
    service = job["services"]["mockapi"]
    assert service["ports"] == [f"{PORT}:{PORT}"]
    assert set(service["env"]) <= server_variables()
    assert job["env"]["MOCKAPI_URL"] == f"http://localhost:{PORT}"
    assert [step["run"] for step in job["steps"] if "run" in step] == ["pip install -e '.[test]'", "pytest"]
    test = gitlab["test"]
    alias = test["services"][0]["alias"]
    assert test["variables"]["MOCKAPI_URL"] == f"http://{alias}:{PORT}"
    assert set(test["variables"]) - {"MOCKAPI_URL"} <= server_variables()
    assert test["script"] == ["pip install -e '.[test]'", "pytest"]
    assert json.dumps(service).count("/app/testdata") == 1
