"""The fuzz tests' server and the assertions every response must pass.

The server is a child process (``python -m mockapi serve --port 0``) so that a crash is seen as
a dead process rather than a dead pytest; it runs without the allocator, scheduler, kubelet and
garbage collector, so that nothing but the requests themselves writes to the store, and the
store's resourceVersion is a digest of its state: a refused write must leave it where it was.

``send`` speaks raw HTTP (``http.client``), so that paths, headers and bodies reach the server
exactly as written: no normalisation of ``..``, no re-encoding, duplicate headers kept.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import orjson

# A request may cost the server at most BUSY_SECONDS of CPU time (runaway work: a blow-up in a
# parser, a quadratic loop), and must be answered within HANG_SECONDS of wall time (a hang that
# burns no CPU: a deadlock, a lost wake-up). CPU time, not wall time, for the first: on a busy
# machine a request that costs 1 s of CPU may take 5 s of wall time.
BUSY_SECONDS = 5.0
HANG_SECONDS = 60.0  # no request (but a watch's stream) may take longer to answer
MAX_BODY = 1024 * 1024  # the fuzz server's --max-body: the 10 MB corpus bodies must be refused cheaply
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SERVE = ("--no-allocator", "--no-scheduler", "--no-kubelet", "--no-gc", "--log-level", "warning", "--max-body", str(MAX_BODY))

# A kind registered at run time, so that the fuzzing covers a CRD's endpoints as well as ours.
WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.fuzz.example.com"},
    "spec": {
        "group": "fuzz.example.com",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer", "minimum": 0},
                                    "color": {"type": "string", "enum": ["red", "green"]},
                                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                },
                            },
                            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                        },
                    }
                },
            }
        ],
    },
}


@dataclass
class Answer:
    """One response: status, headers (lower-cased names), body, seconds taken; or the error that
    ended the exchange (``status`` 0)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    seconds: float = 0.0
    error: str = ""
    cpu_seconds: float = 0.0  # the server's CPU time while it answered (0 where /proc is not there)


class FuzzServer:
    """A ``mockapi serve`` child process; its stderr goes to a file, to show what it logged."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mockapi", "serve", "--port", "0", *SERVE],
            stdout=subprocess.PIPE, stderr=self._log, text=True, env=env,
        )  # fmt: skip
        line = self.process.stdout.readline()  # the banner: "mockapi serving on http://127.0.0.1:PORT (...)"
        assert "serving on http://" in line, (line, self.process.poll(), self.log())
        self.url = line.split("serving on ", 1)[1].split()[0]
        parsed = urllib.parse.urlsplit(self.url)
        self.host, self.port = parsed.hostname, parsed.port
        self.ensure_crd()

    def ensure_crd(self) -> None:
        """Serve the run-time kind (Widget), if it is not served already."""
        if self.send("GET", "/apis/fuzz.example.com/v1/namespaces/default/widgets?limit=1").status == 200:
            return
        created = self.send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", orjson.dumps(WIDGET_CRD))
        assert created.status == 201, created

    def alive(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self._log.close()

    def send(self, method: str, target: str, body: bytes | None = None, headers: list[tuple[str, str]] | None = None,
             *, stream: bool = False) -> Answer:  # fmt: skip
        """One request, the target (path and query) sent as given; ``stream``: read no body of a
        chunked 200, a watch's stream (a watch may last; its headers may not)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=HANG_SECONDS)
        started, cpu = time.monotonic(), self.cpu_seconds()
        try:
            connection.putrequest(method, target, skip_host=False, skip_accept_encoding=True)
            for name, value in headers or ():
                connection.putheader(name, value)
            if body is not None and not any(name.lower() == "content-length" for name, _ in headers or ()):
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            found = {name.lower(): value for name, value in response.getheaders()}
            watching = response.status == 200 and found.get("transfer-encoding") == "chunked"  # a watch: it streams
            content = b"" if stream and watching else response.read()
            return Answer(response.status, found, content, time.monotonic() - started, cpu_seconds=self.cpu_seconds() - cpu)
        except (OSError, http.client.HTTPException) as error:
            return Answer(0, error=f"{type(error).__name__}: {error}", seconds=time.monotonic() - started, cpu_seconds=self.cpu_seconds() - cpu)
        finally:
            connection.close()

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (user + system), from /proc; 0 without it."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime

    def resource_version(self) -> str:
        """The store's resourceVersion: what any list reports as its own."""
        answer = self.send("GET", "/api/v1/namespaces?limit=1")
        assert answer.status == 200, answer
        return orjson.loads(answer.body)["metadata"]["resourceVersion"]


def problems(server: FuzzServer, method: str, answer: Answer, *, protocol: bool = False) -> list[str]:
    """What is wrong with one answer: a 5xx, a hang, a dead server, an error that is not a
    metav1.Status. ``protocol``: the request is refused below HTTP semantics (a header too large
    for the parser, a broken request line): the server may answer in plain text or hang up, but
    must stay alive and quick."""
    found = []
    if answer.seconds > HANG_SECONDS:
        found.append(f"took {answer.seconds:.1f}s (a hang)")
    if answer.cpu_seconds > BUSY_SECONDS:
        found.append(f"cost the server {answer.cpu_seconds:.1f}s of CPU time (runaway work)")
    if not server.alive():
        found.append(f"the server died (exit code {server.process.poll()})")
    if protocol:
        if answer.status >= 500:
            found.append(f"answered {answer.status}")
        return found
    if answer.status == 0:
        found.append(f"no answer: {answer.error}")
    elif answer.status >= 500 and not _too_large_resource_version(answer):
        found.append(f"answered {answer.status}: {answer.body[:300]!r}")
    elif answer.status >= 400 and method != "HEAD":
        found.extend(_status_problems(answer))
    return found


def _too_large_resource_version(answer: Answer) -> bool:
    """kube-apiserver's own 5xx: a list or watch from a resourceVersion the store has not reached
    waits a moment, then answers 504 Timeout with the cause ResourceVersionTooLarge (retry later)."""
    if answer.status != 504:
        return False
    causes = (orjson.loads(answer.body).get("details") or {}).get("causes") or []
    return any(cause.get("reason") == "ResourceVersionTooLarge" for cause in causes)


def _status_problems(answer: Answer) -> list[str]:
    try:
        body = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return [f"a {answer.status} whose body is not JSON: {answer.body[:200]!r}"]
    if not isinstance(body, dict) or body.get("kind") != "Status" or body.get("apiVersion") != "v1":
        return [f"a {answer.status} whose body is not a v1 Status: {answer.body[:200]!r}"]
    if body.get("code") != answer.status:
        return [f"a {answer.status} whose Status has code {body.get('code')}"]
    if not answer.headers.get("content-type", "").startswith("application/json"):
        return [f"a {answer.status} Status sent as {answer.headers.get('content-type')!r}"]
    return []
