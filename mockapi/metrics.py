"""``/metrics``: Prometheus text format, with kube-apiserver's names where they exist.

- ``apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}``
  and ``apiserver_request_duration_seconds`` (same labels but code; kube-apiserver's buckets):
  one count per request to ``/api`` and ``/apis``, verbs as kube-apiserver reports them (GET,
  LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION). A WATCH counts when it ends.
- ``apiserver_storage_objects{resource}``: objects stored per resource (``plural.group``).
- ``mockapi_registered_watchers``: watches open now.
- ``mockapi_allocator_attempts_total``, ``mockapi_allocator_results_total{reason}``,
  ``mockapi_allocator_duration_seconds``: one per allocation attempt, reported by the allocator
  through :class:`mockapi.controllers.gate.AllocationGate`; ``mockapi_allocator_waiting_claims``:
  claims held by the gate (``delay`` or ``manual`` mode).
- ``mockapi_scheduler_extender_calls_total{extender,verb,outcome}`` and
  ``mockapi_scheduler_extender_duration_seconds{extender,verb}``: each HTTP call the scheduler made
  to an extender (verb filter, prioritize or bind; outcome success, error or timeout).
- ``mockapi_faults_injected_total{rule,action}``: each time a fault rule acted on a request (action
  error, latency or dropConnection; docs/fault-injection.md), reported by :class:`mockapi.faults.FaultSet`.
- ``process_*`` and ``python_*``: the standard process collectors (``process_resident_memory_bytes``
  is the server's RSS).

Each server has its own collector registry, so several in one process (tests) never collide.
"""

from __future__ import annotations

from typing import Callable

from prometheus_client import CollectorRegistry, Counter, GCCollector, Histogram, PlatformCollector, ProcessCollector
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import choose_encoder

# kube-apiserver's apiserver_request_duration_seconds buckets.
REQUEST_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60)
ALLOCATION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
REQUEST_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
COMPONENT = "apiserver"
_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
_APPLY = b"application/apply-patch+yaml"


def reported_verb(info, headers: dict) -> str:
    """The verb as kube-apiserver's metrics report it (``CleanVerb``)."""
    if not info.is_resource_request:
        return info.method
    verb = _VERBS.get(info.verb, "other")
    if verb == "PATCH" and headers.get(b"content-type", b"").split(b";")[0].strip() == _APPLY:
        return "APPLY"
    return verb


def scope_of(info) -> str:
    """kube-apiserver's ``CleanScope``: resource, namespace, cluster, or "" for other paths."""
    if info.name or info.verb == "create":
        return "resource"
    if info.namespace:
        return "namespace"
    return "cluster" if info.is_resource_request else ""


class Metrics:
    def __init__(self, *, store, gate=None) -> None:
        self.extender_calls = self.extender_latency = None  # made at the first extender call
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            (*REQUEST_LABELS, "code"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            REQUEST_LABELS,
            buckets=REQUEST_BUCKETS,
            registry=self.registry,
        )
        self.attempts = Counter("mockapi_allocator_attempts", "Allocation attempts the allocator finished.", registry=self.registry)
        self.results = Counter("mockapi_allocator_results", "Allocation attempts by the reason of their Allocated condition.", ("reason",), registry=self.registry)
        self.allocation_latency = Histogram(
            "mockapi_allocator_duration_seconds", "Time one allocation attempt took, in seconds.", buckets=ALLOCATION_BUCKETS, registry=self.registry
        )
        self.faults = Counter("mockapi_faults_injected", "Fault rules that acted on a request, by rule and action.", ("rule", "action"), registry=self.registry)
        self.registry.register(_StateCollector(store, gate))
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        self._children: dict[tuple, tuple] = {}

    def observe(self, info, code: int, seconds: float, headers: dict) -> None:
        """The KubeAPI observer: count one finished request."""
        verb = reported_verb(info, headers)
        dry_run = "All" if info.query.get("dryRun") == "All" else ""
        if info.is_resource_request:
            labels = (verb, dry_run, info.group, info.version, info.resource, info.subresource, scope_of(info), COMPONENT)
        else:
            labels = (verb, dry_run, "", "", "", info.path if code < 400 else "", "", COMPONENT)
        key = (labels, code)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (self.requests.labels(*labels, str(code)), self.latency.labels(*labels))
        children[0].inc()
        children[1].observe(seconds)

    def extender_call(self, extender: str, verb: str, outcome: str, seconds: float) -> None:
        """The scheduler's ``on_extender_call`` hook: count one call to an extender."""
        if self.extender_calls is None:
            self.extender_calls = Counter(
                "mockapi_scheduler_extender_calls", "HTTP calls the scheduler made to its extenders.", ("extender", "verb", "outcome"), registry=self.registry
            )
            self.extender_latency = Histogram(
                "mockapi_scheduler_extender_duration_seconds", "Latency of the scheduler's calls to its extenders.", ("extender", "verb"),
                buckets=ALLOCATION_BUCKETS, registry=self.registry,
            )  # fmt: skip
        self.extender_calls.labels(extender, verb, outcome).inc()
        self.extender_latency.labels(extender, verb).observe(seconds)

    def fault_injected(self, rule: str, action: str) -> None:
        """The FaultSet listener: count one fault injected."""
        self.faults.labels(rule, action).inc()

    def allocation_finished(self, key, reason: str, seconds: float) -> None:
        """The AllocationGate listener: count one finished allocation attempt."""
        self.attempts.inc()
        self.results.labels(reason).inc()
        self.allocation_latency.observe(seconds)

    def render(self, accept: str | None) -> tuple[bytes, str]:
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type

    def endpoint(self) -> Callable:
        """A Starlette endpoint serving this registry."""
        from starlette.responses import Response

        async def metrics(request) -> Response:
            body, content_type = self.render(request.headers.get("accept"))
            return Response(body, media_type=content_type)

        return metrics


class _StateCollector:
    """Gauges read at scrape time: nothing is counted on the hot path."""

    def __init__(self, store, gate) -> None:
        self.store = store
        self.gate = gate

    def describe(self):
        return []

    def collect(self):
        objects = GaugeMetricFamily("apiserver_storage_objects", "Number of stored objects at the time of last check split by kind.", labels=["resource"])
        for resource in sorted(self.store.resources(), key=str):
            objects.add_metric([str(resource)], self.store.count(resource))
        yield objects
        yield GaugeMetricFamily("mockapi_registered_watchers", "Number of watches open now.", value=self.store.watcher_count())
        if self.gate is not None:
            yield GaugeMetricFamily("mockapi_allocator_waiting_claims", "Claims held by the allocation gate (delay or manual mode).", value=len(self.gate.waiting()))
