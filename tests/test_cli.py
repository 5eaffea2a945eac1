"""The ``mockapi`` command as a user runs it: real processes, free ports, the example data loaded;
and every error it can meet is one line on stderr with a non-zero exit."""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
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
    process = start("--load", "testdata/")
    try:
        line = process.stdout.readline()
        match = re.search(r"serving on (http://127\.0\.0\.1:\d+) \((\d+) objects loaded", line)
        assert match, line + process.stderr.read() if process.poll() is not None else line
        url = match.group(1)
        assert int(match.group(2)) > 20
        deadline = time.monotonic() + 60  # a hang guard: it answers at once once it printed its URL
        while httpx.get(f"{url}/readyz", timeout=60).status_code != 200:
            assert time.monotonic() < deadline, "never ready"
            time.sleep(0.02)
        busy = cpu_seconds(process.pid)  # CPU, not wall time: a loaded machine takes seconds more
        pools = httpx.get(f"{url}/apis/devmgmtproto.k8s.io/v1alpha1/devicepools", timeout=60).json()["items"]
        assert pools and busy < 5, busy
    finally:
        process.terminate()
        process.communicate(timeout=60)  # shutdown takes well under a second; a hang fails here


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system), from /proc; 0 where there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


# ------------------------------------------------------------ errors a person can act on
# Each case: the arguments, the exit code, and words the one line on stderr must hold. The mockapi
# processes run with HOME an empty directory and no KUBECONFIG: nothing to fall back on.
NOT_A_KUBECONFIG = "just text\n"
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {}}]
current-context: x
"""
FAILURES = {
    "explain without a kubeconfig": (["explain", "my-claim"], 1, "no kubeconfig at ~/.kube/config (give --kubeconfig FILE, set KUBECONFIG, or use --server URL)"),
    "allocator without a kubeconfig": (["allocator"], 1, "no kubeconfig at ~/.kube/config"),
    "a missing --kubeconfig": (["explain", "c", "--kubeconfig", "{tmp}/nope"], 1, "no kubeconfig at {tmp}/nope"),
    "a missing $KUBECONFIG": (["explain", "c", "env:KUBECONFIG={tmp}/gone:{tmp}/gone-too"], 1, "no kubeconfig at {tmp}/gone:{tmp}/gone-too"),
    "a file that is no kubeconfig": (["explain", "c", "--kubeconfig", "{tmp}/not-a-kubeconfig"], 1, "unusable kubeconfig {tmp}/not-a-kubeconfig: not a kubeconfig"),
    "an unknown context": (["allocator", "--kubeconfig", "{tmp}/kubeconfig", "--context", "nope"], 1, "Expected object with name nope"),
    "explain, server unreachable": (["explain", "c", "--server", "http://127.0.0.1:{closed}"], 1, "cannot reach the API server at http://127.0.0.1:{closed}: Connection refused"),
    "allocator, server unreachable": (["allocator", "--server", "http://127.0.0.1:{closed}"], 1, "cannot reach the API server at http://127.0.0.1:{closed}: Connection refused"),
    "kubeconfig's server unreachable": (["explain", "c", "--kubeconfig", "{tmp}/kubeconfig"], 1, "cannot reach the API server at http://127.0.0.1:1"),
    "--server without a scheme": (["explain", "c", "--server", "localhost:8080"], 2, "argument --server: 'localhost:8080' is not a server URL"),
    "--port not a number": (["serve", "--port", "http"], 2, "argument --port: invalid port value: 'http' (see `mockapi serve --help`)"),
    "--port out of range": (["serve", "--port", "70000"], 2, "argument --port: a port is 0 to 65535, not 70000"),
    "--watch-history zero": (["serve", "--watch-history", "0"], 2, "argument --watch-history: must be at least 1, not 0"),
    "--allocation-delay negative": (["serve", "--allocation-delay", "-1"], 2, "argument --allocation-delay: must be 0 or more seconds"),
    "a missing --load path": (["serve", "--port", "0", "--load", "{tmp}/nope"], 1, "{tmp}/nope: no such file or directory"),
    "port in use": (["serve", "--port", "{busy}"], 2, "cannot listen on 127.0.0.1:{busy}: Address already in use"),
    "a bad MOCKAPI_PORT": (["serve", "env:MOCKAPI_PORT=x"], 2, "argument --port: invalid port value: 'x'"),
    "crds into a file": (["crds", "--out", "{tmp}/not-a-kubeconfig/schemas"], 1, "Not a directory"),
    "crds --check of nothing": (["crds", "--check", "--out", "{tmp}/nope"], 1, "{tmp}/nope: no such directory"),
    "an unknown shape": (["gen", "tiny"], 2, "unknown shape 'tiny'"),
    "no NUMA nodes": (["gen", "foozer-1000-small", "--numa-nodes", "0"], 2, "argument --numa-nodes: must be at least 1, not 0"),
    "no command": ([], 2, "mockapi: the following arguments are required: COMMAND"),
    "an unknown command": (["server"], 2, "mockapi: argument COMMAND: invalid choice: 'server'"),
    "an unknown flag": (["explain", "c", "--namespce", "x"], 2, "unrecognized arguments: --namespce x"),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def mockapi(args, home: Path, **env) -> subprocess.Popen:
    """``mockapi ARGS`` as a person runs it, with HOME empty and no KUBECONFIG or MOCKAPI_* set."""
    clean = {k: v for k, v in os.environ.items() if k != "KUBECONFIG" and not k.startswith("MOCKAPI_")}
    return subprocess.Popen(
        [sys.executable, "-m", "mockapi", *args], cwd=home, env={**clean, "HOME": str(home), "PYTHONUNBUFFERED": "1", **env},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def assert_one_line_error(code: int, err: str, expected_code: int, words: str) -> None:
    assert "Traceback" not in err, err
    assert code == expected_code and code != 0, (code, err)
    assert len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert words in err, err


@pytest.fixture(scope="module")
def failures(tmp_path_factory):
    """Every case of FAILURES run at once (each process is mostly start-up): name → (code, stderr)."""
    tmp, home = tmp_path_factory.mktemp("files"), tmp_path_factory.mktemp("home")
    (tmp / "not-a-kubeconfig").write_text(NOT_A_KUBECONFIG)
    (tmp / "kubeconfig").write_text(KUBECONFIG)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        values = {"tmp": tmp, "closed": free_port(), "busy": busy.getsockname()[1]}
        running = {}
        for name, (args, _, _) in FAILURES.items():
            args = [a.format(**values) for a in args]
            env = dict(a[4:].split("=", 1) for a in args if a.startswith("env:"))
            running[name] = mockapi([a for a in args if not a.startswith("env:")], home, **env)
        results = {}
        for name, process in running.items():
            try:
                _, err = process.communicate(timeout=60)
            finally:
                process.kill()
            results[name] = (process.returncode, err)
    return values, results


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_each_failure_is_one_line_on_stderr_and_a_nonzero_exit(failures, case):
    values, results = failures
    _, expected_code, words = FAILURES[case]
    code, err = results[case]
    assert_one_line_error(code, err, expected_code, words.format(**values))
    assert err.startswith("mockapi")


# ------------------------------------------------------------ --server against a real server
def test_explain_with_server_needs_no_kubeconfig(live, tmp_path):
    live.mockapi.load(ROOT / "testdata")
    process = mockapi(["explain", "--server", live.url, "-n", "team-a", "later-claim"], tmp_path)
    out, err = process.communicate(timeout=60)
    assert_one_line_error(process.returncode, err, 1, 'error from server (NotFound): deviceclaims.devmgmtproto.k8s.io "later-claim" not found')
    process = mockapi(["explain", "--server", live.url, "gpu-and-vf-same-numa", "-o", "json"], tmp_path)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert json.loads(out)["claim"] == "default/gpu-and-vf-same-numa"
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)  # its server is unreachable: --server replaces it
    process = mockapi(["explain", "--kubeconfig", str(tmp_path / "kubeconfig"), "--server", live.url, "gpu-and-vf-same-numa"], tmp_path)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "claim: default/gpu-and-vf-same-numa" in out


def test_allocator_with_server_needs_no_kubeconfig(live, tmp_path):
    live.mockapi.load(ROOT / "testdata")  # the server's own allocator is off: claims stay pending
    process = mockapi(["allocator", "--server", live.url, "--log-level", "warning"], tmp_path)
    try:
        assert process.stdout.readline() == f"mockapi allocator: reconciling claims and pods on {live.url} (policy binpack)\n"
        claim = f"{live.url}/apis/devmgmtproto.k8s.io/v1alpha1/namespaces/default/deviceclaims"
        query = {"watch": "1", "fieldSelector": "metadata.name=gpu-and-vf-same-numa", "timeoutSeconds": "30"}
        with httpx.stream("GET", claim, params=query, timeout=40) as events:
            for line in events.iter_lines():
                conditions = json.loads(line)["object"].get("status", {}).get("conditions", [])
                if any(c["type"] == "Allocated" and c["status"] == "True" for c in conditions):
                    break
            else:
                raise AssertionError("the claim was not allocated by `mockapi allocator --server`")
    finally:
        process.terminate()
        process.communicate(timeout=60)


class _Answers(http.server.BaseHTTPRequestHandler):
    """A server answering every request with one error Status (set on the class)."""

    status: dict = {}

    def do_GET(self):  # noqa: N802 - http.server's name
        body = json.dumps(self.status).encode()
        self.send_response(self.status["code"])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize(
    "status, words",
    [
        ({"code": 403, "reason": "Forbidden", "message": 'deviceclaims is forbidden: User "system:anonymous" cannot list\nresource'},
         'error from server (Forbidden): deviceclaims is forbidden: User "system:anonymous" cannot list resource'),
        ({"code": 404, "reason": "NotFound", "message": "the server could not find the requested resource"},
         "does not serve DevicePool.devmgmtproto.k8s.io (apply the CRDs in schemas/ first)"),
    ],
    ids=["forbidden", "no-crds"],
)
def test_an_error_status_from_the_server_is_one_line(tmp_path, status, words):
    answers = type("Answers", (_Answers,), {"status": {"kind": "Status", "apiVersion": "v1", "status": "Failure", **status}})
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), answers) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            process = mockapi(["explain", "c", "--server", f"http://127.0.0.1:{server.server_address[1]}"], tmp_path)
            _, err = process.communicate(timeout=60)
        finally:
            server.shutdown()
    assert_one_line_error(process.returncode, err, 1, words)


def test_interrupting_a_command_waiting_on_the_server_is_one_line(tmp_path):
    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        silent.settimeout(30)
        process = mockapi(["explain", "c", "--server", f"http://127.0.0.1:{silent.getsockname()[1]}"], tmp_path)
        connection, _ = silent.accept()  # the request is under way
        with connection:
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=30)
    assert_one_line_error(process.returncode, err, 130, "mockapi explain: interrupted")


def test_ctrl_c_stops_the_server_cleanly(tmp_path):
    process = mockapi(["serve", "--port", "0", "--log-level", "warning"], tmp_path)
    assert "serving on" in process.stdout.readline()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0 and err == "", err


def test_serve_runs_the_pod_controllers_unless_told_not_to():
    from mockapi import cli

    parse = cli._parser().parse_args
    every = cli._settings(parse(["serve"]))
    assert (every.allocator, every.scheduler, every.kubelet, every.garbage_collector) == (True, True, True, True)
    alone = cli._settings(parse(["serve", "--no-allocator", "--no-kubelet", "--no-gc"]))
    assert (alone.allocator, alone.scheduler, alone.kubelet, alone.garbage_collector) == (False, False, False, False)
    tuned = cli._settings(parse(["serve", "--no-scheduler", "--kubelet-capacity", "cpu=64", "--kubelet-capacity", "memory=1Ti", "--kubelet-start-delay", "0.5"]))
    assert tuned.allocator and not tuned.scheduler
    assert tuned.kubelet_capacity == {"cpu": "64", "memory": "1Ti"} and tuned.kubelet_start_delay == 0.5


def test_a_bad_scheduler_config_is_a_usage_error(tmp_path):
    bad = tmp_path / "sched.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: x\n  plugins:\n    filter:\n      enabled:\n      - name: Nope\n")
    done = subprocess.run([sys.executable, "-m", "mockapi", "serve", "--port", "0", "--scheduler-config", str(bad)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith(f"mockapi serve: {bad}: ") and 'plugin "Nope" does not exist' in done.stderr
