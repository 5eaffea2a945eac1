"""What authentication and RBAC cost a request, counted in CPU instructions, in process.

    python3 bench/auth_cost.py [--modes default,token,rbac,masters] [--cases get,create,patch] [-n 300]
    python3 bench/auth_cost.py --code /tmp/pre-auth [--code DIR ...]      (the default mode of other checkouts)

The HTTP figures (``bench/api.py --modes``/``--code``) move with the machine's other tenants; this
count does not. Each (checkout, mode, case) runs in its own process under valgrind's callgrind,
counting only around the measured batch (``callgrind_control -i``, as ``bench/write_stages.py
--instructions``). The process builds mockapi (``mockapi.app.build``) and calls its ASGI application
directly, as uvicorn would (no sockets: what it leaves out is uvicorn, the kernel and TLS), with
``bench/api.py``'s fixtures, tokens and RBAC role:

* ``default`` — no flag: no filter in front of the application;
* ``token`` — ``--token-auth-file``, AlwaysAllow: the bearer token looked up, the user attached;
* ``rbac`` — the same with ``--authorization-mode RBAC``, a user outside ``system:masters`` whose
  ClusterRoleBinding sorts after the bootstrap ones (the rule walk);
* ``masters`` — RBAC mode, a user in ``system:masters`` (decided before any rule).

Cases: ``get`` one pod, ``create`` a ~2 KB pod (a new name each time), ``patch`` a merge patch of
a label (a new value each time). ``--calls`` also prints how many functions of ``mockapi/auth/``
each request calls (Python's profiler hook, outside callgrind): in the default mode, none.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import api  # noqa: E402  (the fixtures, tokens and role)

ROOT = BENCH.parent
MODES = ("default", "token", "rbac", "masters")
POD = "/api/v1/namespaces/default/pods"


async def request(app, method: str, path: str, token: str | None, body: bytes = b"", content_type: str = "application/json") -> int:
    """One request through the ASGI application, as uvicorn hands it over; returns the status."""
    headers = [(b"host", b"127.0.0.1"), (b"user-agent", b"auth-cost"), (b"accept", b"application/json")]
    if token:
        headers.append((b"authorization", b"Bearer " + token.encode()))
    if body:
        headers += [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 55441)}
    status = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(scope, receive, send)
    return status[0]


class Driver:
    """A mockapi built in this process in one mode, and the cases' requests."""

    def __init__(self, mode: str, tmp: Path) -> None:
        from mockapi import app as app_
        from mockapi.settings import Settings

        options = {}
        if mode != "default":
            (tmp / "tokens.csv").write_text(api.TOKEN_FILE)
            options["token_auth_file"] = tmp / "tokens.csv"
        if mode in ("rbac", "masters"):
            options["authorization_mode"] = "RBAC"
        self.server = app_.build(Settings(port=0, log_level="warning", **options))
        self.app = self.server.app
        self.admin = None if mode == "default" else api.ADMIN_TOKEN
        self.token = None if mode == "default" else api.ADMIN_TOKEN if mode == "masters" else api.USER_TOKEN
        self.counter = 0
        self.create_body = orjson.dumps(api.make_pod("__NAME__", 7, namespace=None)).split(b"__NAME__")
        self.loop = asyncio.new_event_loop()
        if mode in ("rbac", "masters"):
            self._expect("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", self.admin, orjson.dumps(api.BENCH_ROLE))
            self._expect("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", self.admin, orjson.dumps(api.BENCH_BINDING))
        self._expect("POST", "/api/v1/namespaces/default/serviceaccounts", self.admin, orjson.dumps(api.service_account("api")))  # make_pod's
        self._expect("POST", POD, self.admin, orjson.dumps(api.make_pod("p-0000", 0, namespace="default")))

    def close(self) -> None:
        if hasattr(self.server, "shutdown"):  # older checkouts have none
            self.loop.run_until_complete(self.server.shutdown())
        self.loop.close()

    def _expect(self, method, path, token, body=b"", content_type="application/json") -> None:
        status = self.loop.run_until_complete(request(self.app, method, path, token, body, content_type))
        if status not in (200, 201):
            raise RuntimeError(f"{method} {path} -> {status}")

    def one(self, case: str) -> None:
        self.counter += 1
        if case == "get":
            self._expect("GET", POD + "/p-0000", self.token)
        elif case == "create":
            head, tail = self.create_body
            self._expect("POST", POD, self.token, head + f"c-{self.counter}".encode() + tail)
        elif case == "patch":
            body = b'{"metadata":{"labels":{"bench-flip":"v%d"}}}' % self.counter
            self._expect("PATCH", POD + "/p-0000", self.token, body, "application/merge-patch+json")
        else:
            raise SystemExit(f"unknown case {case!r}")


