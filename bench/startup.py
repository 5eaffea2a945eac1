"""The start-up benchmark (a benchmark, not a test: it never fails a build).

    python3 bench/startup.py [--runs 10] [--code DIR] [--no-load] [--phases]

Three figures, each from fresh processes:

* **serve ready**: ``python3 -m mockapi serve --port 0 --load testdata/`` is started ``--runs``
  times; the time from just before the process is spawned to the first 200 from ``/readyz``,
  polled every millisecond on a fresh connection (median and min). The server's own banner figure
  ("ready N s after process start", from ``/proc``) is shown beside it.
* **idle RSS**: ``VmRSS`` of each of those servers once it answered ``/readyz`` and its RSS has
  stopped moving (median).
* **MockAPIServer ready**: in a fresh ``python3 -c`` per run, the time from just before
  ``from mockapi.testing import MockAPIServer`` to ``MockAPIServer().start()`` returning (it
  returns once uvicorn accepts connections), and from the import's end to that (median and min).

``--phases`` also times, in a fresh process per run, the steps of an embedded start (after
``from mockapi.testing import MockAPIServer``): importing ``mockapi.app``, importing uvicorn
(``mockapi.http.lifecycle``), ``app.build()`` with every controller on (a server built and
dropped: what is imported or compiled on first use is paid here), then a first and a second
``MockAPIServer().start()`` in that process, each split into bind + build and the uvicorn thread
until it accepts (the first pays the event loop's imports: uvloop, uvicorn's lifespan)
(docs/startup.md).

Goals (issue 9): serve ready < 0.4 s, MockAPIServer ready < 0.1 s after import, idle RSS ≤ 60 MiB.
Modules run from cached bytecode (a scratch ``PYTHONPYCACHEPREFIX``, filled by one run first), as
an installed package does; ``--no-bytecode`` keeps ``PYTHONDONTWRITEBYTECODE`` if the environment
sets it (every start compiles every module: about 0.1 s more).
``--code DIR`` runs another checkout (``--code /tmp/base`` measures the old code; the servers run in
a scratch directory so that this checkout is not imported instead, and load that checkout's
testdata/). Repeated, it compares checkouts: run by run, each checkout in turn, so that a busy
moment on a shared machine hits them alike.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
BYTECODE: str | None = None  # the bytecode cache directory, None to compile on every start

_EMBEDDED = """
import json, time
started = time.perf_counter()
from mockapi.testing import MockAPIServer
imported = time.perf_counter()
server = MockAPIServer().start()
ready = time.perf_counter()
server.stop()
print(json.dumps({"import_s": imported - started, "ready_after_import_s": ready - imported, "ready_s": ready - started}))
"""

_PHASES = """
import gc, json, time
from mockapi.testing import MockAPIServer
took = {}

def timed(name, step):
    started = time.perf_counter()
    result = step()
    took[name] = time.perf_counter() - started
    return result

gc.disable()  # as MockAPIServer and `mockapi serve` build
timed("import mockapi.app", lambda: __import__("mockapi.app"))
try:  # as MockAPIServer imports it (a checkout from before mockapi.uvicorn_lean has none)
    from mockapi import uvicorn_lean
except ImportError:
    pass
else:
    uvicorn_lean.install()
timed("import uvicorn (http.lifecycle)", lambda: __import__("mockapi.http.lifecycle"))
from mockapi import app
from mockapi.settings import Settings
timed("app.build()", lambda: app.build(Settings(port=0, allocator=True, scheduler=True, kubelet=True, garbage_collector=True)))
gc.enable()
build, wait = MockAPIServer._build, MockAPIServer._wait_started
which = "first"
MockAPIServer._build = lambda self: timed(f"{which} MockAPIServer: bind + build", lambda: build(self))
MockAPIServer._wait_started = lambda self, *args: timed(f"{which} MockAPIServer: uvicorn thread until it accepts", lambda: wait(self, *args))
timed("first MockAPIServer().start()", lambda: MockAPIServer().start()).stop()
which = "second"
timed("second MockAPIServer().start()", lambda: MockAPIServer().start()).stop()
print(json.dumps(took))
"""


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def settled_rss(pid: int, *, timeout: float = 10.0) -> int:
    """The RSS once three samples 50 ms apart agree within 64 KiB (background work done)."""
    samples = [rss(pid)]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.05)
        samples.append(rss(pid))
        last = samples[-3:]
        if len(last) == 3 and max(last) - min(last) <= 64 * 1024:
            break
    return samples[-1]


def _ready(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/readyz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def _environment(code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONUNBUFFERED="1")
    if BYTECODE is not None:
        # As an installed package runs: modules compiled once (pip compiles at install), kept
        # outside the checkout.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = BYTECODE
    return env


def serve_once(code: Path, load: list[str]) -> dict:
    """One ``mockapi serve``: seconds to the first /readyz 200, the banner's figure, idle RSS."""
    port = _free_port()
    command = [sys.executable, "-m", "mockapi", "serve", "--port", str(port), "--log-level", "warning"]
    for path in load:
        command += ["--load", path]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=tempfile.gettempdir(), env=_environment(code), stdout=subprocess.PIPE, text=True)
    try:
        while not _ready(port):
            if process.poll() is not None or time.perf_counter() - started > 30:
                raise RuntimeError(f"mockapi serve did not become ready (exit code {process.poll()})")
            time.sleep(0.001)
        ready = time.perf_counter() - started
        banner = process.stdout.readline()
        idle = settled_rss(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)
    own = banner.split("ready ", 1)[1].split("s ", 1)[0] if "ready " in banner else "nan"
    return {"ready_s": ready, "banner_ready_s": float(own), "idle_rss": idle}


