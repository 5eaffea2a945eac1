"""The API as controllers see it: a small :class:`Client` protocol and two implementations.

- :class:`LocalClient` calls the registry in-process (the embedded default, inside ``mockapi serve``);
  it must be used from the server's event loop, where the registry lives. Each built-in controller's
  has its identity (:mod:`mockapi.auth.identities`): authorized in RBAC mode, audited with the audit log.
- :class:`KubeClient` talks to any API server through the official ``kubernetes`` client (blocking
  calls run in ``asyncio.to_thread``; each watch streams in a daemon thread).

Objects are plain dicts. Kinds are named by :class:`Kind` (apiVersion + kind); each client maps them
to resources itself. API errors are :class:`mockapi.errors.StatusError` with the server's code,
reason and message. :meth:`Client.watch` is an informer's event source: it lists, yields an ADDED
event per object and one SYNCED event, then the changes; it resumes after disconnects and, when the
server answers 410 Gone (or the local watcher fell behind), relists and yields the difference, so a
consumer's view never misses an event. In process, a writer that announces its write
(:meth:`LocalClient.patch_unread` with ``echo``) gets an ECHO event in that write's place on the
watches of its own client that asked for echoes (``watch(..., echoes=True)``), so it need not parse
what it wrote (the allocator's pool counts); every other watch sees the write's MODIFIED event.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import threading
import time
import weakref
from dataclasses import dataclass
from typing import AsyncIterator, Protocol

import orjson

from mockapi import errors, gvk, watchwire
from mockapi.event_correlator import EventCorrelator
from mockapi.watchwire import event_line

log = logging.getLogger("mockapi.client")

ADDED, MODIFIED, DELETED, SYNCED = "ADDED", "MODIFIED", "DELETED", "SYNCED"
ECHO = "ECHO"  # in-process only: a write of the watcher's own, announced by its writer (LocalClient.patch_unread)
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"


@dataclass(frozen=True)
class Kind:
    api_version: str
    kind: str

    @property
    def group(self) -> str:
        return gvk.parse_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        return gvk.parse_api_version(self.api_version)[1]

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind


EVENTS = Kind("v1", "Event")
PODS = Kind("v1", "Pod")


def binding(name: str, uid: str, node_name: str) -> dict:
    """The v1 Binding kube-scheduler POSTs to ``pods/{name}/binding`` (the uid guards against a
    pod deleted and made again under the same name)."""
    meta = {"name": name, "uid": uid} if uid else {"name": name}
    return {"apiVersion": "v1", "kind": "Binding", "metadata": meta, "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}


@dataclass
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED, or SYNCED (the initial list has been delivered; object None); ECHO: see LocalClient
    object: dict | None  # for ECHO, what its writer said to hand back (not the object)


async def patch_unanswered(client: "Client", kind: Kind, namespace: str, name: str, patch: dict, *, subresource: str = "") -> None:
    """A merge patch whose answer the writer never reads: the in-process client does not parse the
    written object back (:meth:`LocalClient.patch_unread`; a pod is several KB), any other client
    patches as usual. Errors are raised as :meth:`Client.patch` raises them."""
    unread = getattr(client, "patch_unread", None)
    if unread is not None:
        await unread(kind, namespace, name, patch, subresource=subresource)
    else:
        await client.patch(kind, namespace, name, patch, subresource=subresource)


class Client(Protocol):
    async def get(self, kind: Kind, namespace: str, name: str) -> dict: ...
    async def list(self, kind: Kind, namespace: str = "") -> tuple[list[dict], str]: ...
    def watch(self, kind: Kind, namespace: str = "", *, echoes: bool = False) -> AsyncIterator[WatchEvent]: ...
    async def create(self, kind: Kind, obj: dict) -> dict: ...
    async def update(self, kind: Kind, obj: dict) -> dict: ...
    async def update_status(self, kind: Kind, obj: dict) -> dict: ...
    async def patch(self, kind: Kind, namespace: str, name: str, patch: dict, *, subresource: str = "") -> dict: ...  # JSON merge patch
    async def delete(self, kind: Kind, namespace: str, name: str, *, propagation_policy: str = "", grace_period_seconds: int | None = None) -> None: ...
    async def create_event(self, event: dict) -> None: ...
    async def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None: ...  # POST pods/{name}/binding


def _key(obj: dict) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


class _View:
    """What a watch consumer has been told: key → (resourceVersion, apiVersion, kind) — scalars,
    not objects. Turns a relist into the events that bring the consumer up to date (ADDED,
    MODIFIED, and DELETED with the vanished object's identity)."""

    def __init__(self) -> None:
        self.known: dict[tuple[str, str], tuple[str, str, str]] = {}

    def relist(self, items: list[dict]) -> list[WatchEvent]:
        events, seen = [], set()
        for obj in items:
            key = _key(obj)
            seen.add(key)
            before = self.known.get(key)
            if before is None or before[0] != obj["metadata"].get("resourceVersion"):
                events.append(WatchEvent(ADDED if before is None else MODIFIED, obj))
        events += [WatchEvent(DELETED, self._tombstone(key)) for key in sorted(set(self.known) - seen)]
        for event in events:
            self.track(event)
        return events

    def _tombstone(self, key: tuple[str, str]) -> dict:
        rv, api_version, kind = self.known[key]
        meta = {"name": key[1], "resourceVersion": rv}
        if key[0]:
            meta["namespace"] = key[0]
        return {"apiVersion": api_version, "kind": kind, "metadata": meta}

    def track(self, event: WatchEvent) -> None:
        key = _key(event.object)
        if event.type == DELETED:
            self.known.pop(key, None)
        else:
            obj = event.object
            self.known[key] = (obj["metadata"].get("resourceVersion", ""), obj.get("apiVersion", ""), obj.get("kind", ""))


# ===================================================================== in-process
MAX_ECHOES = 4096  # writes announced to a client's watch of one kind and not yet seen, at most
_RV_KEY = b'"resourceVersion":"'


def _echo_of(echoes: dict[int, list], chunk: bytes) -> tuple | None:
    """The announced echo whose event ``chunk`` is (taken out of the book), or None."""
    bucket = echoes.get(len(chunk))
    if bucket:
        for index, echo in enumerate(bucket):
            if echo[0] == chunk:
                del bucket[index]
                if not bucket:
                    del echoes[len(chunk)]
                return echo
    return None


class EventSink:
    """The Events in-process controllers recorded, written off the controller's path — as
    client-go's recorder hands Events to a goroutine of their own (kube-scheduler binds, the
    kubelet starts pods, while their Events are sent): at the loop's next turn, or in a burst when
    the loop has nothing else to do. Each Event
    is written as recorded (its timestamps and name were taken then), in order, none dropped: a
    backlog past :data:`MAX_BACKLOG` is written at once, and whatever remains when the loop stops
    is written by the task's ``finally``.

    "Nothing else to do" is measured, not asked of the loop (uvloop has no ready queue to look at):
    a ``sleep(0)`` that comes back within :data:`IDLE_ROUND_TRIP` seconds found no other callback
    ready. That wait is for bursts only: while fewer than :data:`BURST` Events were recorded in the
    last :data:`WINDOW` seconds (a user's pods, a test's scenario), each is written at the next turn
    of the loop, once the step that recorded it is done — a client that sees a pod's status then
    lists its Events finds them, as it does on a cluster that is not flooded (a loaded machine
    stretches a ``sleep(0)`` past the idle mark without the loop being busy).
    One sink per registry: the controllers' clients share it."""

    IDLE_ROUND_TRIP = 0.0003  # seconds: a yield back this soon ran nothing else
    BUSY_WAIT = 0.002  # seconds between two looks while the loop is busy
    BATCH = 8  # Events written per idle turn (~1 ms), then another look
    MAX_BACKLOG = 20_000  # Events waiting at most (a few tens of MB); past it, written at once
    WINDOW = 0.1  # seconds: the span in which Events are counted to tell a burst
    BURST = 20  # Events recorded in one window that make it a burst (200/s)

    def __init__(self) -> None:
        self.backlog: collections.deque = collections.deque()
        self._task: asyncio.Task | None = None
        self._window_start = 0.0
        self._window_count = 0
        self._last_count = 0  # the window before the current one (a burst goes on across windows)

    def add(self, write) -> None:
        """Write later: ``write()`` (a callable that writes one Event) at the next turn, or in a
        burst when the loop is idle."""
        if len(self.backlog) >= self.MAX_BACKLOG:
            self._write_one()
        now = time.monotonic()
        if now - self._window_start > self.WINDOW:  # a new window; the last one counts while it is recent
            recent = now - self._window_start <= 2 * self.WINDOW
            self._last_count = self._window_count if recent else 0
            self._window_start, self._window_count = now, 0
        self._window_count += 1
        self.backlog.append(write)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    def __len__(self) -> int:
        return len(self.backlog)

    def _bursting(self) -> bool:
        """Whether Events came in a burst lately: :data:`BURST` in the current window or the one
        before it (the window rolls on every :data:`WINDOW` seconds of recording)."""
        if time.monotonic() - self._window_start > 2 * self.WINDOW:
            return False
        return max(self._window_count, self._last_count) >= self.BURST

    def flush(self) -> None:
        """Write every waiting Event now."""
        while self.backlog:
            self._write_one()

    def _write_one(self) -> None:
        write = self.backlog.popleft()
        try:
            write()
        except errors.StatusError as exc:  # Events are best effort, as in client-go's recorder
            log.debug("could not record an event: %s", exc)
        except Exception:  # noqa: BLE001 - one Event never stops the others
            log.exception("could not record an event")

    async def _drain(self) -> None:
        clock = time.perf_counter
        try:
            while self.backlog:
                began = clock()
                await asyncio.sleep(0)
                if self._bursting() and clock() - began > self.IDLE_ROUND_TRIP:
                    await asyncio.sleep(self.BUSY_WAIT)
                    continue
                for _ in range(min(self.BATCH, len(self.backlog))):
                    self._write_one()
        finally:
            self.flush()  # cancelled (the loop is stopping): nothing recorded is lost


_sinks: "weakref.WeakKeyDictionary[object, EventSink]" = weakref.WeakKeyDictionary()


def event_sink(registry) -> EventSink:
    """The registry's :class:`EventSink` (made on first use)."""
    sink = _sinks.get(registry)
    if sink is None:
        sink = _sinks[registry] = EventSink()
    return sink


class LocalClient:
    """The registry, in-process. Call it only from the event loop the registry runs in.

    ``identity`` (a :class:`mockapi.auth.identities.Identity`): who calls — a built-in controller's
    ServiceAccount. With an ``authorizer`` (the server's, in RBAC mode) each call is authorized as
    its HTTP request would be, a refusal raising kube's 403; with an ``audit`` log its writes are
    audited under that identity. With neither (the default) the calls go straight to the registry.

    ``defer_events``: :meth:`create_event` leaves the Event to the registry's :class:`EventSink`
    (written at the loop's next turn, or when it is idle in a burst) instead of writing it before
    it returns — the built-in controllers' clients in a server; off by default (a test reads the
    Events it caused at once)."""

    def __init__(self, registry, identity=None, *, authorizer=None, audit=None, defer_events: bool = False) -> None:
        from mockapi.registry import options, rest

        self.registry = registry
        self.identity = identity
        self._sink = event_sink(registry) if defer_events else None
        self._correlator = EventCorrelator()  # this client's recorder's (one per controller, as one per component in kube)
        self._options, self._rest = options, rest
        self._guard = None
        # the books of the watches that asked for echoes, per kind: line length → [(line, key, rv, echo)]
        self._echoes: dict[Kind, list[dict[int, list]]] = {}
        if identity is not None and (authorizer is not None or audit is not None):
            from mockapi.auth.identities import Guard

            self._guard = Guard(identity, authorizer=authorizer, audit=audit)

    def _rt(self, kind: Kind):
        rt = self.registry.types.by_kind(kind.group, kind.version, kind.kind)
        if rt is None:
            raise errors.StatusError(404, "NotFound", f"the server could not find the requested resource ({kind})")
        return rt

    def _write_options(self):
        return self._options.WriteOptions(field_validation="Strict")

    async def get(self, kind: Kind, namespace: str, name: str) -> dict:
        rt = self._rt(kind)
        if self._guard is not None:
            self._guard.check("get", rt, namespace, name)
        return self.registry.get(rt, namespace, name).load()

    async def list(self, kind: Kind, namespace: str = "") -> tuple[list[dict], str]:
        rt = self._rt(kind)
        if self._guard is not None:
            self._guard.check("list", rt, namespace)
        page = self.registry.list(rt, namespace, self._options.ListOptions())
        return [stored.load() for stored in page.items], str(page.resource_version)

    async def create(self, kind: Kind, obj: dict) -> dict:
        rt, namespace = self._rt(kind), obj["metadata"].get("namespace", "")
        if self._guard is not None:
            return self._guard.write("create", rt, namespace, "", lambda: self._create(rt, namespace, obj), body=obj, code=201)
        return self._create(rt, namespace, obj)

    def _create(self, rt, namespace: str, obj: dict) -> dict:
        return orjson.loads(self.registry.create(rt, namespace, obj, self._write_options()).raw)

    async def update(self, kind: Kind, obj: dict, *, subresource: str = "") -> dict:
        rt, (namespace, name) = self._rt(kind), _key(obj)
        if self._guard is not None:
            return self._guard.write("update", rt, namespace, name, lambda: self._update(rt, namespace, name, obj, subresource), subresource=subresource, body=obj)
        return self._update(rt, namespace, name, obj, subresource)

    def _update(self, rt, namespace: str, name: str, obj: dict, subresource: str) -> dict:
        return orjson.loads(self.registry.update(rt, namespace, name, obj, self._write_options(), subresource=subresource).raw)

    async def update_status(self, kind: Kind, obj: dict) -> dict:
        return await self.update(kind, obj, subresource="status")

    async def patch(self, kind: Kind, namespace: str, name: str, patch: dict, *, subresource: str = "") -> dict:
        rt = self._rt(kind)
        if self._guard is not None:
            return self._guard.write("patch", rt, namespace, name, lambda: self._patch(rt, namespace, name, patch, subresource), subresource=subresource, body=patch)
        return self._patch(rt, namespace, name, patch, subresource)

    def _patch(self, rt, namespace: str, name: str, patch: dict, subresource: str) -> dict:
        return orjson.loads(self.registry.patch(rt, namespace, name, self._rest.MERGE_PATCH, *self._handed_over(patch), subresource=subresource).raw)

    def _handed_over(self, patch: dict) -> tuple[dict, object]:
        """A copy of ``patch`` the registry may keep, and options that say so: the patched object is
        then the registry's own, and the other in-process watchers read it as written instead of
        parsing the event (WriteOptions.owned). A controller's patch is a few hundred bytes; the
        objects they patch (pods, pools) are several KB."""
        opts = self._write_options()
        opts.owned = True
        return orjson.loads(orjson.dumps(patch)), opts

    async def patch_unread(self, kind: Kind, namespace: str, name: str, patch: dict, *, subresource: str = "", echo=None) -> None:
        """:meth:`patch` without reading the answer back, for a writer that never looks at it (the
        allocator's ``status.availableDevices``): parsing the written object (a DevicePool's few KB)
        cost as much as a tenth of the write. Audited as its HTTP twin (with the answer) when audited.

        ``echo`` (not None): this client's watch of ``kind`` yields ``WatchEvent(ECHO, echo)`` in
        place of the write's MODIFIED event, at its place in the stream, without parsing it — for a
        writer whose handler knows what its own write changed (the allocator: one pool's status,
        never its spec). Only a write that changed the object has an event to replace, and only the
        watches of this client that asked for echoes (``watch(..., echoes=True)``: the allocator's
        pool informer) see it; any other watch gets the MODIFIED event. A watch that falls behind
        relists, and the write comes back as the relist's MODIFIED, as before."""
        if self._guard is not None:
            await self.patch(kind, namespace, name, patch, subresource=subresource)
            return
        rt = self._rt(kind)
        before = self.registry.get(rt, namespace, name).raw if echo is not None else None
        written = self.registry.patch(rt, namespace, name, self._rest.MERGE_PATCH, *self._handed_over(patch), subresource=subresource)
        if echo is not None and written.raw != before:
            self._expect_echo(kind, (namespace, name), written.raw, echo)

    def _expect_echo(self, kind: Kind, key: tuple[str, str], raw: bytes, echo) -> None:
        books = self._echoes.get(kind)
        if not books or raw.count(_RV_KEY) != 1:
            return  # no watch asked; or metadata's resourceVersion not the only one (an odd annotation): parsed as any event
        start = raw.index(_RV_KEY) + len(_RV_KEY)
        rv = raw[start:raw.index(b'"', start)].decode()
        line = event_line(MODIFIED, raw)
        for book in books:
            if sum(map(len, book.values())) >= MAX_ECHOES:  # echoes a stalled watch never took: forget them (parsed as any event)
                book.clear()
            book.setdefault(len(line), []).append((line, key, rv, echo))

    async def delete(self, kind: Kind, namespace: str, name: str, *, propagation_policy: str = "", grace_period_seconds: int | None = None) -> None:
        rt = self._rt(kind)
        opts = self._options.DeleteOptions(propagation_policy=propagation_policy, grace_period_seconds=grace_period_seconds)
        if self._guard is not None:
            self._guard.write("delete", rt, namespace, name, lambda: self.registry.delete(rt, namespace, name, opts))
            return
        self.registry.delete(rt, namespace, name, opts)

    async def create_event(self, event: dict) -> None:
        """Record ``event`` as client-go's recorder does: correlated with the Events this client
        recorded before (:mod:`mockapi.event_correlator`: a repeat patches the first one's
        ``count``, similar ones are combined, a flood about one object is dropped), then written
        without reading the answer back (nobody reads a recorded Event's). With ``defer_events``,
        later (:class:`EventSink`, which keeps the order, so the correlation is the one the writes
        happen in), its errors logged rather than raised."""
        if self._sink is not None:
            self._sink.add(lambda: self._write_event(event))
            return
        self._write_event(event)

    def _write_event(self, event: dict) -> None:
        correlated = self._correlator.correlate(event)
        if correlated is None:
            return  # the spam filter's: not written at all
        event = correlated.event
        rt, namespace = self._rt(EVENTS), event["metadata"].get("namespace", "")
        if correlated.patch is not None:  # a repeat: count it on the Event written first
            try:
                self._patch_event(rt, namespace, event["metadata"]["name"], correlated.patch)
                return
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
            # deleted since (a reset, a TTL): made again under its name, with the count so far (client-go's recordEvent)
        if self._guard is not None:  # audited as its HTTP twin: with the answer
            self._guard.write("create", rt, namespace, "", lambda: self._create(rt, namespace, event), body=event, code=201)
            return
        self.registry.create(rt, namespace, event, self._write_options())

    def _patch_event(self, rt, namespace: str, name: str, patch: dict) -> None:
        """The strategic merge patch client-go's recorder sends for a repeated Event."""
        def write():
            return self.registry.patch(rt, namespace, name, self._rest.STRATEGIC_PATCH, patch, self._write_options())

        if self._guard is not None:  # audited as its HTTP twin: with the answer
            self._guard.write("patch", rt, namespace, name, lambda: orjson.loads(write().raw), body=patch)
            return
        write()

    async def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        rt, body = self._rt(PODS), binding(name, uid, node_name)
        opts = self._write_options()
        opts.owned = True  # the binding is made here and kept by nobody
        if self._guard is not None:
            self._guard.write("create", rt, namespace, name, lambda: self.registry.bind(rt, namespace, name, body, opts), subresource="binding", body=body, code=201)
            return
        self.registry.bind(rt, namespace, name, body, opts)

    async def watch(self, kind: Kind, namespace: str = "", *, echoes: bool = False) -> AsyncIterator[WatchEvent]:
        """``echoes``: this client's announced writes of ``kind`` come as ECHO events (:meth:`patch_unread`)."""
        view, synced = _View(), False
        book: dict[int, list] = {}  # the writes announced to this watch (only when it asked for echoes)
        if echoes:
            self._echoes.setdefault(kind, []).append(book)
        try:
            while True:
                rt = self._rt(kind)
                if self._guard is not None:
                    self._guard.check("list", rt, namespace)
                page = self.registry.list(rt, namespace, self._options.ListOptions())
                book.clear()  # the list has every write announced so far (list and watch below are one step)
                for event in view.relist([stored.load() for stored in page.items]):
                    yield event
                if not synced:
                    synced = True
                    yield WatchEvent(SYNCED, None)
                if self._guard is not None:
                    self._guard.check("watch", rt, namespace)
                watcher = self.registry.watch(rt, namespace, self._options.ListOptions(resource_version=str(page.resource_version)))
                try:
                    while not watcher.closed and not watcher.overflowed:
                        if not watcher.pending:
                            await watcher.wakeup.wait()
                        lines, watcher.pending = watcher.pending, []  # Watcher.take, without joining the lines
                        watcher.wakeup.clear()
                        for chunk in lines:
                            if book and (echo := _echo_of(book, chunk)) is not None:
                                line, key, rv, payload = echo
                                view.known[key] = (rv, kind.api_version, kind.kind)
                                yield WatchEvent(ECHO, payload)
                                continue
                            for raw in watchwire.parsed(chunk):
                                event = WatchEvent(raw["type"], raw["object"])
                                view.track(event)
                                yield event
                finally:
                    self.registry.stop_watch(watcher)
        finally:
            if echoes:
                self._echoes[kind].remove(book)


# ===================================================================== any API server
class ConnectError(Exception):
    """A :class:`KubeClient` cannot be set up (an unusable kubeconfig) or cannot reach its server."""


class NoKubeconfig(ConnectError):
    """No kubeconfig file where one was looked for."""


class KubeClient:
    """Any API server, through the official ``kubernetes`` client."""

    WATCH_SECONDS = 60  # each watch request's timeoutSeconds; then it resumes from the last version

    def __init__(self, api_client) -> None:
        self.api = api_client
        self._resources: dict[Kind, tuple[str, bool]] = {}
        self._correlator = EventCorrelator()
        self._event_lock: tuple | None = None  # (its loop, an asyncio.Lock): Events written one at a time

    @classmethod
    def connect(cls, *, server: str | None = None, kubeconfig: str | None = None, context: str | None = None) -> "KubeClient":
        """A client for ``server`` (a URL) alone, reading no kubeconfig; or from a kubeconfig
        (:meth:`from_kubeconfig`), its server replaced by ``server`` when given."""
        if server and kubeconfig is None and context is None:
            return cls.for_server(server)
        client = cls.from_kubeconfig(kubeconfig, context=context)
        if server:
            client.api.configuration.host = server.rstrip("/")
        return client

    @classmethod
    def for_server(cls, url: str) -> "KubeClient":
        """An anonymous client for the server at ``url`` (``http(s)://host:port``)."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = url.rstrip("/")
        return cls(client.ApiClient(configuration))

    @classmethod
    def from_kubeconfig(cls, path: str | None = None, *, context: str | None = None) -> "KubeClient":
        """From ``path`` (else $KUBECONFIG, else ~/.kube/config; paths joined by ':' are merged).
        Raises :class:`NoKubeconfig` when no such file exists, :class:`ConnectError` when it is unusable."""
        path = path or os.environ.get("KUBECONFIG") or "~/.kube/config"
        if not any(os.path.isfile(os.path.expanduser(p)) for p in path.split(os.pathsep) if p):
            raise NoKubeconfig(f"no kubeconfig at {path}")
        import yaml
        from kubernetes import config

        try:
            return cls(config.new_client_from_config(config_file=path, context=context))
        except (config.ConfigException, yaml.YAMLError) as exc:
            raise ConnectError(f"unusable kubeconfig {path}: {exc}") from exc
        except (TypeError, AttributeError, KeyError, ValueError) as exc:  # the loader met something else than a kubeconfig
            raise ConnectError(f"unusable kubeconfig {path}: not a kubeconfig (clusters, contexts and users)") from exc

    def close(self) -> None:
        self.api.close()

    @property
    def host(self) -> str:
        return self.api.configuration.host

    async def serves(self, kind: Kind) -> bool:
        """Whether the server serves ``kind`` (one discovery request per group-version, cached):
        a command's first request, so that a wrong server or missing CRDs show at once."""
        try:
            await self._resource(kind)
        except errors.StatusError as exc:
            if exc.code == 404:
                return False
            raise
        return True

    # ------------------------------------------------------------- requests
    def _call(self, method: str, path: str, *, query: list | None = None, body=None, content_type: str = "application/json"):
        headers = {"Accept": "application/json", "Content-Type": content_type}
        params = self.api.param_serialize(method, path, query_params=query or [], header_params=headers, body=body, auth_settings=["BearerToken"])
        response = self.api.call_api(*params, _request_timeout=30)
        data = response.read()
        if not 200 <= response.status < 300:
            raise _status_error(response.status, data)
        return json.loads(data) if data else {}

    async def _request(self, method: str, path: str, **kwargs) -> dict:
        return await asyncio.to_thread(self._call, method, path, **kwargs)

    async def _resource(self, kind: Kind) -> tuple[str, bool]:
        found = self._resources.get(kind)
        if found is None:  # discover the group-version (again: a CRD may have appeared since)
            base = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
            listing = await self._request("GET", base)
            for resource in listing.get("resources", []):
                if "/" not in resource["name"]:
                    self._resources[Kind(kind.api_version, resource["kind"])] = (resource["name"], resource["namespaced"])
            found = self._resources.get(kind)
            if found is None:
                raise errors.StatusError(404, "NotFound", f"the server could not find the requested resource ({kind})")
        return found

    async def _path(self, kind: Kind, namespace: str = "", name: str = "", subresource: str = "") -> str:
        plural, namespaced = await self._resource(kind)
        path = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
        if namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{plural}"
        if name:
            path += f"/{name}"
        return f"{path}/{subresource}" if subresource else path

    async def get(self, kind: Kind, namespace: str, name: str) -> dict:
        return await self._request("GET", await self._path(kind, namespace, name))

    async def list(self, kind: Kind, namespace: str = "") -> tuple[list[dict], str]:
        path, items, token = await self._path(kind, namespace), [], ""
        while True:
            query = [("limit", 500)] + ([("continue", token)] if token else [])
            page = await self._request("GET", path, query=query)
            items += page.get("items") or []
            token = page["metadata"].get("continue", "")
            if not token:
                return items, page["metadata"].get("resourceVersion", "")

    async def create(self, kind: Kind, obj: dict) -> dict:
        path = await self._path(kind, obj["metadata"].get("namespace", ""))
        return await self._request("POST", path, body=obj, query=[("fieldValidation", "Strict")])

    async def update(self, kind: Kind, obj: dict, *, subresource: str = "") -> dict:
        path = await self._path(kind, *_key(obj), subresource)
        return await self._request("PUT", path, body=obj, query=[("fieldValidation", "Strict")])

    async def update_status(self, kind: Kind, obj: dict) -> dict:
        return await self.update(kind, obj, subresource="status")

    async def patch(self, kind: Kind, namespace: str, name: str, patch: dict, *, subresource: str = "") -> dict:
        return await self._request("PATCH", await self._path(kind, namespace, name, subresource), body=patch, content_type=MERGE_PATCH)

    async def delete(self, kind: Kind, namespace: str, name: str, *, propagation_policy: str = "", grace_period_seconds: int | None = None) -> None:
        query = [("propagationPolicy", propagation_policy)] if propagation_policy else []
        if grace_period_seconds is not None:
            query.append(("gracePeriodSeconds", grace_period_seconds))
        await self._request("DELETE", await self._path(kind, namespace, name), query=query)

    async def create_event(self, event: dict) -> None:
        """Record ``event`` as client-go's recorder does (:mod:`mockapi.event_correlator`): a
        repeat is a strategic merge patch of the Event written first (created again under its
        name if it is gone), similar ones are combined, a flood about one object is dropped.
        One Event at a time, in the order recorded (client-go's one goroutine per recorder), so a
        patch never overtakes the create of the Event it counts on."""
        loop = asyncio.get_running_loop()
        if self._event_lock is None or self._event_lock[0] is not loop:
            self._event_lock = (loop, asyncio.Lock())
        async with self._event_lock[1]:
            correlated = self._correlator.correlate(event)
            if correlated is None:
                return  # the spam filter's: not written at all
            event = correlated.event
            if correlated.patch is not None:
                path = await self._path(EVENTS, event["metadata"].get("namespace", ""), event["metadata"]["name"])
                try:
                    await self._request("PATCH", path, body=correlated.patch, content_type=STRATEGIC_PATCH)
                    return
                except errors.StatusError as exc:
                    if exc.code != 404:
                        raise
            await self.create(EVENTS, event)

    async def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        path = await self._path(PODS, namespace, name, "binding")
        await self._request("POST", path, body=binding(name, uid, node_name))

    # ---------------------------------------------------------------- watch
    async def watch(self, kind: Kind, namespace: str = "", *, echoes: bool = False) -> AsyncIterator[WatchEvent]:
        """``echoes``: none come over HTTP (only an in-process client announces its writes)."""
        view, synced = _View(), False
        while True:
            items, rv = await self.list(kind, namespace)
            for event in view.relist(items):
                yield event
            if not synced:
                synced = True
                yield WatchEvent(SYNCED, None)
            path = await self._path(kind, namespace)
            async for event in self._stream(path, rv):
                view.track(event)
                yield event

    async def _stream(self, path: str, rv: str) -> AsyncIterator[WatchEvent]:
        """Watch from ``rv``, resuming after each timeout or disconnect; returns on 410 (relist)."""
        failures = 0
        while True:
            stream = _WatchThread(self, path, rv)
            try:
                async for kind, payload in stream.events():
                    if kind == "event":
                        rv = payload.object["metadata"].get("resourceVersion", rv)
                        failures = 0
                        yield payload
                    elif kind == "bookmark":
                        rv = payload
                    elif kind == "gone":
                        return
                    elif kind == "error":
                        failures += 1
                        log.warning("watch %s failed (%s); resuming", path, payload)
                        await asyncio.sleep(min(0.1 * 2**failures, 5.0))
            finally:
                stream.stop()

    def _open_watch(self, path: str, **kwargs):
        """The raw streaming request, in the shape ``kubernetes.watch.Watch.stream`` expects."""
        query = [("watch", "true"), ("allowWatchBookmarks", "true"), ("timeoutSeconds", kwargs.get("timeout_seconds", self.WATCH_SECONDS))]
        if kwargs.get("resource_version"):
            query.append(("resourceVersion", kwargs["resource_version"]))
        params = self.api.param_serialize("GET", path, query_params=query, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
        return self.api.call_api(*params, _request_timeout=(10, self.WATCH_SECONDS + 30)).response


class _WatchThread:
    """One watch request streamed by ``kubernetes.watch.Watch`` in a daemon thread, handed to the
    event loop as ("event", WatchEvent) / ("bookmark", rv) / ("gone", None) / ("error", text) and
    finally ("end", None)."""

    def __init__(self, client: KubeClient, path: str, rv: str) -> None:
        from kubernetes import watch

        self.client, self.path, self.rv = client, path, rv
        self.queue: asyncio.Queue = asyncio.Queue()
        self.loop = asyncio.get_running_loop()
        self.watch = watch.Watch()
        self.thread = threading.Thread(target=self._run, name=f"watch {path}", daemon=True)
        self.thread.start()

    def _put(self, item) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:
            self.watch.stop()  # the loop is closed: nobody is listening any more

    def _run(self) -> None:
        try:
            for raw in self.watch.stream(self.client._open_watch, self.path, resource_version=self.rv, timeout_seconds=KubeClient.WATCH_SECONDS):
                if raw["type"] == "BOOKMARK":
                    self._put(("bookmark", raw["raw_object"]["metadata"]["resourceVersion"]))
                else:
                    self._put(("event", WatchEvent(raw["type"], raw["raw_object"])))
        except Exception as exc:  # noqa: BLE001 - every failure is handed to the loop, which decides
            self._put(("gone", None) if getattr(exc, "status", None) == 410 else ("error", f"{type(exc).__name__}: {exc}"))
        finally:
            self._put(("end", None))

    async def events(self):
        while True:
            item = await self.queue.get()
            if item[0] == "end":
                return
            yield item
            if item[0] in ("gone", "error"):
                return

    def stop(self) -> None:
        self.watch.stop()


def _status_error(code: int, data: bytes) -> errors.StatusError:
    try:
        status = json.loads(data)
    except ValueError:
        status = {}
    if not isinstance(status, dict):
        status = {}
    message = status.get("message") or data.decode(errors="replace")[:200] or f"HTTP {code}"
    return errors.StatusError(code, status.get("reason", "Unknown"), message, status.get("details") or {})
