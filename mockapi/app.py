"""The composition root: settings in, a ready ASGI application out.

Wires the store, the type registry (built-in kinds, then our CRDs), the REST registry, the HTTP
edge (the thin Kubernetes dispatcher in front, FastAPI behind it for the cold endpoints, built on
their first request: :mod:`mockapi.http.cold`) and
loads the start-up manifests.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable

import orjson

from mockapi import clock as clocks
from mockapi import errors, faults, gvk, loader, logs
from mockapi import metrics as metrics_
from mockapi.auth import whoami
from mockapi.controllers.gate import AllocationGate
from mockapi.http import cold, control, openapi, overload, responses
from mockapi.http import discovery as discovery_
from mockapi.http.kube import KubeAPI
from mockapi.registry import apiservices, builtin, scheduling
from mockapi.registry.cluster import parse_service_ranges
from mockapi.registry.namespaces import PROTECTED_NAMESPACES
from mockapi.registry.options import WriteOptions
from mockapi.registry.rest import Registry
from mockapi.registry.types import TypeRegistry
from mockapi.settings import Settings
from mockapi.store import Store

if TYPE_CHECKING:
    from mockapi.store.journal import Journal

log = logging.getLogger("mockapi")

_K8S_PREFIXES = ("/api/", "/apis/")


@dataclass
class Server:
    """Everything one running mockapi holds; ``app`` is the ASGI application to serve."""

    settings: Settings
    store: Store
    types: TypeRegistry
    registry: Registry
    app: object
    started: float = field(default_factory=time.monotonic)
    loaded: loader.Loaded = field(default_factory=loader.Loaded)
    # Controllers and other long-running work: started when the ASGI lifespan starts (inside the
    # server's event loop, where the registry lives), cancelled when it shuts down.
    background: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    _tasks: list[asyncio.Task] = field(default_factory=list)
    # The allocator's progression control (mockapi.controllers.gate): the allocator must bind to it.
    gate: AllocationGate | None = None
    metrics: metrics_.Metrics | None = None
    requests: control.RequestLog | None = None
    allocator: object | None = None  # the in-process allocator (mockapi.controllers.allocator), when enabled
    # Authentication and the audit log (mockapi.auth), when configured: the bearer tokens (the token
    # file's and those minted for tests), the authorizer requests are checked against, the audit log.
    tokens: object | None = None
    authorizer: object | None = None
    audit: object | None = None
    scheduler: object | None = None  # the in-process pod scheduler (mockapi.controllers.scheduler), when enabled
    journal: Journal | None = None  # with --data-dir: where every write is made durable
    restored: int = 0  # objects read back from the data directory at start-up
    # Overload protection (mockapi.http.overload): the in-flight and watcher counters the connection
    # protocol admits requests with, and the open watch streams a graceful shutdown ends.
    admission: overload.Admission | None = None
    streams: set[Callable[[], None]] = field(default_factory=set)
    # Called once at shutdown, after the requests have drained and the controllers have stopped, in
    # order; each may be a coroutine function. THE place for a persistence layer to flush the data
    # dir: `server.on_shutdown.append(store_writer.flush)`. A failing hook is logged, the next still runs.
    on_shutdown: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)

    async def shutdown(self) -> None:
        """The ASGI lifespan's shutdown: stop the controllers, then run the ``on_shutdown`` hooks."""
        await self.stop_background()
        for hook in self.on_shutdown:
            try:
                result = hook()
                if asyncio.iscoroutine(result):
                    await result
            except Exception:  # noqa: BLE001 - one failing hook must not keep the others from running
                log.exception("shutdown hook %r failed", hook)

    async def start_background(self) -> None:
        for run in self.background:
            self._tasks.append(asyncio.create_task(run()))

    async def stop_background(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        from mockapi.client import event_sink

        event_sink(self.registry).flush()  # the controllers' Events not written yet (LocalClient defer_events)


_SERVED = Path(__file__).parent / "models" / "served.json"  # generated from the models (crdgen.served_document)
_served_bytes: list[bytes] = []


def _served() -> dict:
    """Our CRDs and the DeviceClaimSpec schema, as generated from the models: read from the
    checked-in JSON (a test keeps it equal to the models), a fresh copy per call."""
    if not _served_bytes:
        _served_bytes.append(_SERVED.read_bytes())
    return orjson.loads(_served_bytes[0])


def our_crds() -> list[dict]:
    """The devmgmtproto.k8s.io CRDs, generated from the models (the same text as schemas/)."""
    return _served()["crds"]


def builtin_manifests() -> list[dict]:
    """The built-in kinds, with the prototype's embedded claim (Pod ``spec.deviceClaims[].claim``)
    given the real DeviceClaimSpec schema from our models."""
    return [_with_claim_schema(builtin.manifest(name)) for name in builtin.names()]


def builtin_types() -> list[gvk.ResourceType]:
    """The built-in kinds' served types, from the manifests' index: each reads its schema (the
    whole manifest) when first asked for it — no kind costs a parse until it is used."""
    types = []
    for name, manifest in builtin.index().items():
        types += gvk.from_crd(manifest, builtin=True, schemas=functools.partial(_lazy_schema, name))
    return types


def _lazy_schema(name: str, version: str) -> Callable[[], dict]:
    return lambda: _builtin_schemas(name)[version]


@functools.cache
def _builtin_schemas(name: str) -> dict[str, dict]:
    """A built-in manifest's schemas by version: read once per process and shared by every server
    in it (schemas are never changed in place; each is compiled once, cached by identity)."""
    versions = _with_claim_schema(builtin.manifest(name))["spec"]["versions"]
    return {v["name"]: (v.get("schema") or {}).get("openAPIV3Schema") or {} for v in versions}


def _with_claim_schema(manifest: dict) -> dict:
    claim_schema = None
    for version in manifest["spec"]["versions"]:
        for claim in _embedded_claims(version["schema"]["openAPIV3Schema"]):
            claim_schema = claim_schema or orjson.dumps(_served()["deviceClaimSpec"])
            description = claim.get("description", "")
            claim.clear()
            claim.update(orjson.loads(claim_schema), description=description)
    return manifest


def _embedded_claims(node: dict):
    """The ``deviceClaims[].claim`` nodes of a schema: a Pod's, and each pod template's."""
    properties = node.get("properties") or {}
    claims = properties.get("deviceClaims")
    if isinstance(claims, dict) and "claim" in ((claims.get("items") or {}).get("properties") or {}):
        yield claims["items"]["properties"]["claim"]
    for child in (*properties.values(), node.get("items"), node.get("additionalProperties")):
        if isinstance(child, dict):
            yield from _embedded_claims(child)


def build(settings: Settings | None = None, *, clock: clocks.Clock | None = None, uids: clocks.UIDGenerator | None = None, authorizer=None) -> Server:
    """``authorizer``: a :class:`mockapi.auth.authz.Authorizer` to use instead of the one
    ``settings.authorization_mode`` names (tests); it turns authentication on."""
    settings = settings or Settings()
    options = {"history_size": settings.history_size, "watcher_buffer": settings.watcher_buffer, "compression": settings.store_compression}
    if settings.data_dir is None:  # in memory: nothing of the persistence is imported nor built
        return _build(settings, Store(**options), None, clock=clock, uids=uids, authorizer=authorizer)
    from mockapi import persistence

    store, journal = persistence.open_store(settings.data_dir, **options)
    try:
        return _build(settings, store, journal, clock=clock, uids=uids, authorizer=authorizer)
    except BaseException:
        if journal is not None:
            journal.close()
        raise


def _build(settings: Settings, store: Store, journal: Journal | None, *, clock, uids, authorizer) -> Server:
    types = TypeRegistry()
    ranges = parse_service_ranges(settings.service_cluster_ip_range, settings.service_node_port_range)
    registry = Registry(store=store, types=types, clock=clock, uids=uids, service_ranges=ranges)
    for rt in builtin_types():
        types.register(rt)
    restored = 0
    if journal is not None:
        from mockapi import persistence

        restored = persistence.restore(registry, journal)
        journal.start()
    seed(registry)
    discovery = discovery_.Discovery(types, server_address=f"{settings.host}:{settings.port}")
    kube = KubeAPI(
        registry,
        discovery,
        max_body=settings.max_body,
        watch_settings={"bookmark_interval": settings.bookmark_interval, "min_request_timeout": settings.min_request_timeout, "streams": set()},
        fault_set=faults.FaultSet(),
    )
    server = Server(settings=settings, store=store, types=types, registry=registry, app=None, journal=journal, restored=restored, streams=kube.watch_settings["streams"])
    server.admission = overload.Admission(overload.limits(settings))
    fallback = cold.Deferred(functools.partial(_cold_endpoints, types))

    async def app(scope, receive, send):
        if scope["type"] == "http":
            path = scope["path"]
            if path.startswith(_K8S_PREFIXES) or path in ("/api", "/apis"):
                await kube(scope, receive, send)
                return
        elif scope["type"] == "lifespan":
            await _lifespan(server, receive, send)
            return
        await fallback(scope, receive, send)

    server.app = app
    if journal is not None:
        from mockapi import persistence

        server.app = persistence.acknowledging(app, store, journal)
        server.on_shutdown.append(journal.close)  # after the drain: the last writes reach the disk
    kube.virtual.update(whoami.HANDLERS)
    if settings.authenticating or settings.auditing or authorizer is not None:
        _secure(server, authorizer)
    _observe(server, kube, fallback)
    _mount_allocator(server, fallback)
    _mount_pod_controllers(server, fallback)
    if settings.load:
        server.loaded = loader.load_paths(registry, settings.load)
    if journal is not None:
        journal.sync()  # what start-up wrote (the seed, --load) is on disk before the server is ready
        log.info("data directory %s: %d objects restored, resourceVersion %d", settings.data_dir, restored, store.resource_version)
    return server


def _secure(server: Server, authorizer=None) -> None:
    """Put the request filters (mockapi.auth.chain) in front of the application: authentication,
    the audit log, impersonation, authorization. Not called in the default mode (no filter at all)."""
    from mockapi.auth import audit, authn, chain
    from mockapi.auth.authz import AlwaysAllow

    settings = server.settings
    authenticator = None
    if settings.authenticating or authorizer is not None:
        server.tokens = tokens = authn.TokenTable()
        if settings.token_auth_file is not None:
            tokens.load(settings.token_auth_file)
        certificates = bool(settings.client_ca_file or settings.generate_certs)
        authenticator = authn.Authenticator(tokens, client_certificates=certificates, anonymous=settings.anonymous_auth)
        if not (settings.tls_cert_file or settings.generate_certs):
            log.warning("authentication without TLS: kubectl (client-go) sends no credentials over plain HTTP (see --generate-certs)")
    if authorizer is None:
        authorizer = AlwaysAllow() if settings.authorization_mode == "AlwaysAllow" else _authorizer(settings.authorization_mode, server.registry)
    server.authorizer = authorizer
    if settings.auditing:
        policy = audit.load_policy(settings.audit_policy_file) if settings.audit_policy_file else audit.METADATA_FOR_ALL
        server.audit = audit.AuditLog(policy, settings.audit_log_path, settings.audit_log_size)
        server.on_shutdown.append(server.audit.close)
    server.app = chain.Chain(server.app, authenticator=authenticator, authorizer=server.authorizer, audit=server.audit)


def _authorizer(mode: str, registry: Registry):
    modes = mode.split(",")
    if "RBAC" not in modes or not set(modes) <= {"RBAC", "Node"} or len(set(modes)) != len(modes):
        raise ValueError(f'authorization mode "{mode}" is not supported (AlwaysAllow, RBAC, or Node,RBAC)')
    from mockapi.auth import identities, rbac  # the RBAC authorizer reads Roles and bindings from the registry

    authorizer = rbac.RBACAuthorizer(registry)
    identities.bootstrap(registry)  # the built-in controllers' ServiceAccounts and roles (schemas/rbac)
    if "Node" in modes:  # kube's Node authorizer in front of (or behind) RBAC, a union (mockapi.auth.node)
        from mockapi.auth import node

        by_mode = {"Node": node.NodeAuthorizer(registry.store), "RBAC": authorizer}
        authorizer = node.Union(registry, [by_mode[m] for m in modes], authorizer)
    return authorizer


def local_client(server: Server, identity=None):
    """A built-in controller's in-process client, as ``identity`` (mockapi.auth.identities): its
    calls authorized against the server's authorizer in RBAC mode, its writes audited when the
    audit log is on; in the default mode a plain LocalClient (nothing checked, nothing logged).
    Its Events are written off its path (``LocalClient``'s ``defer_events``: at the next turn of the
    loop, or when it is idle in a burst)."""
    from mockapi.client import LocalClient

    authorizer = server.authorizer if "RBAC" in server.settings.authorization_mode.split(",") else None
    return LocalClient(server.registry, identity, authorizer=authorizer, audit=server.audit, defer_events=True)


def _mount_pod_controllers(server: Server, fallback) -> None:
    """The pods' claims controller and the scheduler (beside the allocator, sharing its ledger), the
    simulated kubelet and the garbage collector — each when enabled, as background tasks, imported
    and built when they start (start-up needs none of them) — and GET
    /mockapi/v1/scheduling/{namespace}/{name}: the scheduler's record of a pod's last attempt."""
    from mockapi.auth import identities

    settings = server.settings
    if settings.scheduler and not settings.allocator:
        raise ValueError("the scheduler needs the allocator in the same process (one ledger of held devices)")
    clock = server.registry.clock
    if settings.kubelet:
        server.registry.kubelet = True  # bound pods are deleted gracefully, for the kubelet to end

    async def schedule() -> None:
        import asyncio

        from mockapi.controllers import pods as pod_controllers

        server.scheduler, podclaims = pod_controllers.scheduler_with_claims(
            local_client(server, identities.SCHEDULER), _allocator(server), claims_client=local_client(server, identities.POD_CLAIMS),
            config_path=settings.scheduler_config, clock=clock,
        )  # fmt: skip
        if server.metrics is not None:
            server.scheduler.on_extender_call = server.metrics.extender_call
        await asyncio.gather(podclaims.run(), server.scheduler.run())

    async def kubelet() -> None:
        from mockapi.controllers.kubelet import DEFAULT_CAPACITY, Kubelet, KubeletOptions

        options = KubeletOptions(
            capacity={**DEFAULT_CAPACITY, **settings.kubelet_capacity}, heartbeat_interval=settings.kubelet_heartbeat,
            start_delay=settings.kubelet_start_delay, max_grace=settings.kubelet_max_grace,
        )  # fmt: skip
        await Kubelet(local_client(server, identities.KUBELET), clock=clock, options=options).run()

    async def collect_garbage() -> None:
        from mockapi.controllers.gc import GarbageCollector

        await GarbageCollector(local_client(server, identities.GARBAGE_COLLECTOR), clock=clock).run()

    for enabled, run in ((settings.scheduler, schedule), (settings.kubelet, kubelet), (settings.garbage_collector, collect_garbage)):
        if enabled:
            server.background.append(run)

    async def last_attempt(request):
        import orjson
        from starlette.responses import Response

        namespace, name = request.path_params["namespace"], request.path_params["name"]
        if server.scheduler is None:
            return responses.error_response(errors.StatusError(404, "NotFound", "no scheduler runs in this server (see `mockapi serve --no-scheduler`)"))
        found = server.scheduler.last_attempt(namespace, name)
        if found is None:
            return responses.error_response(errors.StatusError(404, "NotFound", f'no scheduling attempt of pod "{namespace}/{name}" is recorded', {"name": name, "kind": "pods"}))
        return Response(orjson.dumps(found), media_type="application/json")

    fallback.add_route("/mockapi/v1/scheduling/{namespace}/{name}", last_attempt, methods=["GET"])


def _cold_endpoints(types: TypeRegistry):
    from mockapi.http import endpoints  # FastAPI: imported on the first request that needs it

    return endpoints.create_app(openapi.OpenAPI(types))


def _observe(server: Server, kube: KubeAPI, fallback) -> None:
    """The control endpoints, /metrics, the request log and the allocation gate."""
    settings, registry = server.settings, server.registry
    server.gate = AllocationGate(settings.allocation_mode, delay=settings.allocation_delay, jitter=settings.allocation_jitter)
    server.requests = control.RequestLog(settings.request_log_size)
    server.metrics = metrics_.Metrics(store=server.store, gate=server.gate)
    server.gate.listeners.append(server.metrics.allocation_finished)
    observers = (server.metrics.observe, server.requests.record, logs.log_request)

    def observe(info, code, seconds, headers) -> None:
        for observer in observers:
            observer(info, code, seconds, headers)

    kube.observer = observe
    kube.faults.listeners.append(server.metrics.fault_injected)

    def load(raw: bytes, source: str) -> loader.Loaded:
        try:
            return loader.load_text(registry, raw, source=source)
        except loader.LoadError as exc:
            raise errors.bad_request(str(exc)) from None

    generated = settings.generate_certs
    ca = (generated / "ca.crt").read_bytes() if generated else None
    admin = ((generated / "admin.crt").read_bytes(), (generated / "admin.key").read_bytes()) if generated else None
    plane = control.ControlPlane(
        registry, server.requests, load=load, seed_crds=_seed_crds, gate=server.gate,
        faults=kube.faults, close_watches=server.store.close_all_watchers, compact=server.store.compact,
        users=server.tokens, audit=server.audit, ca=ca, admin_certificate=admin, max_body=settings.max_body,
    )  # fmt: skip
    fallback.mount(functools.partial(_mount_control, control=plane))
    fallback.add_route("/metrics", server.metrics.endpoint(), methods=["GET"])


def _mount_control(app, control) -> None:
    """The control routes on the cold endpoints' app, once it is built (their module imports starlette)."""
    from mockapi.http import control_routes

    control_routes.mount(app, control)


def _mount_allocator(server: Server, fallback) -> None:
    """The allocator (when enabled) as a background task, and GET /mockapi/v1/explain/{namespace}/{name}
    (``?kind=DevicePrivilegedClaim`` for those): the allocator's full diagnosis of one claim. Its
    modules are imported when its task starts or the first explanation is asked for: start-up
    needs none of them."""
    from mockapi.auth import identities

    if server.settings.allocator:
        policy = server.settings.allocation_policy
        if policy not in _ALLOCATION_POLICIES:  # refused at build, as the allocator itself would
            raise ValueError(f"unknown allocation policy {policy!r}; choose one of {', '.join(_ALLOCATION_POLICIES)}")

        async def allocate() -> None:
            await _allocator(server).run()

        server.background.append(allocate)

    async def explain(request):
        from starlette.responses import Response

        from mockapi.controllers import allocator as allocator_

        kind = request.query_params.get("kind", "DeviceClaim")
        try:
            if kind not in ("DeviceClaim", "DevicePrivilegedClaim"):
                raise errors.bad_request(f'kind: Unsupported value: "{kind}": supported values: "DeviceClaim", "DevicePrivilegedClaim"')
            key = allocator_.ClaimKey(request.path_params["namespace"], request.path_params["name"], kind)
            client = local_client(server, identities.ALLOCATOR)
            report = await allocator_.explain_claim(server.allocator, client, key, **_allocator_options(server.settings))
        except errors.StatusError as exc:
            return responses.error_response(exc)
        return Response(orjson.dumps(report), media_type="application/json")

    fallback.add_route("/mockapi/v1/explain/{namespace}/{name}", explain, methods=["GET"])


_ALLOCATION_POLICIES = ("binpack", "first-fit", "spread")  # mockapi.controllers.allocator.score.POLICIES, without its import


def _allocator(server: Server):
    """The in-process allocator, built by the first task that needs it (its own, the scheduler's)."""
    if server.allocator is None:
        from mockapi.auth import identities
        from mockapi.controllers import allocator as allocator_

        client = local_client(server, identities.ALLOCATOR)
        server.allocator = allocator_.Allocator(client, gate=server.gate, clock=server.registry.clock, **_allocator_options(server.settings))
    return server.allocator


def _allocator_options(settings: Settings) -> dict:
    from mockapi.controllers import allocator as allocator_

    return {"policy": settings.allocation_policy, "limits": allocator_.Limits(settings.allocation_budget_steps, settings.allocation_budget_seconds)}


def known_crd_digests() -> list[str]:
    """What ``mockapi/registry/known_crds.json`` lists: the digest of each of our CRDs as a fresh
    server seeds it, each validated by every rule (an invalid one fails the seed)."""
    from mockapi.registry import known_crds

    with known_crds.recording() as seen:
        build(Settings(port=0, allocator=False, scheduler=False, kubelet=False, garbage_collector=False))
    return sorted(seen)


def write_known_crds() -> None:
    """Rewrite ``mockapi/registry/known_crds.json`` (after changing the models, or what prunes or
    defaults a CRD): ``python3 -c 'from mockapi import app; app.write_known_crds()'``."""
    from mockapi.registry import known_crds

    known_crds.write(known_crd_digests())
    print(f"wrote {known_crds.PATH}")


@functools.cache
def _seed_crds() -> list[dict]:
    return our_crds()


async def _lifespan(server: Server, receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            # Started after the server is told start-up is complete, so that it accepts (and
            # ``MockAPIServer.start()`` returns) before the controllers' first steps — importing
            # their modules, ~30 ms — run in the loop: created first, they would run first.
            await send({"type": "lifespan.startup.complete"})
            await server.start_background()
        elif message["type"] == "lifespan.shutdown":
            await server.shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return


def seed(registry: Registry) -> None:
    """What every cluster starts with: the default namespaces and our CRDs (served at once). On a
    restart from a data directory, only what is missing is created; what is stored stays as it is."""
    namespaces = registry.types.by_kind("", "v1", "Namespace")
    opts = WriteOptions(field_validation="Strict")
    for name in PROTECTED_NAMESPACES:
        _create_missing(registry, namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, opts)
    priority_classes = registry.types.by_kind(scheduling.GROUP, "v1", "PriorityClass")
    for pc in scheduling.system_classes():
        _create_missing(registry, priority_classes, pc, opts)
    crds = registry.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    for crd in our_crds():
        _create_missing(registry, crds, crd, WriteOptions(field_validation="Strict"))
    apiservices.sync(registry.cluster)  # the local APIServices of the built-in group-versions


def _create_missing(registry: Registry, rt, obj: dict, opts: WriteOptions) -> None:
    if registry.store.get(rt.group_resource, "", obj["metadata"]["name"]) is None:
        registry.create(rt, "", obj, opts)