def embedded_once(code: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _EMBEDDED], cwd=tempfile.gettempdir(), env=_environment(code), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def phases_once(code: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _PHASES], cwd=tempfile.gettempdir(), env=_environment(code), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _line(name: str, values: list[float], unit: str = "s", scale: float = 1.0, goal: str = "") -> str:
    shown = [v * scale for v in values]
    return f"{name:<40} median {statistics.median(shown):8.3f} {unit}   min {min(shown):8.3f} {unit}   max {max(shown):8.3f} {unit}  {goal}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--code", action="append", default=None, help="the checkout whose mockapi to run (default: this one); repeat it to compare checkouts, run by run")
    parser.add_argument("--no-load", action="store_true", help="serve without --load testdata/")
    parser.add_argument("--phases", action="store_true", help="also time the steps of an embedded start (import, build, uvicorn thread, a second server)")
    parser.add_argument("--no-bytecode", action="store_true", help="keep the environment's PYTHONDONTWRITEBYTECODE: compile every module on every start")
    args = parser.parse_args()
    codes = [Path(c).resolve() for c in (args.code or [str(ROOT)])]
    loads = {code: [] if args.no_load else [str(code / "testdata")] for code in codes}
    global BYTECODE
    if not args.no_bytecode:
        BYTECODE = tempfile.mkdtemp(prefix="mockapi-bench-pycache-")
    try:
        _compare(codes, loads, args)
    finally:
        if BYTECODE is not None:
            shutil.rmtree(BYTECODE, ignore_errors=True)
    return 0


def _compare(codes: list[Path], loads: dict, args) -> None:
    if BYTECODE is not None:
        for code in codes:
            serve_once(code, loads[code])  # fills the cache
    print(f"{args.runs} runs, interleaved; load: {'nothing' if args.no_load else 'testdata/'}; "
          f"bytecode: {'cached' if BYTECODE else 'compiled on every start'}", flush=True)
    serves: dict[Path, list[dict]] = {code: [] for code in codes}
    embedded: dict[Path, list[dict]] = {code: [] for code in codes}
    phases: dict[Path, list[dict]] = {code: [] for code in codes}
    for _ in range(args.runs):  # run index outermost: a busy moment on the machine hits every checkout alike
        for code in codes:
            serves[code].append(serve_once(code, loads[code]))
            embedded[code].append(embedded_once(code))
            if args.phases:
                phases[code].append(phases_once(code))
    for code in codes:
        print(f"code: {code}")
        print(_line("serve: spawn -> /readyz 200", [r["ready_s"] for r in serves[code]], goal="(goal < 0.4 s)"))
        print(_line("serve: banner 'ready after process start'", [r["banner_ready_s"] for r in serves[code]]))
        print(_line("serve: idle RSS", [r["idle_rss"] for r in serves[code]], "MiB", 1 / MIB, "(goal ≤ 60 MiB)"))
        print(_line("MockAPIServer: import", [r["import_s"] for r in embedded[code]]))
        print(_line("MockAPIServer: ready after import", [r["ready_after_import_s"] for r in embedded[code]], goal="(goal < 0.1 s)"))
        print(_line("MockAPIServer: import + ready", [r["ready_s"] for r in embedded[code]]))
        for name in phases[code][0] if phases[code] else ():
            print(_line(f"  {name}", [r[name] for r in phases[code]], "ms", 1000))


if __name__ == "__main__":
    sys.exit(main())
