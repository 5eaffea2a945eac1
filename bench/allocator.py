"""The allocator benchmark (a benchmark, not a test: it never fails a build).

    python3 bench/allocator.py [--quick] [--out results.json]

Each case starts a fresh ``mockapi serve`` (allocator in-process, default policy) on core 0 and
drives it from core 1 (``taskset``, when there are two cores): it creates DevicePools from the
capacity generator (500 nodes x 10 devices: foozer-1000, 2 NUMA nodes x 5), then claims through
the API, and watches the claims until every one has its ``Allocated`` condition.

- **burst**: 5,000 single-device claims created as fast as 4 connections allow → claims/s from
  the first create to the last Allocated, and creation-to-Allocated latency (which includes the
  time spent queued behind earlier claims);
- **paced**: the same 5,000 claims created at a steady 200/s (the goal rate) → the latency of
  one claim when the allocator keeps up;
- **matchAttributes**: 1,200 claims of 2, 3 or 4 devices with ``matchAttributes: [numa]``, burst;
- **pathological**: the ALLOCATOR.md search cases, each on its own pools: time from create to
  the condition, and the reason.

Goal (issue 3): >= 200 claims/s and p99 < 50 ms per claim on a 2-core machine. Kubernetes DRA's
scheduler_perf thresholds on the same 500x10 shape are 40-70 pods/s in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mockapi import capacity  # noqa: E402

GROUP = "/apis/devmgmtproto.k8s.io/v1alpha1"
NAMESPACE = "bench"
GI = 1024**3


# ------------------------------------------------------------------ the server
def start_server() -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--log-level", "warning"]
    if shutil.which("taskset") and os.cpu_count() and os.cpu_count() >= 2:
        command = ["taskset", "-c", "0", *command]
        os.sched_setaffinity(0, {1})
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    url = line.split("serving on ", 1)[1].split()[0]
    for _ in range(500):
        try:
            if httpx.get(f"{url}/readyz").status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.01)
    raise RuntimeError("the server did not become ready")


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=10)


# ------------------------------------------------------------------ objects
def device_class(name: str = "bench-gpu", driver: str = "example.com-foozer") -> dict:
    spec = {"driver": driver, "deviceType": "gpu"}
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def claim(name: str, *, count: int = 1, match: list[str] | None = None, device_class: str = "bench-gpu") -> dict:
    detail: dict = {"deviceClass": device_class, "requests": {"count": count}}
    if match:
        detail["matchAttributes"] = match
    meta = {"name": name, "namespace": NAMESPACE}
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaim", "metadata": meta, "spec": {"claims": [detail]}}


def bench_pools(nodes: int = 500) -> list[dict]:
    return capacity.generate("foozer-1000-medium", nodes=nodes, layout=capacity.Layout(2, 5))


def counter_pool(name: str, capacity_gi: int, devices: list[int]) -> dict:
    """One node's pool (driver = its name) with a shared 'memory' counter; device i requests devices[i] Gi of it."""
    spec = {
        "driver": name,
        "nodeName": f"{name}-node",
        "resources": [{"name": "memory", "capacity": f"{capacity_gi}Gi"}],
        "devices": [{"name": f"device-{i + 1}", "requests": {"memory": f"{gi}Gi"}} for i, gi in enumerate(devices)],
    }
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DevicePool", "metadata": {"name": name}, "spec": spec}


def numa_pool(name: str, devices: int, groups: int) -> dict:
    """One node's pool (driver = its name) whose devices alternate between ``groups`` NUMA nodes."""
    items = [{"name": f"dev-{i:02d}", "attributes": [{"name": "numa", "stringValue": str(i % groups)}]} for i in range(devices)]
    spec = {"driver": name, "nodeName": f"{name}-node", "devices": items}
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DevicePool", "metadata": {"name": name}, "spec": spec}


# ------------------------------------------------------------------ driving it
async def create(client: httpx.AsyncClient, path: str, body: dict) -> None:
    response = await client.post(path, json=body)
    if response.status_code != 201:
        raise RuntimeError(f"create {path}: {response.status_code} {response.text[:200]}")


