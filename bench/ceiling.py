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
* ``POST /api/v1/namespaces`` — echoed with 201, so set-up code is the same for both servers;
* ``POST /floor/namespaces/{ns}/pods`` — the *floor* of a Pod create (:class:`Floor`): the steps
  no Kubernetes create of the bench's Pod can skip, each done the leanest way, so a write's ratio
  to it says how far mockapi is from what Python on this stack can do at all (not a goal: a
  reference for the write goals, which are ratios to the plain POST).

Run: ``python3 bench/ceiling.py --port 0 --get-body pod.json --list-body list.json``; it prints
``ceiling serving on http://127.0.0.1:PORT`` once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import socket
import sys
import time
import uuid

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


_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


class Floor:
    """A Pod create reduced to what none can skip, on the same HTTP stack as the twin's POST.

    Done per request: the JSON parse and the duplicate-key screen (a re-encoding compared with
    the body); the body's type meta, name (DNS-1123 subdomain) and labels (qualified-name keys,
    label values); the spec's defaults and validation looked up by the spec's JSON (as mockapi's
    create verdicts do: every bench create hits, so this is a dict lookup); the ServiceAccount
    admission (the account looked up; a copy of the spec with the token volume, its name's random
    suffix, mounted in each container); the status; the system metadata (uid, creationTimestamp,
    resourceVersion) and one managedFields entry, whose field set is the memo's; the
    already-exists check; the encoding, kept as the stored bytes; the ADDED line offered to
    watchers; the 201.

    Left out, all of which mockapi does: query options (dryRun, fieldManager, fieldValidation),
    annotation, owner-reference and finalizer rules, the metadata's field set, pruning of unknown
    metadata fields, namespace and priority admission, the stored-depth bound, label and field
    indexes, packing of stored bytes, metrics, the request log, the overload guard, warnings and
    every error path but the name's. So a real create costs more than this: it is a floor."""

    def __init__(self, hub: WatchHub) -> None:
        self.hub = hub
        self.objects: dict[tuple[str, str], bytes] = {}
        self.accounts = {("bench", "api"), ("bench", "default")}
        self.verdicts: dict[bytes, tuple[bytes, dict]] = {}

    def create(self, namespace: str, raw: bytes, agent: str) -> tuple[int, bytes]:
        obj = orjson.loads(raw)
        encoded = orjson.dumps(obj)
        if encoded != raw and raw.count(b":") > encoded.count(b":"):
            return 400, b'{"kind":"Status","code":400,"message":"duplicate field"}'
        if type(obj) is not dict or obj.get("apiVersion") != "v1" or obj.get("kind") != "Pod" or type(obj.get("metadata")) is not dict:
            return 400, b'{"kind":"Status","code":400}'
        meta = obj["metadata"]
        name = meta.get("name")
        if type(name) is not str or len(name) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(name):
            return 422, b'{"kind":"Status","code":422,"reason":"Invalid"}'
        for key, value in (meta.get("labels") or {}).items():
            if type(value) is not str or len(value) > 63 or not _LABEL_VALUE.fullmatch(value) or not _QUALIFIED_NAME.fullmatch(key):
                return 422, b'{"kind":"Status","code":422,"reason":"Invalid"}'
        key = orjson.dumps(obj.get("spec"))
        verdict = self.verdicts.get(key)
        if verdict is None:  # the first create of this spec: no validation here, the memo's shape only
            fields = {"f:spec": {f"f:{k}": {} for k in obj.get("spec") or {}}, "f:metadata": {"f:labels": {}}}
            verdict = self.verdicts[key] = (memoryview(key).tobytes(), fields)
        spec = orjson.loads(verdict[0])  # the write's own copy, for the admission to change
        account = spec.get("serviceAccountName") or "default"
        if (namespace, account) not in self.accounts:
            return 403, b'{"kind":"Status","code":403,"reason":"Forbidden"}'
        if spec.get("automountServiceAccountToken") is not False:
            volume = "kube-api-access-" + "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
            spec["volumes"] = [*(spec.get("volumes") or ()), {"name": volume, "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]
            for container in spec.get("containers") or ():
                container["volumeMounts"] = [*(container.get("volumeMounts") or ()), {"mountPath": _TOKEN_PATH, "name": volume, "readOnly": True}]
        obj["spec"] = spec
        obj["status"] = {"phase": "Pending", "qosClass": "Burstable"}
        if (namespace, name) in self.objects:
            return 409, b'{"kind":"Status","code":409,"reason":"AlreadyExists"}'
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.hub.rv += 1
        meta["namespace"], meta["uid"], meta["resourceVersion"], meta["creationTimestamp"] = namespace, str(uuid.uuid4()), str(self.hub.rv), now
        meta["managedFields"] = [{"manager": agent, "operation": "Update", "apiVersion": "v1", "time": now, "fieldsType": "FieldsV1",
                                  "fieldsV1": verdict[1]}]
        raw = memoryview(orjson.dumps(obj)).tobytes()
        self.objects[(namespace, name)] = raw
        line = b'{"type":"ADDED","object":' + raw + b"}\n"
        for watcher in self.hub.watchers:
            watcher.offer(line)
        return 201, raw


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
    floor = Floor(hub)

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
            if path.startswith("/floor/"):  # /floor/namespaces/{ns}/pods
                agent = dict(scope["headers"]).get(b"user-agent", b"").decode("latin-1").split("/", 1)[0] or "unknown"
                await send_bytes(send, *floor.create(path.split("/")[3], await read_body(receive), agent))
                return
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
