"""Memory follows what is stored: a real ``mockapi serve`` (allocator in-process, the GC settings
of ``serve``) goes through create/delete cycles of a few thousand DevicePools; after each delete
its RSS (``/proc/<pid>/status``) comes back to where the first cycle left it, and it holds no more
with the pools stored than in the first cycle. (``bench/memory_soak.py`` is the 20,000-pool
version.)

Each RSS is read once the allocator has caught up, known without sleeping: a claim on a sentinel
pool created after the last write is allocated only once the allocator has seen every pool event
before it (one watch, in order)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
API = "/apis/devmgmtproto.k8s.io/v1alpha1"
DRIVER = "example.com-soak"
POOLS = 2500
CYCLES = 3
MIB = 1024 * 1024
SLACK = 12 * MIB  # allowed above the first cycle's figures (the first pools cost ~25 MiB)


def pool(name: str, index: int) -> dict:
    devices = [
        {"name": f"dev-{d:02d}", "attributes": [
            {"name": "numa", "stringValue": str(d % 2)}, {"name": "index", "intValue": d},
            {"name": "uuid", "stringValue": f"GPU-{index:08x}-{d:04x}-4a1e-9c3b-5f0e2d7a6b81"},
        ]}
        for d in range(8)
    ]
    spec = {"nodeName": f"node-{index // 4:05d}", "driver": DRIVER, "devices": devices, "attributes": [{"name": "model", "stringValue": "soak"}]}
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DevicePool", "metadata": {"name": name}, "spec": spec}


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def _all(url: str, calls) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=8)) as session:
        pending = iter(calls)

        async def worker() -> None:
            for method, path, body in pending:
                response = await session.request(method, path, json=body)
                assert response.status_code < 300, response.text

        await asyncio.gather(*(worker() for _ in range(8)))


def create_pools(url: str) -> None:
    asyncio.run(_all(url, [("POST", f"{API}/devicepools", pool(f"soak-{i:05d}", i)) for i in range(POOLS)]))


def delete_pools(url: str) -> None:
    asyncio.run(_all(url, [("DELETE", f"{API}/devicepools/soak-{i:05d}", None) for i in range(POOLS)]))


def caught_up(session: httpx.Client, step: int) -> None:
    """Return once the allocator has seen every pool event so far (then clean up after itself)."""
    name = f"sentinel-{step}"
    session.post(f"{API}/devicepools", json={**pool(name, 0), "spec": {"driver": DRIVER + "-sentinel", "devices": [{"name": "d"}]}}).raise_for_status()
    claim = {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaim", "metadata": {"name": name}, "spec": {"claims": [{"deviceClass": "sentinel"}]}}
    session.post(f"{API}/namespaces/default/deviceclaims", json=claim).raise_for_status()
    with session.stream("GET", f"{API}/namespaces/default/deviceclaims", params={"watch": "1", "fieldSelector": f"metadata.name={name}", "timeoutSeconds": "120"}) as events:
        for line in events.iter_lines():
            if '"allocations"' in line:
                break
        else:
            raise AssertionError(f"the allocator did not catch up (claim {name} was never allocated)")
    session.delete(f"{API}/namespaces/default/deviceclaims/{name}").raise_for_status()
    session.delete(f"{API}/devicepools/{name}").raise_for_status()


@pytest.fixture
def server():
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--log-level", "warning", "--watch-history", "100"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = process.stdout.readline().split("serving on ", 1)[1].split()[0]
        with httpx.Client(base_url=url, timeout=60) as session:
            sentinel = {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClass", "metadata": {"name": "sentinel"}, "spec": {"driver": DRIVER + "-sentinel", "deviceType": "sentinel"}}
            session.post(f"{API}/deviceclasses", json=sentinel).raise_for_status()
            yield process.pid, url, session
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_rss_comes_back_after_every_create_delete_cycle(server):
    pid, url, session = server
    caught_up(session, 0)
    started = rss(pid)
    stored, emptied = [], []
    for cycle in range(CYCLES):
        create_pools(url)
        caught_up(session, 2 * cycle + 1)
        stored.append(rss(pid))
        delete_pools(url)
        caught_up(session, 2 * cycle + 2)
        emptied.append(rss(pid))
    figures = f"start {started / MIB:.0f} MiB, with pools {[round(r / MIB) for r in stored]}, emptied {[round(r / MIB) for r in emptied]}"
    print(figures)
    assert stored[0] - started < 60 * MIB, figures  # ~10 KB a pool, store and allocator together
    assert max(stored[1:]) <= stored[0] + SLACK, figures
    assert max(emptied[1:]) <= emptied[0] + SLACK, figures