async def setup(client: httpx.AsyncClient, pools: list[dict]) -> str:
    await create(client, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    await create(client, f"{GROUP}/deviceclasses", device_class())
    semaphore = asyncio.Semaphore(8)

    async def one(pool):
        async with semaphore:
            await create(client, f"{GROUP}/devicepools", pool)

    await asyncio.gather(*(one(pool) for pool in pools))
    listing = (await client.get(f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims")).json()
    return listing["metadata"]["resourceVersion"]


async def watch_conditions(url: str, rv: str, expected: int, done: dict, finished: asyncio.Event) -> None:
    """name → (time the Allocated condition was first seen, its reason)."""
    path = f"{url}{GROUP}/namespaces/{NAMESPACE}/deviceclaims?watch=1&resourceVersion={rv}"
    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream("GET", path) as response:
            async for line in response.aiter_lines():
                if not line:
                    continue
                event = json.loads(line)
                obj = event["object"]
                name = obj["metadata"]["name"]
                for condition in (obj.get("status") or {}).get("conditions") or []:
                    if condition["type"] == "Allocated" and name not in done:
                        done[name] = (time.perf_counter(), condition["reason"])
                if len(done) >= expected:
                    finished.set()
                    return


async def run_claims(url: str, pools: list[dict], claims: list[dict], *, rate: float | None = None, connections: int = 4, timeout: float = 300) -> dict:
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=connections)) as client:
        rv = await setup(client, pools)
        done: dict[str, tuple[float, str]] = {}
        finished = asyncio.Event()
        watcher = asyncio.create_task(watch_conditions(url, rv, len(claims), done, finished))
        await asyncio.sleep(0.2)  # the watch is established
        created: dict[str, float] = {}
        answered: dict[str, float] = {}
        queue: asyncio.Queue = asyncio.Queue()
        for body in claims:
            queue.put_nowait(body)
        start = time.perf_counter()

        async def worker():
            while not queue.empty():
                body = queue.get_nowait()
                if rate:
                    index = len(created)
                    delay = start + index / rate - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                created[body["metadata"]["name"]] = time.perf_counter()
                await create(client, f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims", body)
                answered[body["metadata"]["name"]] = time.perf_counter()

        await asyncio.gather(*(worker() for _ in range(connections)))
        created_all = time.perf_counter()
        try:
            await asyncio.wait_for(finished.wait(), timeout)
        finally:
            watcher.cancel()
        return _figures(created, done, start, created_all, answered)


def _figures(created: dict, done: dict, start: float, created_all: float, answered: dict | None = None) -> dict:
    latencies = sorted((done[name][0] - created[name]) * 1000 for name in created if name in done)
    reasons: dict[str, int] = {}
    for _, reason in done.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    last = max(t for t, _ in done.values())
    return {
        "claims": len(created),
        "create_per_s": round(len(created) / max(created_all - start, 1e-9), 1),
        "claims_per_s": round(len(done) / (last - start), 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 1),
        "max_ms": round(latencies[-1], 1),
        "reasons": reasons,
        **({"create_p50_ms": round(statistics.median(sorted((answered[n] - created[n]) * 1000 for n in answered)), 1)} if answered else {}),
    }


PATHOLOGICAL = {  # label: (its pool, a claim of that pool's class): ALLOCATOR.md's search cases
    "17 devices from a node of 16": (numa_pool("p16", 16, 1), dict(count=17)),
    "17 with matchAttributes numa, 2x16 interleaved": (numa_pool("p32", 32, 2), dict(count=17, match=["numa"])),
    "7 x 10Gi from a 60Gi counter, 24 devices": (counter_pool("p60", 60, [10] * 24), dict(count=7)),
    "7 of 20Gi + 7x10Gi under a 70Gi counter": (counter_pool("p70", 70, [20] + [10] * 7), dict(count=7)),
}


async def pathological(url: str) -> dict:
    """Each case on its own pool and class (driver = pool name): time from create to condition."""
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        await setup(client, [])
        for pool, _ in PATHOLOGICAL.values():
            name = pool["metadata"]["name"]
            await create(client, f"{GROUP}/deviceclasses", device_class(name, driver=name))
            await create(client, f"{GROUP}/devicepools", pool)
        results = {}
        for label, (pool, shape) in PATHOLOGICAL.items():
            name = pool["metadata"]["name"]
            rv = (await client.get(f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims")).json()["metadata"]["resourceVersion"]
            done: dict = {}
            finished = asyncio.Event()
            watcher = asyncio.create_task(watch_conditions(url, rv, 1, done, finished))
            await asyncio.sleep(0.2)
            start = time.perf_counter()
            await create(client, f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims", claim(f"claim-{name}", device_class=name, **shape))
            await asyncio.wait_for(finished.wait(), 30)
            watcher.cancel()
            seen, reason = done[f"claim-{name}"]
            results[label] = {"ms": round((seen - start) * 1000, 1), "reason": reason}
        return results


# ------------------------------------------------------------------ the run
def case(label: str, coroutine_of_url) -> dict:
    process, url = start_server()
    try:
        figures = asyncio.run(coroutine_of_url(url))
    finally:
        stop_server(process)
    print(f"{label:<40} {json.dumps(figures)}", flush=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 single-device claims instead of 5,000, 300 matchAttributes claims")
    parser.add_argument("--out", type=Path, help="write every figure as JSON")
    args = parser.parse_args()
    singles, grouped = (1000, 300) if args.quick else (5000, 1200)
    pools = bench_pools()
    one = [claim(f"c-{i:05d}") for i in range(singles)]
    several = [claim(f"m-{i:05d}", count=2 + i % 3, match=["numa"]) for i in range(grouped)]
    print(f"allocator benchmark: {len(pools)} pools x 10 devices, {os.cpu_count()} cores", flush=True)
    results = {
        "burst": case(f"burst: {singles} single-device claims", lambda url: run_claims(url, pools, one)),
        "paced": case(f"paced at 200/s: {singles} claims", lambda url: run_claims(url, pools, one, rate=200)),
        "matchAttributes": case(f"burst: {grouped} claims of 2-4, numa", lambda url: run_claims(url, pools, several)),
        "pathological": case("pathological cases", pathological),
    }
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
