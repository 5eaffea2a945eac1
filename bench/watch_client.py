"""Watch fan-out client for bench/api.py: N raw-socket watchers plus W writers in one process.

Run it pinned to the client core (``taskset -c 1``); it prints one JSON line with the result.

* Opens N ``GET …/pods?watch=true&resourceVersion=RV`` streams and waits until every one has its
  200 response head (both servers register the watcher before they send it).
* W writers, each on its own keep-alive connection and one request at a time, alternate
  ``POST`` of a new pod and a merge ``PATCH`` of the pod they just created. Every write carries the
  annotation ``bench.mockapi/w: "<writer>:<seq>:<time.monotonic_ns()>"``, the clock read just
  before the request is written (CLOCK_MONOTONIC is shared by all processes on Linux), so the
  latency is write-to-receipt end to end, the write's own handling included.
* ``--mode flood``: closed-loop writers. ``--mode paced``: open loop at ``--rate`` writes/s in
  total (a writer that falls behind its schedule sends at once). Writers run ``--warmup`` seconds
  whose events are checked but not measured, then ``--seconds`` measured: latencies and
  deliveries/s count only events stamped after the warm-up (deliveries/s = those events ÷ the time
  from the end of the warm-up to the last receipt).
* Each watcher de-chunks its stream, finds every annotation and checks that each writer's ``seq``
  arrives exactly once and in order; at the end every watcher must have every acknowledged write.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from array import array

import orjson

MARK = b'"bench.mockapi/w":"'  # its value: "<writer>:<seq>:<monotonic ns>"
MARK_LEN = len(MARK)
now_ns = time.monotonic_ns


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc (0.0 if unreadable)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Tally:
    """What all watchers together received."""

    def __init__(self, writers: int) -> None:
        self.latencies = array("q")
        self.delivered = 0
        self.out_of_order = 0
        self.other_lines = 0
        self.errors: list[str] = []
        self.last_receipt = 0
        self.writers = writers
        self.measure_from = 1 << 62  # stamps before this are warm-up: checked, not measured


class WatchStream(asyncio.Protocol):
    """One watch connection: HTTP head, then chunked NDJSON de-chunked by hand."""

    def __init__(self, tally: Tally, request: bytes) -> None:
        self.tally = tally
        self.request = request
        self.head = b""
        self.started = asyncio.get_running_loop().create_future()
        self.raw = b""  # undecoded transfer bytes
        self.need = 0  # bytes left in the current chunk
        self.crlf = False  # a chunk's trailing CRLF is still due
        self.partial = b""  # payload after the last complete line
        self.last = [-1] * tally.writers
        self.received = 0
        self.ended = False
        self.streaming = False  # the 200 head has been read
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc) -> None:
        self.ended = True
        if not self.started.done():
            self.started.set_exception(ConnectionError(f"watch connection lost before the response: {exc}"))

    def data_received(self, data: bytes) -> None:
        now = now_ns()
        if not self.streaming:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            head, data = self.head[:end], self.head[end + 4 :]
            self.head = b""
            if not head.startswith(b"HTTP/1.1 200") or b"chunked" not in head.lower():
                self.started.set_exception(RuntimeError(f"watch refused: {head[:200]!r} {data[:500]!r}"))
                return
            self.started.set_result(True)
            self.streaming = True
            if not data:
                return
        if not (self.raw or self.need or self.crlf):  # fast path: exactly one whole chunk
            head_end = data.find(b"\r\n")
            if head_end > 0:
                size = int(data[:head_end].split(b";", 1)[0], 16)
                end = head_end + 2 + size
                if size and len(data) == end + 2:
                    self.consume(data[head_end + 2 : end], now)
                    return
        payload = self.dechunk(self.raw + data if self.raw else data)
        if payload:
            self.consume(payload, now)

    def dechunk(self, buf: bytes) -> bytes:
        parts, pos, size = [], 0, len(buf)
        while pos < size:
            if self.need:
                take = min(self.need, size - pos)
                parts.append(buf[pos : pos + take])
                pos += take
                self.need -= take
                if self.need:
                    break
                self.crlf = True
            if self.crlf:
                if size - pos < 2:
                    break
                pos += 2
                self.crlf = False
            line_end = buf.find(b"\r\n", pos)
            if line_end < 0:
                break
            chunk = int(buf[pos:line_end].split(b";", 1)[0], 16)
            pos = line_end + 2
            if chunk == 0:
                self.ended = True
                break
            self.need = chunk
        self.raw = buf[pos:]
        return b"".join(parts)

    def consume(self, payload: bytes, now: int) -> None:
        """Account every complete event line in ``payload`` (keeping a partial last line)."""
        if self.partial:
            payload = self.partial + payload
            self.partial = b""
        if payload[-1:] != b"\n":
            cut = payload.rfind(b"\n") + 1
            self.partial = payload[cut:]
            if not cut:
                return
            payload = payload[:cut]
        tally, last = self.tally, self.last
        lat, measure_from = tally.latencies, tally.measure_from
        find = payload.find
        found = line = 0
        size = len(payload)
        while line < size:
            line_end = find(b"\n", line)
            pos = find(MARK, line, line_end)
            if pos < 0:
                tally.other_lines += 1
                if payload.startswith(b'{"type":"ERROR"', line) and len(tally.errors) < 5:
                    tally.errors.append(payload[line:line_end][:300].decode("utf-8", "replace"))
            else:
                start = pos + MARK_LEN
                writer, seq, ts = payload[start : find(b'"', start)].split(b":")
                w, s, t = int(writer), int(seq), int(ts)
                if s != last[w] + 1:
                    tally.out_of_order += 1
                if s > last[w]:
                    last[w] = s
                if t >= measure_from:
                    lat.append(now - t)
                found += 1
            line = line_end + 1
        self.received += found
        tally.delivered += found
        tally.last_receipt = now


class Writer:
    """One keep-alive connection writing one request at a time."""

    def __init__(self, index: int, host: str, port: int, collection: str, template: bytes) -> None:
        self.index = index
        self.host, self.port = host, port
        self.collection = collection
        self.head, self.tail = template.split(b"__NAME__", 1)
        self.seq = 0  # acknowledged writes
        self.measured = 0  # acknowledged writes stamped after the warm-up
        self.measure_from = 1 << 62
        self.stamp = 0
        self.failure = ""

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def next_request(self) -> bytes:
        seq, w = self.seq, self.index
        name = f"w{w}-{seq // 2}".encode()
        self.stamp = now_ns()
        stamp = f"{w}:{seq}:{self.stamp}".encode()
        if seq % 2 == 0:
            body = (self.head + name + self.tail).replace(b"__STAMP__", stamp)
            return self._request(b"POST", self.collection, b"application/json", body)
        body = b'{"metadata":{"annotations":{"bench.mockapi/w":"' + stamp + b'"}}}'
        return self._request(b"PATCH", self.collection + b"/" + name, b"application/merge-patch+json", body)

    def _request(self, method: bytes, path: bytes, content_type: bytes, body: bytes) -> bytes:
        return (
            method + b" " + path + b" HTTP/1.1\r\nHost: " + self.host.encode() + b"\r\nContent-Type: " + content_type
            + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )

    async def write_once(self) -> bool:
        self.writer.write(self.next_request())
        head = await self.reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        body = await self.reader.readexactly(length)
        if not (head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.1 201")):
            method = "POST" if self.seq % 2 == 0 else "PATCH"
            status = head.split(b"\r\n", 1)[0].decode()
            self.failure = f"{method} seq {self.seq} -> {status}: {body[:500].decode('utf-8', 'replace')}"
            return False
        self.seq += 1
        self.measured += self.stamp >= self.measure_from
        return True

    async def flood(self, until: float) -> None:
        while time.monotonic() < until and await self.write_once():
            pass

    async def paced(self, start: float, interval: float, offset: float, until: float) -> None:
        k = 0
        while True:
            due = start + offset + k * interval
            if due >= until:
                return
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if not await self.write_once():
                return
            k += 1


def percentile(sorted_values, q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


async def open_watchers(args, tally: Tally, path: str) -> list[WatchStream]:
    loop = asyncio.get_running_loop()
    request = f"GET {path} HTTP/1.1\r\nHost: {args.host}\r\nAccept: application/json\r\n\r\n".encode()
    streams: list[WatchStream] = []
    for start in range(0, args.watchers, 100):
        batch = [WatchStream(tally, request) for _ in range(start, min(args.watchers, start + 100))]
        await asyncio.gather(*(loop.create_connection(lambda s=s: s, args.host, args.port) for s in batch))
        streams += batch
    await asyncio.wait_for(asyncio.gather(*(s.started for s in streams)), 30)
    return streams


async def run(args) -> dict:
    template = open(args.pod_template, "rb").read()
    collection = f"/api/v1/namespaces/{args.namespace}/pods"
    tally = Tally(args.writers)
    t_setup = time.monotonic()
    streams = await open_watchers(args, tally, f"{collection}?watch=true&resourceVersion={args.resource_version}&timeoutSeconds=3600")
    writers = [Writer(i, args.host, args.port, collection.encode(), template) for i in range(args.writers)]
    await asyncio.gather(*(w.connect() for w in writers))
    setup_s = time.monotonic() - t_setup

    start = time.monotonic()
    measure_start = start + args.warmup
    measure_from = now_ns() + int(args.warmup * 1e9)
    tally.measure_from = measure_from
    for w in writers:
        w.measure_from = measure_from
    until = measure_start + args.seconds
    cpu_marks: list = []  # (server, client) CPU seconds when the measured part starts
    asyncio.get_running_loop().call_later(args.warmup, lambda: cpu_marks.append((proc_cpu_seconds(args.server_pid), time.process_time())))
    if args.mode == "flood":
        await asyncio.gather(*(w.flood(until) for w in writers))
    else:
        interval = args.writers / args.rate
        await asyncio.gather(*(w.paced(start, interval, i / args.rate, until) for i, w in enumerate(writers)))
    writes_done = time.monotonic()
    writes = sum(w.seq for w in writers)
    expected = writes * args.watchers
    deadline = time.monotonic() + args.drain_timeout
    while tally.delivered < expected and time.monotonic() < deadline and not all(s.ended for s in streams):
        before = tally.delivered
        await asyncio.sleep(0.05)
        if tally.delivered == before and time.monotonic() > writes_done + 5:
            break  # nothing is arriving any more
    wall = time.monotonic() - measure_start
    server_cpu0, cpu0 = cpu_marks[0] if cpu_marks else (proc_cpu_seconds(args.server_pid), time.process_time())
    server_cpu = proc_cpu_seconds(args.server_pid) - server_cpu0
    client_cpu = time.process_time() - cpu0
    for s in streams:
        s.transport.close()
    for w in writers:
        w.writer.close()

    window_s = max(1e-9, (tally.last_receipt - measure_from) / 1e9) if tally.delivered else wall
    lat = sorted(tally.latencies)
    measured_writes = sum(w.measured for w in writers)
    incomplete = sum(1 for s in streams if s.received != writes)
    return {
        "mode": args.mode,
        "watchers": args.watchers,
        "writers": args.writers,
        "seconds": args.seconds,
        "warmup_s": args.warmup,
        "rate_target": args.rate if args.mode == "paced" else None,
        "writes": writes,
        "writes_per_s": measured_writes / max(1e-9, writes_done - measure_start),
        "expected_deliveries": expected,
        "delivered": tally.delivered,
        "delivered_per_s": len(lat) / window_s,
        "window_s": window_s,
        "p50_ms": percentile(lat, 0.50) / 1e6,
        "p99_ms": percentile(lat, 0.99) / 1e6,
        "max_ms": (lat[-1] / 1e6) if lat else float("nan"),
        "out_of_order_or_duplicate": tally.out_of_order,
        "watchers_incomplete": incomplete,
        "other_lines": tally.other_lines,
        "error_events": tally.errors,
        "write_failures": [w.failure for w in writers if w.failure],
        "complete": tally.delivered == expected and tally.out_of_order == 0 and incomplete == 0 and not tally.errors,
        "server_core_busy": server_cpu / wall if args.server_pid else None,
        "client_core_busy": client_cpu / wall,
        "setup_s": setup_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="watch fan-out client (see module docstring)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--namespace", default="bench-watch")
    parser.add_argument("--resource-version", default="0", help="the watch's resourceVersion (the list RV after set-up)")
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--mode", choices=("flood", "paced"), default="flood")
    parser.add_argument("--rate", type=float, default=100.0, help="paced: writes/s in total")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds of writing, after the warm-up")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of writing first, checked for completeness but not measured")
    parser.add_argument("--drain-timeout", type=float, default=20.0)
    parser.add_argument("--pod-template", required=True, help="Pod JSON with __NAME__ and __STAMP__ placeholders")
    parser.add_argument("--server-pid", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        result = runner.run(run(args))
    sys.stdout.write(orjson.dumps(result).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
