"""The hostile-claim benchmark (a benchmark, not a test: it never fails a build).

    python3 bench/hostile.py [--seconds 10] [--claims 20] [--root CHECKOUT] [--out results.json]

Starts ``mockapi serve --port 0`` (on core 0 when there are two cores; this client on core 1),
then does what any client can do to stall it (issue 8, item 2):

- **refused**: a claim whose constraint is two nested 99-element ``all()`` loops over a 4 KB string
  literal (estimated cost ~27.5 M) — the server should answer 422;
- **big pool**: a DevicePool whose device carries a 1 MB string attribute and a 20 KB needle (the
  server should refuse it — 64-character attribute values — and if it does not, claims
  ``[1..10].all(i, !device.big.contains(device.needle))`` against it join the hostile ones);
- **hostile claims**: ``--claims`` claims that pass admission but are as slow as admission allows
  (nested 99 x 99 loops, estimated just under the 1,000,000 limit, ~60 ms per device in this
  runtime) against a 48-device pool, so every attempt ends in AllocationTimeout and the
  allocator retries them (backoff 1 s doubling to 10 s) for the whole measurement.

Meanwhile 4 concurrent clients GET ``/readyz`` back to back: latency p50 / p99 / max over
``--seconds``, after a 2 s baseline with no hostile claim. Goal: p99 < 50 ms while they are
retried. ``--root`` runs the server from another checkout (e.g. an older commit, for before/after).
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
GROUP = "/apis/devmgmtproto.k8s.io/v1alpha1"
NAMESPACE = "hostile"
DRIVER = "hostile.example.com"
RANGE = "[" + ",".join(str(i) for i in range(99)) + "]"
# Just under the cost limit: 9,801 iterations of 20 additions and comparisons (~815,000).
SLOW_ADDS = f"{RANGE}.all(i, {RANGE}.all(j, " + " && ".join(f"device.n + {k} > 0" for k in range(20)) + "))"
# Two contains() of 64-character attributes per iteration, 90 x 99 times (~990,000).
SLOW_CONTAINS = f"[{','.join(str(i) for i in range(90))}].all(i, {RANGE}.all(j, !device.s.contains(device.t) && !device.t.contains(device.s)))"
REFUSED = f"{RANGE}.all(i, {RANGE}.all(j, !'{'a' * 4000}'.contains(device.s)))"
BIG = "[1,2,3,4,5,6,7,8,9,10].all(i, !device.big.contains(device.needle))"


# ------------------------------------------------------------------ the server
def start_server(root: Path) -> tuple[subprocess.Popen, str, str]:
    command = [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--log-level", "warning"]
    placement = "unpinned"
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        command = ["taskset", "-c", "0", *command]
        os.sched_setaffinity(0, {1})
        placement = "server on core 0, client on core 1"
    env = {**os.environ, "PYTHONPATH": str(root)}
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True, env=env)
    url = process.stdout.readline().split("serving on ", 1)[1].split()[0]
    for _ in range(500):
        try:
            if httpx.get(f"{url}/readyz").status_code == 200:
                return process, url, placement
        except httpx.TransportError:
            time.sleep(0.01)
    raise RuntimeError("the server did not become ready")


# ------------------------------------------------------------------ objects
def _object(kind: str, name: str, spec: dict, *, namespaced: bool = False) -> dict:
    meta = {"name": name, "namespace": NAMESPACE} if namespaced else {"name": name}
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def device_class(name: str, driver: str) -> dict:
    return _object("DeviceClass", name, {"driver": driver, "deviceType": "gpu"})


def pool(name: str, driver: str, devices: list[dict]) -> dict:
    return _object("DevicePool", name, {"driver": driver, "nodeName": f"{name}-node", "devices": devices})


def slow_pool() -> dict:
    attributes = [{"name": "s", "stringValue": "a" * 64}, {"name": "t", "stringValue": "a" * 63 + "b"}, {"name": "n", "intValue": 1}]
    return pool("hostile-slow", DRIVER, [{"name": f"dev-{i:02d}", "attributes": attributes} for i in range(48)])


def big_pool() -> dict:
    attributes = [{"name": "big", "stringValue": "a" * 1_000_000}, {"name": "needle", "stringValue": "a" * 20_000 + "b"}]
    return pool("hostile-big", "big." + DRIVER, [{"name": "dev-0", "attributes": attributes}])


def claim(name: str, constraints: str, device_class_name: str = "hostile-gpu") -> dict:
    return _object("DeviceClaim", name, {"claims": [{"deviceClass": device_class_name, "constraints": constraints}]}, namespaced=True)


# ------------------------------------------------------------------ driving it
async def post(client: httpx.AsyncClient, path: str, body: dict) -> httpx.Response:
    return await client.post(path, json=body)


async def setup(client: httpx.AsyncClient, report: dict) -> bool:
    """The namespace, classes and pools; whether the big pool was accepted."""
    await post(client, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    await post(client, f"{GROUP}/deviceclasses", device_class("hostile-gpu", DRIVER))
    await post(client, f"{GROUP}/deviceclasses", device_class("hostile-big", "big." + DRIVER))
    response = await post(client, f"{GROUP}/devicepools", slow_pool())
    assert response.status_code == 201, response.text[:300]
    big = await post(client, f"{GROUP}/devicepools", big_pool())
    report["big pool (1 MB attribute)"] = _outcome(big)
    refused = await post(client, f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims", claim("refused", REFUSED))
    report["refused claim (nested loops over a 4 KB literal)"] = _outcome(refused)
    return big.status_code == 201


def _outcome(response: httpx.Response) -> str:
    if response.status_code < 300:
        return f"{response.status_code} accepted"
    return f"{response.status_code} {response.json().get('message', '')[-160:]}"


async def create_hostile(client: httpx.AsyncClient, count: int, *, big: bool) -> list[str]:
    names = []
    for index in range(count):
        if big and index % 2 == 0:
            body = claim(f"hostile-{index:02d}", BIG, "hostile-big")
        else:
            body = claim(f"hostile-{index:02d}", SLOW_ADDS if index % 4 in (0, 1) else SLOW_CONTAINS)
        response = await post(client, f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims", body)
        if response.status_code != 201:
            raise RuntimeError(f"hostile claim refused: {response.status_code} {response.text[:300]}")
        names.append(body["metadata"]["name"])
    return names


async def probe(url: str, seconds: float, clients: int = 4) -> list[float]:
    """GET /readyz back to back from ``clients`` connections; each latency in seconds."""
    latencies: list[float] = []
    end = time.monotonic() + seconds

    async def one() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            while time.monotonic() < end:
                started = time.perf_counter()
                response = await client.get("/readyz")
                latencies.append(time.perf_counter() - started)
                assert response.status_code == 200

    await asyncio.gather(*(one() for _ in range(clients)))
    return latencies


def summary(latencies: list[float]) -> dict:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {"requests": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2), "p99_ms": round(p99 * 1000, 2), "max_ms": round(ordered[-1] * 1000, 2)}


async def reasons(client: httpx.AsyncClient) -> dict[str, int]:
    listing = (await client.get(f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims")).json()
    found: dict[str, int] = {}
    for item in listing["items"]:
        condition = next((c for c in (item.get("status") or {}).get("conditions") or [] if c["type"] == "Allocated"), None)
        key = condition["reason"] if condition else "(no condition yet)"
        found[key] = found.get(key, 0) + 1
    return found


async def sample_messages(client: httpx.AsyncClient, names: list[str]) -> list[str]:
    messages = []
    for name in (names[0], names[-1]):
        obj = (await client.get(f"{GROUP}/namespaces/{NAMESPACE}/deviceclaims/{name}")).json()
        for condition in (obj.get("status") or {}).get("conditions") or []:
            messages.append(f"{name}: {condition['reason']}: {condition['message'][:60]}…{condition['message'][-110:]}")
    return messages


async def run(args) -> dict:
    process, url, placement = start_server(Path(args.root).resolve())
    report: dict = {"placement": placement, "root": str(Path(args.root).resolve())}
    try:
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            big = await setup(client, report)
            report["baseline /readyz (no hostile claims, 2 s)"] = summary(await probe(url, 2.0))
            names = await create_hostile(client, args.claims, big=big)
            report["hostile claims"] = f"{len(names)} ({'half against the big pool, ' if big else ''}estimated up to ~990,000 cost units)"
            report[f"/readyz while they are retried ({args.seconds:g} s)"] = summary(await probe(url, args.seconds))
            report["claims by reason"] = await reasons(client)
            report["sample messages"] = await sample_messages(client, names)
    finally:
        process.terminate()
        process.wait(timeout=10)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--claims", type=int, default=20)
    parser.add_argument("--root", default=str(ROOT), help="the checkout to run the server from (default: this one)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = asyncio.run(run(args))
    for key, value in report.items():
        if isinstance(value, list):
            print(f"{key}:")
            for line in value:
                print(f"  {line}")
        else:
            print(f"{key}: {value}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
