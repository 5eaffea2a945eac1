"""Scheduler throughput and latency, in the shape of Kubernetes' scheduler_perf
``SchedulingWithResourceClaimTemplate``: N Nodes with a DevicePool of D devices each, one
DeviceClaimTemplate asking for one device, P pods each naming the template — everything in one
process (the registry, the allocator, the claims controller, the scheduler and the simulated
kubelet on one event loop; no HTTP), as scheduler_perf runs kube-scheduler against an in-process
apiserver.

Two runs per shape:

- **burst**: every pod created at once (as fast as the registry takes them); pods/s from the first
  creation to the last pod bound, and to the last pod Running.
- **paced**: pods created at ``--rate`` per second; creation → bound latency p50/p99.

and the same with plain pods (no device claims), for comparison. Each run also gives the process's
CPU time per pod (from the first creation until every pod is Running and every Event the
controllers recorded is written), which a busy machine moves less than it moves wall time;
``--code DIR`` runs another checkout's ``mockapi`` package (run the bench for two checkouts in
turn to compare code); ``--profile FILE`` writes a cProfile of the burst's measured part. Anchors (issue 10): real DRA's CI
thresholds on this shape are 40–70 pods/s (typically 51–81), ~250 pods/s on 6 cores; the goal here
is ≥ 300 pods/s bound and p99 < 100 ms at 200 pods/s, on 2 cores.

    python3 bench/scheduler.py                    # 500 nodes × 10 devices, 5,000 pods
    python3 bench/scheduler.py --nodes 50 --pods 500 --quick
    python3 bench/scheduler.py --nodes 500 --pods 2000 --quick --code /tmp/main-checkout
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path

# --code DIR: the mockapi package of another checkout (before/after runs of one bench, interleaved)
_CODE = sys.argv[sys.argv.index("--code") + 1] if "--code" in sys.argv[:-1] else str(Path(__file__).resolve().parents[1])
sys.path.insert(0, _CODE)

from mockapi import app as app_, cli  # noqa: E402
from mockapi import client as client_  # noqa: E402
from mockapi.client import SYNCED, Kind, LocalClient  # noqa: E402
from mockapi.settings import Settings  # noqa: E402

API = "devmgmtproto.k8s.io/v1alpha1"
PODS, NODES = Kind("v1", "Pod"), Kind("v1", "Node")
POOLS, CLASSES, TEMPLATES = Kind(API, "DevicePool"), Kind(API, "DeviceClass"), Kind(API, "DeviceClaimTemplate")


def node(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:04d}", "labels": {"kubernetes.io/hostname": f"node-{i:04d}"}}}


def pool(i: int, devices: int) -> dict:
    return {
        "apiVersion": API, "kind": "DevicePool", "metadata": {"name": f"node-{i:04d}-gpus"},
        "spec": {"nodeName": f"node-{i:04d}", "driver": "gpu.example.com", "devices": [{"name": f"gpu-{d}"} for d in range(devices)]},
    }  # fmt: skip


def pod(i: int, *, claims: bool) -> dict:
    container = {"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}}}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i:05d}", "namespace": "default"}, "spec": {"containers": [container]}}
    if claims:
        container["devices"] = [{"name": "gpu"}]
        body["spec"]["deviceClaims"] = [{"name": "gpu", "claimTemplateName": "one-gpu"}]
    return body


async def run(nodes: int, devices: int, pods: int, *, claims: bool, rate: float | None, rbac: bool = False, profile: str | None = None) -> dict:
    settings = Settings(allocator=True, scheduler=True, kubelet=True, garbage_collector=False, log_level="warning", authorization_mode="RBAC" if rbac else "AlwaysAllow")
    server = app_.build(settings)
    client = LocalClient(server.registry)
    for i in range(nodes):
        await client.create(NODES, node(i))
        await client.create(POOLS, pool(i, devices))
    await client.create(CLASSES, {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"driver": "gpu.example.com", "deviceType": "gpu"}})
    template = {"apiVersion": API, "kind": "DeviceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": "default"}, "spec": {"spec": {"claims": [{"deviceClass": "gpu"}]}}}
    await client.create(TEMPLATES, template)
    gc.collect()
    cli._tune_gc()  # as `mockapi serve` runs: start-up frozen, the young generation collected less often
    await server.start_background()
    await asyncio.sleep(0.5)  # informers synced, nodes given their kubelet's status

    created: dict[str, float] = {}
    bound: dict[str, float] = {}
    running: dict[str, float] = {}
    done = asyncio.Event()

    async def observe():
        async for event in client.watch(PODS, "default"):
            if event.type == SYNCED or event.object is None:
                continue
            name, now = event.object["metadata"]["name"], time.perf_counter()
            if event.object["spec"].get("nodeName") and name not in bound:
                bound[name] = now
            if (event.object.get("status") or {}).get("phase") == "Running" and name not in running:
                running[name] = now
                if len(running) == pods:
                    done.set()

    watching = asyncio.create_task(observe())
    await asyncio.sleep(0)
    profiler = None
    if profile:  # the measured part only (not the set-up of nodes and pools)
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(pods):
        body = pod(i, claims=claims)
        created[body["metadata"]["name"]] = time.perf_counter()
        await client.create(PODS, body)
        if rate:
            next_at = start + (i + 1) / rate
            delay = next_at - time.perf_counter()
            await asyncio.sleep(max(delay, 0))
        elif i % 50 == 49:
            await asyncio.sleep(0)  # let the controllers see the stream, as a real client's would
    try:
        await asyncio.wait_for(done.wait(), timeout=max(60.0, pods / 20))
    except asyncio.TimeoutError:
        pass
    sink = getattr(client_, "event_sink", None)  # Events written when the loop is idle: their CPU counts too
    while sink is not None and len(sink(server.registry)):
        await asyncio.sleep(0.01)
    cpu = time.process_time() - cpu_start
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    watching.cancel()
    await server.stop_background()
    gc.unfreeze()
    latencies = sorted((bound[n] - created[n]) * 1000 for n in bound)
    last_bound = max(bound.values(), default=start)
    last_running = max(running.values(), default=start)
    return {
        "bound": len(bound),
        "running": len(running),
        "pods_per_s_bound": len(bound) / (last_bound - start) if bound else 0.0,
        "pods_per_s_running": len(running) / (last_running - start) if running else 0.0,
        "p50_ms": statistics.median(latencies) if latencies else float("nan"),
        "cpu_ms_per_pod": cpu * 1000 / pods,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] if len(latencies) >= 100 else (latencies[-1] if latencies else float("nan")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--devices", type=int, default=10, help="devices per node")
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=200.0, help="pods/s for the paced run (default 200)")
    parser.add_argument("--quick", action="store_true", help="burst runs only")
    parser.add_argument("--only", choices=("claims", "plain"), help="one kind of pod only")
    parser.add_argument("--code", metavar="DIR", help="run the mockapi package of another checkout (default: this one's)")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the burst's measured part into FILE (pstats; slows the run)")
    parser.add_argument("--rbac", action="store_true", help="--authorization-mode=RBAC: every controller call authorized (docs/rbac.md)")
    args = parser.parse_args()
    print(f"{args.nodes} nodes × {args.devices} devices, {args.pods} pods{', RBAC' if args.rbac else ''} ({Path(app_.__file__).parents[1]})", flush=True)
    rows = []
    for claims in {"claims": (True,), "plain": (False,)}.get(args.only, (True, False)):
        label = "claim template" if claims else "plain pods"
        burst = asyncio.run(run(args.nodes, args.devices, args.pods, claims=claims, rate=None, rbac=args.rbac, profile=args.profile and f"{args.profile}.{'claims' if claims else 'plain'}"))
        rows.append((f"{label}, burst", burst))
        print(f"{label:15} burst: {burst['bound']}/{args.pods} bound at {burst['pods_per_s_bound']:.0f} pods/s, "
              f"{burst['running']} Running at {burst['pods_per_s_running']:.0f} pods/s; "
              f"creation→bound p50 {burst['p50_ms']:.0f} ms, p99 {burst['p99_ms']:.0f} ms; CPU {burst['cpu_ms_per_pod']:.2f} ms/pod", flush=True)
        if not args.quick:
            paced = asyncio.run(run(args.nodes, args.devices, args.pods, claims=claims, rate=args.rate, rbac=args.rbac))
            rows.append((f"{label}, {args.rate:.0f}/s", paced))
            print(f"{label:15} paced at {args.rate:.0f}/s: {paced['bound']}/{args.pods} bound; creation→bound p50 {paced['p50_ms']:.1f} ms, "
                  f"p99 {paced['p99_ms']:.1f} ms; CPU {paced['cpu_ms_per_pod']:.2f} ms/pod", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
