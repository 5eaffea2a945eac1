"""Where a write's time goes, stage by stage, in-process (a profile, not a throughput figure).

    python3 bench/write_stages.py [-n 3000] [--cases create,patch,update,status,create_pool,pool_status]
    python3 bench/write_stages.py --instructions [--code CHECKOUT ...]   (needs valgrind)

Builds mockapi in this process and drives its ASGI app directly (no sockets, no uvicorn), with the
bench's fixtures (``bench/api.py``: the ~2 KB Pod, the ~2 KB DevicePool, a DeviceClaim status PUT
with the resourceVersion a controller read; ``pool_status``: the allocator's write of a DevicePool's
``status.availableDevices``, a merge patch of ``/status``, the larger half of a DevicePool create
over HTTP). Each stage is a function of the write path wrapped
with a timer; a stage's time excludes the stages nested in it, so the columns add up to the whole
request . Stages:

* decode — the body's JSON (``decoding.decode_json``, the duplicate-key screen);
* schema — prune, default and validate by the kind's structural schema (``structural.apply_schema``);
* meta — ObjectMeta's rules (``meta.validate_object_meta``);
* kind — the kind's own rules and preparation (``Strategy.validate``, ``prepare_for_*``);
* verdict — looking up, taking and remembering a create's verdict on the object's own fields
  (``registry/verdicts.py``: a hit skips the kind's preparation and rules and the schema's walk
  of those fields); the hit rate of each case is printed below the table;
* managedFields — field ownership (``Registry._track_fields``);
* depth — the stored-depth bound (``rest._check_stored_depth``);
* patch — applying a merge patch to the stored object (``patch.merge_patch``);
* store — encode, commit, index and fan out to watchers (``Store.create/update``), and the stored
  object's load for an update (``Stored.load``, or ``registry.loads`` where it exists);
* registry — the registry's own steps between those (system fields, uid and timestamps, the
  namespace check, conversions, comparing with the stored object);
* http — routing, the verb handler, the response (``KubeAPI._resource`` less the above);
* observe — metrics and the request log (the app's observer);
* other — the ASGI entry and this driver's own calls.

``--instructions`` counts CPU instructions per request instead, each case in its own process
under valgrind's callgrind (counting only around the measured batch), for one checkout or several
(``--code DIR``, repeatable; this driver, that checkout's ``mockapi``): a count that other tenants'
load does not disturb, the before/after figure to trust on a shared machine (it leaves out cache
misses and the kernel, which the HTTP benchmark sees).

The numbers are per request, best of ``--repeat`` batches (the machine is shared: the best batch is
the least disturbed). It imports whatever ``mockapi`` is on ``sys.path`` first, so running it from
another checkout (``git worktree``) profiles that version: stages missing there are left out.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import inspect
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api  # noqa: E402  (the fixtures)

GROUP = "/apis/devmgmtproto.k8s.io/v1alpha1"
STAGES = [
    ("decode", "mockapi.decoding", None, "decode_json"),
    ("decode", "mockapi.decoding", None, "duplicate_fields"),
    ("schema", "mockapi.schema.structural", "Validator", "apply"),
    ("meta", "mockapi.schema.meta", None, "validate_object_meta"),
    ("kind", "mockapi.registry.pods", "PodStrategy", "validate"),
    ("kind", "mockapi.registry.pods", "PodStrategy", "prepare_for_create"),
    ("kind", "mockapi.registry.pods", "PodStrategy", "prepare_for_update"),
    ("kind", "mockapi.registry.devices", "DeviceConstraintsStrategy", "validate"),
    ("kind", "mockapi.registry.strategy", "Strategy", "prepare_for_update"),
    ("kind", "mockapi.registry.strategy", None, "status_only_sharing"),
    ("verdict", "mockapi.registry.verdicts", "Verdicts", "key"),
    ("verdict", "mockapi.registry.verdicts", "Verdicts", "take"),
    ("verdict", "mockapi.registry.verdicts", "Verdicts", "remember"),
    ("managedFields", "mockapi.registry.rest", "Registry", "_track_fields"),
    ("depth", "mockapi.registry.rest", None, "_check_stored_depth"),
    ("patch", "mockapi.patch", None, "merge_patch"),
    ("store", "mockapi.store.memory", "Store", "create"),
    ("store", "mockapi.store.memory", "Store", "update"),
    ("store", "mockapi.store.watch", "Stored", "load"),
    ("store", "mockapi.registry.loads", "ManagedFieldsLoads", "load"),
    ("registry", "mockapi.registry.rest", "Registry", "create"),
    ("registry", "mockapi.registry.rest", "Registry", "update"),
    ("registry", "mockapi.registry.rest", "Registry", "patch"),
    ("registry", "mockapi.registry.rest", "Registry", "_update"),
    ("registry", "mockapi.registry.rest", "Registry", "_admit"),
    ("http", "mockapi.http.kube", "KubeAPI", "_resource"),
]
COLUMNS = ["http", "decode", "schema", "meta", "kind", "verdict", "managedFields", "depth", "patch", "store", "registry", "observe", "other"]


class Timers:
    """Exclusive time per stage: a stage entered inside another pauses the outer one's clock."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.stack: list[list] = []  # [stage, started, nested seconds]

    def wrap(self, stage: str, fn):
        if inspect.iscoroutinefunction(fn):
            return self._wrap_async(stage, fn)

        def timed(*args, **kwargs):
            entry = [stage, time.perf_counter(), 0.0]
            self.stack.append(entry)
            try:
                return fn(*args, **kwargs)
            finally:
                self.stack.pop()
                spent = time.perf_counter() - entry[1]
                self.totals[stage] = self.totals.get(stage, 0.0) + spent - entry[2]
                if self.stack:
                    self.stack[-1][2] += spent

        timed.__wrapped__ = fn
        return timed

    def _wrap_async(self, stage: str, fn):
        """The driver runs one request at a time, so time spent awaiting is this request's too."""

        async def timed(*args, **kwargs):
            entry = [stage, time.perf_counter(), 0.0]
            self.stack.append(entry)
            try:
                return await fn(*args, **kwargs)
            finally:
                self.stack.pop()
                spent = time.perf_counter() - entry[1]
                self.totals[stage] = self.totals.get(stage, 0.0) + spent - entry[2]
                if self.stack:
                    self.stack[-1][2] += spent

        timed.__wrapped__ = fn
        return timed


