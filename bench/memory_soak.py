"""The memory soak benchmark (a benchmark, not a test: it never fails a build).

    python3 bench/memory_soak.py [--pools 20000] [--cycles 3] [--no-allocator] [--code DIR] [--watch-history N]

It starts ``mockapi serve`` (allocator in-process unless ``--no-allocator``) and, ``--cycles``
times, creates ``--pools`` DevicePools of about 1.9 KB (8 devices with 3 attributes each, 2 pool
attributes), then deletes them all. After every step it waits until the server is idle and prints
its RSS (``VmRSS`` of ``/proc/<pid>/status``): baseline, after the first create, after the first
delete, then after each further create/delete cycle. Memory that follows what is stored returns
near the baseline after each delete.

``--code DIR`` runs the server from another checkout (its ``PYTHONPATH``, in a scratch working
directory so that this one is not imported instead): ``--code /tmp/base`` measures the old code.
"Idle" is the RSS changing by less than 1 MiB over three samples a quarter of a second apart,
after the API answered the last request (the allocator keeps working on its watch events after
that; the benchmark waits for it through the RSS).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
POOLS = "/apis/devmgmtproto.k8s.io/v1alpha1/devicepools"
MIB = 1024 * 1024
CONNECTIONS = 8


def pool(index: int) -> dict:
    """One DevicePool of about 1.9 KB of JSON."""
    devices = [
        {"name": f"dev-{d:02d}", "attributes": [
            {"name": "numa", "stringValue": str(d % 2)}, {"name": "index", "intValue": d}, {"name": "memory", "quantityValue": "40Gi"},
            {"name": "uuid", "stringValue": f"GPU-{index:08x}-{d:04x}-4a1e-9c3b-5f0e2d7a6b81"},
        ]}
        for d in range(8)
    ]
    spec = {
        "nodeName": f"node-{index // 4:05d}", "driver": "example.com-foozer", "devices": devices,
        "attributes": [{"name": "model", "stringValue": "foozer-1000"}, {"name": "firmware", "semVerValue": "1.8.2"}],
    }
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DevicePool", "metadata": {"name": f"pool-{index:05d}"}, "spec": spec}


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def settled_rss(pid: int, *, timeout: float = 300.0) -> int:
    """The RSS once it stops moving (the allocator done with its backlog)."""
    samples = [rss(pid)]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.25)
        samples.append(rss(pid))
        last = samples[-3:]
        if len(last) == 3 and max(last) - min(last) < MIB:
            return last[-1]
    return samples[-1]


def start(args) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--log-level", "warning"]
    if args.no_allocator:
        command.append("--no-allocator")
    if args.watch_history is not None:
        command += ["--watch-history", str(args.watch_history)]
    env = dict(os.environ, PYTHONPATH=str(Path(args.code).resolve()), PYTHONUNBUFFERED="1")
    process = subprocess.Popen(command, cwd=tempfile.gettempdir(), env=env, stdout=subprocess.PIPE, text=True)
    url = process.stdout.readline().split("serving on ", 1)[1].split()[0]
    return process, url


async def _each(url: str, count: int, send) -> None:
    limits = httpx.Limits(max_connections=CONNECTIONS)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as session:
        queue = iter(range(count))

        async def worker() -> None:
            for index in queue:
                response = await send(session, index)
                if response.status_code >= 300 and response.status_code != 404:
                    raise RuntimeError(f"{response.status_code}: {response.text[:300]}")

        await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))


def create(url: str, count: int) -> None:
    headers = {"Content-Type": "application/json"}
    asyncio.run(_each(url, count, lambda s, i: s.post(POOLS, content=orjson.dumps(pool(i)), headers=headers)))


def delete(url: str, count: int) -> None:
    asyncio.run(_each(url, count, lambda s, i: s.delete(f"{POOLS}/pool-{i:05d}")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", type=int, default=20_000)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--no-allocator", action="store_true")
    parser.add_argument("--watch-history", type=int, default=None, help="the server's --watch-history (default: its own, 10,000 events, which hold ~75 MB of 1.9 KB pools)")
    parser.add_argument("--code", default=str(ROOT), help="the checkout whose mockapi to run (default: this one)")
    args = parser.parse_args()
    print(f"pool JSON: {len(orjson.dumps(pool(0)))} bytes; code: {args.code}; allocator: {'off' if args.no_allocator else 'on'}", flush=True)
    process, url = start(args)
    try:
        print(f"baseline              {settled_rss(process.pid) / MIB:8.1f} MiB", flush=True)
        for cycle in range(1, args.cycles + 1):
            started = time.monotonic()
            create(url, args.pools)
            print(f"cycle {cycle}: {args.pools} pools {settled_rss(process.pid) / MIB:8.1f} MiB  ({time.monotonic() - started:.0f}s)", flush=True)
            started = time.monotonic()
            delete(url, args.pools)
            print(f"cycle {cycle}: 0 pools     {settled_rss(process.pid) / MIB:8.1f} MiB  ({time.monotonic() - started:.0f}s)", flush=True)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
