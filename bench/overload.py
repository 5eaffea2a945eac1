"""The overload benchmark (issue 13, item 2): health-check latency and RSS while 2,000 connections flood
the server, then while hostile connections try to exhaust it without sending a request.

    python3 bench/overload.py [--connections 2000] [--seconds 15] [--root CHECKOUT] [--out results.json]

Starts ``mockapi serve --port 0 --no-allocator`` (on core 0 when there are two cores; the load on
core 1) with its default bounds, except ``--read-header-timeout 5`` so the hostile phase ends
within the run. Phases, each measured by a separate prober process (its own core share, so the
flood client's busy event loop does not inflate what it measures) that opens a new connection for
each ``GET /readyz`` and ``GET /livez`` every 20 ms, as a kubelet probe does, and samples the
server's RSS:

1. **idle**: 3 s, nothing else;
2. **flood**: ``--connections`` keep-alive connections, each sending back to back: a GET of one
   ConfigMap, then a create of ConfigMap ``flood-<n>`` (a 409 when it exists: then its delete),
   for ``--seconds``; responses are counted by status (429s are the in-flight bounds working);
3. **hostile**: ``--connections`` connections that send nothing, half a request line, or one
   header byte per second, plus 200 that send half of a 1 MiB header, for 8 s, then 4 s more
   after the read-header timeout closed them (RSS should come back down).

Goal (issue 13): ``/readyz`` and ``/livez`` p99 < 100 ms in every phase, RSS bounded.
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

ROOT = Path(__file__).resolve().parent.parent
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


# ------------------------------------------------------------------ the server
def start_server(root: Path, extra: list[str]) -> tuple[subprocess.Popen, str, int, int]:
    command = [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", "--log-level", "warning", "--read-header-timeout", "5", *extra]
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        command = ["taskset", "-c", "0", *command]
        os.sched_setaffinity(0, {1})
    if os.geteuid() == 0 and shutil.which("nice"):
        command = ["nice", "-n", "-10", *command]  # as bench/api.py: ahead of other tenants' work on a shared machine
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(root)})
    url = process.stdout.readline().split("serving on ", 1)[1].split()[0]
    host, port = url.removeprefix("http://").split(":")
    return process, host, int(port), process.pid


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU time used on the machine (all cores), from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def own_seconds() -> float:
    import resource

    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


class Foreign:
    """CPU used by processes other than the server, this client and its probers during a phase (in
    cores): a shared machine's other tenants, which no figure here can be compared without."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.start = (busy_seconds(), cpu_seconds(pid), own_seconds(), time.monotonic())

    def cores(self) -> float:
        busy, server, own, began = self.start
        spent = (busy_seconds() - busy) - (cpu_seconds(self.pid) - server) - (own_seconds() - own)
        return round(max(0.0, spent) / (time.monotonic() - began), 2)


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


# ------------------------------------------------------------------ the prober (a child process)
def probe(host: str, port: int, pid: int, seconds: float) -> dict:
    """New connection per probe, every 20 ms, alternating /readyz and /livez; RSS every 0.25 s."""
    import socket

    latencies: dict[str, list[float]] = {"/readyz": [], "/livez": []}
    slow: list[tuple[float, float]] = []  # (seconds into the phase, ms) of probes over 100 ms
    begun = time.monotonic()
    failures: dict[str, int] = {"/readyz": 0, "/livez": 0}
    rss: list[float] = []
    end = time.monotonic() + seconds
    next_rss = 0.0
    i = 0
    while time.monotonic() < end:
        path = ("/readyz", "/livez")[i % 2]
        i += 1
        started = time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=5) as sock:
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n".encode())
                data = b""
                while chunk := sock.recv(4096):
                    data += chunk
            ok = data.startswith(b"HTTP/1.1 200") and data.endswith(b"ok")
        except OSError:
            ok = False
        elapsed = (time.monotonic() - started) * 1000
        if elapsed > 100:
            slow.append((round(started - begun, 2), round(elapsed, 1)))
        if ok:
            latencies[path].append(elapsed)
        else:
            failures[path] += 1
        if time.monotonic() >= next_rss:
            rss.append(rss_mib(pid))
            next_rss = time.monotonic() + 0.25
        time.sleep(max(0.0, 0.02 - (time.monotonic() - started)))
    return {"latency_ms": {p: summary(v) for p, v in latencies.items()}, "failures": failures, "rss_mib": {"max": max(rss), "last": rss[-1], "first": rss[0]}, "slow": slow}


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    values = sorted(values)
    return {"n": len(values), "p50": round(statistics.median(values), 2), "p99": round(values[min(len(values) - 1, int(len(values) * 0.99))], 2), "max": round(values[-1], 2)}


