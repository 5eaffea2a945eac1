"""The cost of durability (a benchmark, not a test: it never fails a build).

    python3 bench/persistence.py [--runs 3] [--seconds 3] [--objects 100000] [--out FILE.json]

Two figures (issue 13):

* **create/s with and without --data-dir, same run.** Two servers, started as ``bench/api.py``
  starts its mockapi (``--allocation-mode manual --no-scheduler --no-kubelet --no-gc``), one in
  memory and one with ``--data-dir`` in a scratch directory. ``wrk`` (``bench/wrk.lua``, create
  mode: a fresh ~2 KB Pod per request) POSTs for ``--seconds`` to each in turn, run index
  outermost, on 64, 16 and 1 connections (one connection shows what one fsync per write costs;
  more show what group commit buys back: the writes of every waiting client share an fsync). Server on core 0, wrk on core 1, as in ``bench/api.py``.
  Medians of ``--runs``.
* **start-up with N stored objects.** A data directory is filled with ``--objects`` ~2 KB Pods
  (in-process, through the registry, as a server would write them). Then ``python3 -m mockapi serve
  --data-dir DIR`` is started ``--runs`` times: the time from just before the spawn to the first
  200 from ``/readyz`` (median and min), beside an in-memory server's start and the file sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH)]

import api  # noqa: E402 - bench/api.py: servers, placement, wrk, the Pod fixture

CONNECTIONS = (64, 16, 1)
SERVE = [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--log-level", "warning", "--allocation-mode", "manual", "--no-scheduler", "--no-kubelet", "--no-gc"]


def throughput(*, runs: int, seconds: float, scratch: Path) -> dict:
    servers = {"memory": api.start_server("memory", SERVE, banner="mockapi serving on"),
               "data-dir": api.start_server("data-dir", [*SERVE, "--data-dir", str(scratch / "throughput")], banner="mockapi serving on")}  # fmt: skip
    body = scratch / "create.json"
    body.write_bytes(orjson.dumps(api.make_pod("__NAME__", 7, namespace=None)))
    results: dict = {f"{name} c{c}": [] for c in CONNECTIONS for name in servers}
    try:
        for server in servers.values():
            api.wait_ready(server.port)
            api._server_pid_by_port[server.port] = server.pid
            api.create_namespace(server.port, "bench")
        for run in range(runs + 1):  # run 0 warms up
            for connections in CONNECTIONS:
                api.CONCURRENCY = connections
                for name, server in servers.items():
                    result = api.run_wrk(server.port, "create", "/api/v1/namespaces/bench/pods", seconds,
                                         {"BENCH_BODY_FILE": str(body), "BENCH_TAG": f"r{run}c{connections}-"})  # fmt: skip
                    if run:
                        results[f"{name} c{connections}"].append(result)
    finally:
        for server in servers.values():
            api.stop(server)
    summary = {}
    for key, values in results.items():
        summary[key] = {
            "create_per_s": statistics.median(r["rps"] for r in values),
            "p50_ms": statistics.median(r["p50_us"] for r in values) / 1000 if "p50_us" in values[0] else None,
            "p99_ms": statistics.median(r["p99_us"] for r in values) / 1000 if "p99_us" in values[0] else None,
            "errors": sum(r["errors"] for r in values),
            "runs": [round(r["rps"]) for r in values],
        }
    return summary


def fill(directory: Path, objects: int) -> dict:
    """``objects`` Pods in a data directory, written through the registry (in a child process)."""
    code = f"""
import sys, time
sys.path[:0] = {[str(BENCH.parent), str(BENCH)]!r}
from api import make_pod
from mockapi import app
from mockapi.registry.options import WriteOptions
from mockapi.settings import Settings
server = app.build(Settings(data_dir={str(directory)!r}))
registry = server.registry
namespaces = registry.types.by_kind("", "v1", "Namespace")
pods = registry.types.by_kind("", "v1", "Pod")
for n in range(10):
    registry.create(namespaces, "", {{"apiVersion": "v1", "kind": "Namespace", "metadata": {{"name": f"bench-{{n}}"}}}}, WriteOptions())
started = time.perf_counter()
for i in range({objects}):
    ns = f"bench-{{i % 10}}"
    registry.create(pods, ns, make_pod(f"p-{{i:06d}}", i, namespace=ns), WriteOptions())
server.journal.close()
print(time.perf_counter() - started)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(BENCH.parent)})
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    sizes = {p.name: p.stat().st_size for p in directory.iterdir()}
    return {"objects": objects, "write_seconds": float(done.stdout.split()[-1]), "bytes": sizes}


def time_to_ready(args: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen([*SERVE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(BENCH.parent)})
    try:
        line = proc.stdout.readline()
        if "serving on" not in line:
            raise RuntimeError(line + proc.stderr.read()[-3000:])
        port = int(line.split("http://", 1)[1].split()[0].rsplit(":", 1)[1])
        while True:
            try:
                if api.call(port, "GET", "/readyz")[0] == 200:
                    return time.perf_counter() - started
            except OSError:
                time.sleep(0.001)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def startup(*, runs: int, objects: int, scratch: Path) -> dict:
    directory = scratch / "startup"
    filled = fill(directory, objects)
    stored, memory = [], []
    for _ in range(runs):
        stored.append(time_to_ready(["--data-dir", str(directory)]))
        memory.append(time_to_ready([]))
    return {**filled, "ready_seconds": {"median": statistics.median(stored), "min": min(stored)},
            "memory_ready_seconds": {"median": statistics.median(memory), "min": min(memory)}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--only", default="throughput,startup")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if not shutil.which("wrk") and "throughput" in args.only:
        print("bench/persistence.py: wrk is needed (apt-get install -y wrk)", file=sys.stderr)
        return 2
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-persistence-", dir=os.environ.get("BENCH_DATA_DIR")) as scratch:
        if "throughput" in args.only:
            results["throughput"] = throughput(runs=args.runs, seconds=args.seconds, scratch=Path(scratch))
            for key, row in results["throughput"].items():
                print(f"create/s {key:14} {row['create_per_s']:8.0f}  p50 {row['p50_ms']} ms  p99 {row['p99_ms']} ms  runs {row['runs']}  errors {row['errors']}")
            for c in CONNECTIONS:
                ratio = results["throughput"][f"data-dir c{c}"]["create_per_s"] / results["throughput"][f"memory c{c}"]["create_per_s"]
                print(f"  --data-dir / memory on {c} connection(s): {ratio:.2f}")
        if "startup" in args.only:
            results["startup"] = found = startup(runs=args.runs, objects=args.objects, scratch=Path(scratch))
            print(f"start-up with {found['objects']:,} stored objects: ready in {found['ready_seconds']['median']:.2f} s median "
                  f"(min {found['ready_seconds']['min']:.2f}); in memory, empty: {found['memory_ready_seconds']['median']:.2f} s; "
                  f"files {found['bytes']}; writing them took {found['write_seconds']:.1f} s in-process")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
