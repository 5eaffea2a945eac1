"""The ceiling twin: a bare ASGI app on the same uvicorn (uvloop + httptools, no access log).

It answers the same URLs the benchmark sends to mockapi, doing only the irreducible work, so every
mockapi figure can be read as a ratio measured in the same run (PERF.md §9):

* ``GET …/pods/{name}``  — the fixed bytes of one Pod (the bytes mockapi itself returned);
* ``GET …/pods``         — ``orjson.dumps`` of a PodList of 1,000 dicts on every request;
* ``POST …/pods``        — orjson parse, bump resourceVersion, store compact bytes, fan out ADDED;
* ``PATCH …/pods/{name}``— load, RFC 7386 merge, bump resourceVersion, store, fan out MODIFIED;
* ``GET …/pods?watch=1`` — chunked NDJSON; each event line is built once and shared; every watcher
  has a pending list and an ``asyncio.Event`` and sends everything pending in one ``send`` per
  wake-up (PERF.md §6 "coalesce"); a side task reads ``receive()`` for ``http.disconnect``;
* ``POST /api/v1/namespaces`` — echoed with 201, so set-up code is the same for both servers.

Run: ``python3 bench/ceiling.py --port 0 --get-body pod.json --list-body list.json``; it prints
``ceiling serving on http://127.0.0.1:PORT`` once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

import orjson

JSON_HEADERS = [(b"content-type", b"application/json")]


class WatchHub:
    """Registered watchers and the committed objects (compact bytes by name)."""

    def __init__(self) -> None:
        self.watchers: set[Watcher] = set()
        self.objects: dict[str, bytes] = {}
        self.rv = 1

    def commit(self, event_type: bytes, obj: dict) -> bytes:
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        raw = memoryview(orjson.dumps(obj)).tobytes()
        self.objects[obj["metadata"].get("name", "")] = raw
        line = b'{"type":"' + event_type + b'","object":' + raw + b"}\n"
        for watcher in self.watchers:
            watcher.offer(line)
        return raw


class Watcher:
    __slots__ = ("pending", "wakeup", "closed")

    def __init__(self) -> None:
        self.pending: list[bytes] = []
        self.wakeup = asyncio.Event()
        self.closed = False

    def offer(self, line: bytes) -> None:
        self.pending.append(line)
        self.wakeup.set()

    def take(self) -> bytes:
        chunk = b"".join(self.pending)
        self.pending.clear()
        self.wakeup.clear()
        return chunk


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


async def read_body(receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


async def send_bytes(send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": JSON_HEADERS + [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def make_app(*, get_body: bytes, list_doc: dict):
    hub = WatchHub()

    async def watch(receive, send) -> None:
        watcher = Watcher()
        hub.watchers.add(watcher)

        async def wait_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            watcher.closed = True
            watcher.wakeup.set()

        listener = asyncio.ensure_future(wait_disconnect())
        try:
            await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
            while not watcher.closed:
                await watcher.wakeup.wait()
                chunk = watcher.take()
                if chunk and not watcher.closed:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            hub.watchers.discard(watcher)
            listener.cancel()

    async def app(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        if method == "GET":
            if b"watch=" in scope["query_string"]:
                await watch(receive, send)
            elif path.endswith("/pods"):
                await send_bytes(send, 200, orjson.dumps(list_doc))
            else:
                await send_bytes(send, 200, get_body)
        elif method == "POST":
            obj = orjson.loads(await read_body(receive))
            if path.endswith("/pods"):
                await send_bytes(send, 201, hub.commit(b"ADDED", obj))
            else:
                await send_bytes(send, 201, orjson.dumps(obj))
        elif method == "PATCH":
            patch = orjson.loads(await read_body(receive))
            current = hub.objects.get(path.rsplit("/", 1)[1])
            if current is None:
                await send_bytes(send, 404, b'{"kind":"Status","code":404}')
                return
            await send_bytes(send, 200, hub.commit(b"MODIFIED", merge_patch(orjson.loads(current), patch)))
        else:
            await send_bytes(send, 405, b'{"kind":"Status","code":405}')

    return app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--get-body", help="file with the bytes served for GET of one object")
    parser.add_argument("--list-body", help="file with a PodList; its parsed form is re-serialized per LIST")
    args = parser.parse_args(argv)
    import uvicorn

    get_body = open(args.get_body, "rb").read() if args.get_body else b"{}"
    list_doc = orjson.loads(open(args.list_body, "rb").read()) if args.list_body else {"items": []}
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)  # listening before the banner: a client may connect as soon as it reads it
    config = uvicorn.Config(
        make_app(get_body=get_body, list_doc=list_doc), loop="uvloop", http="httptools", access_log=False, log_level="warning", lifespan="off"
    )
    print(f"ceiling serving on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    # Server.run, not asyncio.run(serve()): only run() installs the uvloop loop factory.
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