def install(timers: Timers) -> list[str]:
    """Wrap every stage function this version of mockapi has; the names of those it lacks."""
    missing = []
    for stage, module_name, owner, name in STAGES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            missing.append(f"{module_name}")
            continue
        holder = getattr(module, owner, None) if owner else module
        fn = getattr(holder, name, None) if holder is not None else None
        if fn is None or (owner and name not in vars(holder)):
            missing.append(f"{module_name}.{owner + '.' if owner else ''}{name}")
            continue
        setattr(holder, name, timers.wrap(stage, fn))
        if not owner:  # modules that imported the function by name
            for other in list(sys.modules.values()):
                if other is not None and other is not module and getattr(other, name, None) is fn and getattr(other, "__name__", "").startswith("mockapi"):
                    setattr(other, name, getattr(holder, name))
    return missing


class Driver:
    """The app, driven in-process by raw ASGI calls."""

    def __init__(self) -> None:
        from mockapi import app as app_
        from mockapi.settings import Settings

        self.server = app_.build(Settings(port=0, log_level="warning"))
        self.loop = asyncio.new_event_loop()
        self.counter = 0
        self.pod = orjson.dumps(api.make_pod("__NAME__", 7, namespace=None))
        self.pod_plain = orjson.dumps(api.make_pod("__NAME__", 7, namespace=None, automount=False))
        self.pool = orjson.dumps(api.make_pool("__NAME__", 7))
        update = api.make_pod("__NAME__", 7, namespace="bp", automount=False)  # as bench/api.py: a PUT of a pod with the token volume the server added would need it back
        update["metadata"]["labels"]["bench-flip"] = "__FLIP__"
        self.update = orjson.dumps(update)
        self.status = orjson.dumps(api.claim_status_template("bs"))
        for ns in ("bp", "bs", "bc"):
            self.request("POST", "/api/v1/namespaces", orjson.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            self.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts", orjson.dumps(api.service_account("api")))  # the pods' own
        for i in range(1000):
            self.request("POST", "/api/v1/namespaces/bp/pods", self.pod_plain.replace(b"__NAME__", b"p-%04d" % i))
            self.request("POST", GROUP + "/namespaces/bs/deviceclaims", orjson.dumps(api.make_claim("c-%04d" % i, "bs")))
        claims = orjson.loads(self.request("GET", GROUP + "/namespaces/bs/deviceclaims"))["items"]
        self.rvs = {c["metadata"]["name"]: c["metadata"]["resourceVersion"] for c in claims}
        self.pools_made = False  # the pool_status case's 1,000 pools, made at its first request

    def request(self, method: str, path: str, body: bytes = b"", content_type: bytes = b"application/json") -> bytes:
        return self.loop.run_until_complete(self._request(method, path, body, content_type))

    async def _request(self, method, path, body, content_type) -> bytes:
        sent: list = []
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            return messages.pop() if messages else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        headers = [(b"host", b"bench"), (b"user-agent", b"bench/1"), (b"content-type", content_type), (b"content-length", str(len(body)).encode())]
        scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"", "headers": headers,
                 "http_version": "1.1", "scheme": "http", "server": ("bench", 80), "client": ("bench", 1), "root_path": "", "asgi": {"version": "3.0"}}
        await self.server.app(scope, receive, send)
        if sent[0]["status"] >= 300:
            raise RuntimeError(f"{method} {path}: {sent[0]['status']} {sent[1]['body'][:300]!r}")
        return sent[1]["body"]

    def one(self, case: str) -> None:
        i = self.counter = self.counter + 1
        if case == "create":
            self.request("POST", "/api/v1/namespaces/bc/pods", self.pod.replace(b"__NAME__", b"c%d" % i))
        elif case == "create_pool":
            self.request("POST", GROUP + "/devicepools", self.pool.replace(b"__NAME__", b"pool%d" % i))
        elif case == "patch":
            self.request("PATCH", "/api/v1/namespaces/bp/pods/p-%04d" % (i % 1000), b'{"metadata":{"labels":{"bench-flip":"v%d"}}}' % i,
                         b"application/merge-patch+json")
        elif case == "update":
            name = b"p-%04d" % (i % 1000)
            self.request("PUT", "/api/v1/namespaces/bp/pods/" + name.decode(), self.update.replace(b"__NAME__", name).replace(b"__FLIP__", b"u%d" % i))
        elif case == "pool_status":
            if not self.pools_made:
                for n in range(1000):
                    self.request("POST", GROUP + "/devicepools", self.pool.replace(b"__NAME__", b"sp-%04d" % n))
                self.pools_made = True
            self.request("PATCH", GROUP + "/devicepools/sp-%04d/status" % (i % 1000), b'{"status":{"availableDevices":%d}}' % (i % 7),
                         b"application/merge-patch+json")  # a new count on every pass (1000 % 7 != 0)
        elif case == "status":
            name = "c-%04d" % (i % 1000)
            body = self.status.replace(b"__NAME__", name.encode()).replace(b"__FLIP__", b"s%d" % i).replace(b"__RV__", self.rvs[name].encode())
            out = self.request("PUT", GROUP + f"/namespaces/bs/deviceclaims/{name}/status", body)
            self.rvs[name] = orjson.loads(out)["metadata"]["resourceVersion"]
        else:
            raise ValueError(case)