def start_prober(host: str, port: int, pid: int, seconds: float) -> subprocess.Popen:
    code = f"import json, sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import overload; print(json.dumps(overload.probe({host!r}, {port}, {pid}, {seconds})))"
    command = [sys.executable, "-c", code]
    if os.geteuid() == 0 and shutil.which("nice"):
        command = ["nice", "-n", "-10", *command]
    # on every core: the flood client saturates core 1, the server leaves room on core 0
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, preexec_fn=lambda: os.sched_setaffinity(0, range(os.cpu_count() or 1)))


def finish(prober: subprocess.Popen) -> dict:
    out, _ = prober.communicate(timeout=120)
    return json.loads(out)


# ------------------------------------------------------------------ the flood
async def flood(host: str, port: int, connections: int, seconds: float) -> dict:
    counts: dict[int, int] = {}
    end = time.monotonic() + seconds

    async def one(n: int) -> None:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            counts[-1] = counts.get(-1, 0) + 1
            return
        name = f"flood-{n}"
        body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).encode()
        requests = {
            "get": f"GET {CONFIGMAPS}/seed HTTP/1.1\r\nHost: f\r\n\r\n".encode(),
            "create": f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: f\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body,
            "delete": f"DELETE {CONFIGMAPS}/{name} HTTP/1.1\r\nHost: f\r\n\r\n".encode(),
        }
        try:
            while time.monotonic() < end:
                for verb in ("get", "create"):
                    writer.write(requests[verb])
                    code = await response(reader)
                    counts[code] = counts.get(code, 0) + 1
                    if verb == "create" and code == 409:
                        writer.write(requests["delete"])
                        code = await response(reader)
                        counts[code] = counts.get(code, 0) + 1
        except (OSError, asyncio.IncompleteReadError, ValueError):
            counts[-2] = counts.get(-2, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(one(n) for n in range(connections)))
    return {str(k): v for k, v in sorted(counts.items())}


async def response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    code = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    await reader.readexactly(length)
    return code


# ------------------------------------------------------------------ the hostile connections
async def hostile(host: str, port: int, connections: int, seconds: float) -> dict:
    kinds = (b"", b"GET /api/v1/names", b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    opened = closed = 0
    writers = []

    async def slow(n: int) -> None:
        nonlocal opened, closed
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            return
        opened += 1
        writers.append(writer)
        writer.write(kinds[n % 3])
        try:
            while True:
                try:
                    if await asyncio.wait_for(reader.read(1), 1.0) == b"":
                        closed += 1
                        return
                except asyncio.TimeoutError:
                    if n % 3 == 2:
                        writer.write(b"a")  # one header byte per second
        except OSError:
            closed += 1

    async def big_header() -> None:
        nonlocal opened, closed
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            return
        opened += 1
        writers.append(writer)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (512 * 1024))
        try:
            if await reader.read(1) == b"":
                closed += 1
        except OSError:
            closed += 1

    tasks = [asyncio.ensure_future(slow(n)) for n in range(connections)] + [asyncio.ensure_future(big_header()) for _ in range(200)]
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for writer in writers:
        writer.close()
    return {"opened": opened, "closed_by_server": closed}