def _child(mode: str, case: str, n: int, calls: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        driver = Driver(mode, Path(tmp))
        for _ in range(200):
            driver.one(case)
        gc.collect()
        if calls:
            print(orjson.dumps({"auth_calls_per_request": _count_auth_calls(driver, case, n)}).decode())
            driver.close()
            return 0
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True, check=True)
        for _ in range(n):
            driver.one(case)
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True, check=True)
        driver.close()
    return 0


def _count_auth_calls(driver: Driver, case: str, n: int) -> float:
    """Python functions of mockapi/auth/ called per request (sys.setprofile)."""
    marker = os.sep + os.path.join("mockapi", "auth") + os.sep
    count = [0]

    def hook(frame, event, arg):
        if event == "call" and marker in frame.f_code.co_filename:
            count[0] += 1

    sys.setprofile(hook)
    try:
        for _ in range(n):
            driver.one(case)
    finally:
        sys.setprofile(None)
    return count[0] / n


def _run(checkout: str, mode: str, case: str, n: int, calls: bool) -> float:
    env = {**os.environ, "PYTHONPATH": checkout}
    child = [sys.executable, str(Path(__file__).resolve()), "--child", mode, case, str(n)] + (["--calls"] if calls else [])
    if calls:
        done = subprocess.run(child, cwd=checkout, env=env, capture_output=True, text=True, check=True)
        return orjson.loads(done.stdout.strip().splitlines()[-1])["auth_calls_per_request"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", *child]
        done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{checkout} {mode} {case}: {done.stderr[-2000:]}")
        totals = next(line for line in out.read_text(errors="replace").splitlines() if line.startswith("totals:"))
        return int(totals.split()[1]) / n


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", default=",".join(MODES), help=f"of {','.join(MODES)} (this checkout only; the first is the yardstick)")
    parser.add_argument("--code", action="append", default=[], metavar="DIR",
                        help="compare these checkouts' default mode instead (repeatable; this one is added last unless named)")
    parser.add_argument("--cases", default="get,create,patch")
    parser.add_argument("-n", type=int, default=300, help="requests counted per case")
    parser.add_argument("--calls", action="store_true", help="also count mockapi/auth functions called per request")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child[0], args.child[1], int(args.child[2]), args.calls)
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        print("bench/auth_cost.py needs valgrind (callgrind_control)", file=sys.stderr)
        return 2
    if args.code:
        codes = [str(Path(c).resolve()) for c in args.code]
        codes += [] if str(ROOT) in codes else [str(ROOT)]
        columns = [(code, "default", Path(code).name) for code in codes]
    else:
        columns = [(str(ROOT), mode, mode) for mode in args.modes.split(",")]
    print(f"CPU instructions per request (callgrind, in process through the ASGI application, {args.n} requests after 200 of warm-up); "
          "in brackets: the ratio to the first column")
    print(f"{'case':<8}" + "".join(f"{label:>22}" for _, _, label in columns))
    for case in args.cases.split(","):
        counts = [_run(code, mode, case, args.n, False) for code, mode, _ in columns]
        print(f"{case:<8}" + "".join(f"{c:>13,.0f} ({c / counts[0]:.2f}x)" for c in counts), flush=True)
    if args.calls:
        print("mockapi/auth functions called per request (Python profiler hook)")
        for case in args.cases.split(","):
            calls = [_run(code, mode, case, min(args.n, 100), True) for code, mode, _ in columns]
            print(f"{case:<8}" + "".join(f"{c:>22.1f}" for c in calls), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