def measure(driver: Driver, timers: Timers, case: str, n: int, repeat: int) -> dict:
    for _ in range(200):
        driver.one(case)
    best = None
    for _ in range(repeat):
        timers.totals.clear()
        gc.collect()
        started = time.perf_counter()
        for _ in range(n):
            driver.one(case)
        total = time.perf_counter() - started
        row = {stage: seconds / n * 1e6 for stage, seconds in timers.totals.items()}
        row["total"] = total / n * 1e6
        row["other"] = row["total"] - sum(v for k, v in row.items() if k != "total")
        if best is None or row["total"] < best["total"]:
            best = row
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=2000, help="requests per batch")
    parser.add_argument("--repeat", type=int, default=3, help="batches per case (the best is shown)")
    parser.add_argument("--cases", default="create,create_pool,patch,update,status,pool_status")
    parser.add_argument("--instructions", action="store_true",
                        help="count CPU instructions per request under valgrind's callgrind instead (steady on a busy machine)")
    parser.add_argument("--code", action="append", default=[], metavar="DIR",
                        help="with --instructions: the checkout to measure (repeatable; default this one), run case by case")
    parser.add_argument("--callgrind-child", nargs=2, metavar=("CASE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.callgrind_child:
        return _callgrind_child(args.callgrind_child[0], int(args.callgrind_child[1]))
    if args.instructions:
        return _instructions(args)
    import mockapi

    timers = Timers()
    missing = install(timers)
    driver = Driver()
    _wrap_observer(timers)
    print(f"mockapi from {Path(mockapi.__file__).resolve().parent}; us per request, best of {args.repeat} x {args.n}")
    if missing:
        print(f"(stages this version lacks: {', '.join(missing)})")
    print(f"{'case':<12}" + "".join(f"{c:>14}" for c in COLUMNS) + f"{'total':>10}")
    verdicts = getattr(driver.server.registry, "verdicts", None)  # older checkouts have none
    rates = []
    for case in args.cases.split(","):
        before = (verdicts.hits, verdicts.misses) if verdicts is not None else (0, 0)
        row = measure(driver, timers, case, args.n, args.repeat)
        print(f"{case:<12}" + "".join(f"{row.get(c, 0.0):>14.1f}" for c in COLUMNS) + f"{row['total']:>10.1f}")
        if verdicts is not None:
            hits, misses = verdicts.hits - before[0], verdicts.misses - before[1]
            if hits + misses:
                rates.append(f"{case} {hits:,} of {hits + misses:,} ({misses} missed)")
    if rates:
        print("create verdicts taken (hit rate, warm-up included): " + ", ".join(rates))
    return 0


# The cases that cycle through the 1,000 set-up objects: warmed up past one pass, so that every
# object has been written once already (a label added on the first pass is changed after it).
_CYCLING = ("patch", "update", "status", "pool_status")


def _instructions(args) -> int:
    """Instructions per request of each case and checkout: every (case, checkout) in its own process
    under callgrind, counting only around the measured batch (``callgrind_control -i``). A count,
    not a time: other tenants' load does not change it (what it leaves out: cache misses, the
    kernel)."""
    import os
    import shutil
    import subprocess
    import tempfile

    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        print("--instructions needs valgrind (callgrind_control)", file=sys.stderr)
        return 2
    checkouts = [str(Path(c).resolve()) for c in args.code] or [str(Path(__file__).resolve().parent.parent)]
    n = min(args.n, 300)
    print(f"CPU instructions per request (callgrind, in process, {n} requests per case after warm-up)")
    print(f"{'case':<12}" + "".join(f"{Path(c).name:>16}" for c in checkouts))
    for case in args.cases.split(","):
        counts = []
        for checkout in checkouts:
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "callgrind.out"
                cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable,
                       str(Path(__file__).resolve()), "--callgrind-child", case, str(n)]  # this driver, that checkout's mockapi
                subprocess.run(cmd, cwd=checkout, env={**os.environ, "PYTHONPATH": checkout}, capture_output=True, check=True)
                totals = next(line for line in out.read_text(errors="replace").splitlines() if line.startswith("totals:"))
                counts.append(int(totals.split()[1]) // n)
        print(f"{case:<12}" + "".join(f"{c:>16,}" for c in counts))
    return 0


def _callgrind_child(case: str, n: int) -> int:
    import os
    import subprocess

    driver = Driver()
    for _ in range(1100 if case in _CYCLING else 200):
        driver.one(case)
    gc.collect()
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True, check=True)
    for _ in range(n):
        driver.one(case)
    subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True, check=True)
    return 0


def _wrap_observer(timers: Timers) -> None:
    """The app's per-request observer (metrics, request log) is a closure set on the KubeAPI."""
    import mockapi.http.kube as kube

    original = kube.KubeAPI.__call__

    async def call(self, scope, receive, send):
        if self.observer is not None and not hasattr(self.observer, "__wrapped__"):
            self.observer = timers.wrap("observe", self.observer)
        await original(self, scope, receive, send)

    kube.KubeAPI.__call__ = call


if __name__ == "__main__":
    sys.exit(main())