# ------------------------------------------------------------------ the hot path
def hot_path(runs: int = 15, requests: int = 5000) -> dict:
    """CPU per GET of one object through uvicorn's httptools protocol in this process (a fake
    transport, no sockets: what the protections add is a few microseconds, which socket benchmarks
    on a shared machine cannot resolve): the plain protocol and the bare app (before) against the
    guarded protocol with admission, deadline and header limits (after), interleaved, medians."""
    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    from uvicorn.server import ServerState

    from mockapi import app as app_
    from mockapi.http import connections
    from mockapi.settings import Settings

    class Transport(asyncio.Transport):
        def __init__(self) -> None:
            super().__init__()
            self.closing = False

        def get_extra_info(self, name, default=None):
            return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 80)}.get(name, default)

        def write(self, data) -> None:
            pass

        def is_closing(self) -> bool:
            return self.closing

        def close(self) -> None:
            self.closing = True

        abort = close

        def pause_reading(self) -> None:
            pass

        resume_reading = pause_reading

    server = app_.build(Settings(log_level="warning"))
    loop = asyncio.new_event_loop()
    guard = connections.Guard(server.admission, max_connections=10_000, read_header_timeout=32, max_header_bytes=1 << 20, write_stall_timeout=60)
    variants = {"before": HttpToolsProtocol, "after": connections.protocol_class(guard)}
    configs = {}
    for name, protocol in variants.items():
        configs[name] = uvicorn.Config(server.app, http=protocol, lifespan="off", log_level="warning", log_config=None)
        configs[name].load()
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}'
    post = f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    get = f"GET {CONFIGMAPS}/c HTTP/1.1\r\nHost: x\r\n\r\n".encode()

    async def drive(name: str, request: bytes, n: int) -> float:
        state = ServerState()
        protocol = variants[name](config=configs[name], server_state=state, app_state={}, _loop=loop)
        protocol.connection_made(Transport())
        started = time.process_time()
        for _ in range(n):
            protocol.data_received(request)
            while state.tasks:
                await asyncio.sleep(0)
        return (time.process_time() - started) / n * 1e6

    loop.run_until_complete(drive("after", post, 1))
    spent: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name in variants:
            spent[name].append(loop.run_until_complete(drive(name, get, requests)))
    before, after = (statistics.median(spent[name]) for name in variants)
    return {"before_us": round(before, 1), "after_us": round(after, 1), "added_us": round(after - before, 1), "ratio": round(after / before, 3)}


# ------------------------------------------------------------------ the run
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server runs (default: this one)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--hot-path", action="store_true", help="only measure the CPU the protections add per request, in process")
    parser.add_argument("server_args", nargs="*", help="more `mockapi serve` flags (after --)")
    args = parser.parse_args()
    if args.hot_path:
        sys.path.insert(0, str(args.root))
        result = hot_path()
        print(f"CPU per GET through the httptools protocol: {result['before_us']} µs before, {result['after_us']} µs after (+{result['added_us']} µs, {result['ratio']}x)")
        return 0
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass
    server, host, port, pid = start_server(args.root, args.server_args)
    results: dict = {"connections": args.connections, "seconds": args.seconds, "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        import urllib.request

        seed = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seed"}, "data": {"k": "v" * 2000}}).encode()
        urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}{CONFIGMAPS}", data=seed, headers={"Content-Type": "application/json"}))
        foreign = Foreign(pid)
        results["idle"] = {**finish(start_prober(host, port, pid, 3.0)), "foreign_cores": foreign.cores()}
        prober, foreign = start_prober(host, port, pid, args.seconds), Foreign(pid)
        cpu = cpu_seconds(pid)
        results["flood"] = {"responses": asyncio.run(flood(host, port, args.connections, args.seconds)), **finish(prober), "foreign_cores": foreign.cores()}
        results["flood"]["server_cpu_share"] = round((cpu_seconds(pid) - cpu) / args.seconds, 2)
        prober, foreign = start_prober(host, port, pid, 12.0), Foreign(pid)
        results["hostile"] = {**asyncio.run(hostile(host, port, args.connections, 8.0)), **finish(prober), "foreign_cores": foreign.cores()}
        results["rss_mib_end"] = round(rss_mib(pid), 1)
        results["server_alive"] = server.poll() is None
    finally:
        server.terminate()
        results["exit_code"] = server.wait(timeout=30)
    report(results)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


def report(results: dict) -> None:
    print(f"mockapi overload benchmark — {results['date']} — {results['connections']} connections")
    print(f"{'phase':10} {'probe':8} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'failed':>6}   RSS MiB first/max/last   foreign CPU (cores)")
    for phase in ("idle", "flood", "hostile"):
        data = results[phase]
        for path, stats in data["latency_ms"].items():
            rss = data["rss_mib"]
            print(f"{phase:10} {path:8} {stats.get('n', 0):>5} {stats.get('p50', '-'):>8} {stats.get('p99', '-'):>8} {stats.get('max', '-'):>8} {data['failures'][path]:>6}   "
                  f"{rss['first']:.0f}/{rss['max']:.0f}/{rss['last']:.0f}{'':17}{data['foreign_cores']:.2f}")  # fmt: skip
    print(f"flood responses by status: {results['flood']['responses']}; server busy {results['flood']['server_cpu_share']:.0%} of a core")
    print(f"hostile: {results['hostile']['opened']} opened, {results['hostile']['closed_by_server']} closed by the server")
    print(f"RSS at the end: {results['rss_mib_end']} MiB; server alive: {results['server_alive']}; exit code on SIGTERM: {results['exit_code']}")


if __name__ == "__main__":
    sys.exit(main())
