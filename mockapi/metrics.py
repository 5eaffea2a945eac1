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

Counting does not import ``prometheus_client`` (~15 ms and ~2.7 MiB of start-up, docs/startup.md):
the counters and histograms below are plain tables (:class:`_Counter`, :class:`_Histogram`), and
the first scrape builds the registry, whose collectors read those tables. They render the samples
``prometheus_client``'s own ``Counter`` and ``Histogram`` would (same names, help, label order,
float values, ``_created`` timestamps taken when a series was first counted, ``le`` spellings), so
the exposition is the same bytes; ``tests/test_metrics_lazy.py`` compares the two.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from math import inf as INF
from typing import Callable

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
        self.registry = None  # prometheus_client's CollectorRegistry, built at the first scrape
        self.requests = _Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            (*REQUEST_LABELS, "code"),
        )
        self.latency = _Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            REQUEST_LABELS,
            buckets=REQUEST_BUCKETS,
        )
        self.attempts = _Counter("mockapi_allocator_attempts", "Allocation attempts the allocator finished.")
        self.results = _Counter("mockapi_allocator_results", "Allocation attempts by the reason of their Allocated condition.", ("reason",))
        self.allocation_latency = _Histogram("mockapi_allocator_duration_seconds", "Time one allocation attempt took, in seconds.", buckets=ALLOCATION_BUCKETS)
        self.faults = _Counter("mockapi_faults_injected", "Fault rules that acted on a request, by rule and action.", ("rule", "action"))
        self.state = _StateCollector(store, gate)
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
        children[0][0] += 1.0
        self.latency.observe_series(children[1], seconds)

    def extender_call(self, extender: str, verb: str, outcome: str, seconds: float) -> None:
        """The scheduler's ``on_extender_call`` hook: count one call to an extender."""
        if self.extender_calls is None:
            self.extender_calls = _Counter("mockapi_scheduler_extender_calls", "HTTP calls the scheduler made to its extenders.", ("extender", "verb", "outcome"))
            self.extender_latency = _Histogram(
                "mockapi_scheduler_extender_duration_seconds", "Latency of the scheduler's calls to its extenders.", ("extender", "verb"), buckets=ALLOCATION_BUCKETS
            )
            if self.registry is not None:  # registered last, as prometheus_client's would be
                self.registry.register(self.extender_calls)
                self.registry.register(self.extender_latency)
        self.extender_calls.inc(extender, verb, outcome)
        self.extender_latency.observe(seconds, extender, verb)

    def fault_injected(self, rule: str, action: str) -> None:
        """The FaultSet listener: count one fault injected."""
        self.faults.inc(rule, action)

    def allocation_finished(self, key, reason: str, seconds: float) -> None:
        """The AllocationGate listener: count one finished allocation attempt."""
        self.attempts.inc()
        self.results.inc(reason)
        self.allocation_latency.observe(seconds)

    def render(self, accept: str | None) -> tuple[bytes, str]:
        from prometheus_client.exposition import choose_encoder

        encoder, content_type = choose_encoder(accept or "")
        return encoder(self._registry()), content_type

    def _registry(self):
        """The collector registry, in the order the collectors were made when they were prometheus_client's own."""
        if self.registry is None:
            from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector

            registry = CollectorRegistry(auto_describe=True)
            for collector in (self.requests, self.latency, self.attempts, self.results, self.allocation_latency, self.faults, self.state):
                registry.register(collector)
            ProcessCollector(registry=registry)
            PlatformCollector(registry=registry)
            GCCollector(registry=registry)
            if self.extender_calls is not None:
                registry.register(self.extender_calls)
                registry.register(self.extender_latency)
            self.registry = registry
        return self.registry

    def endpoint(self) -> Callable:
        """A Starlette endpoint serving this registry."""

        async def metrics(request):
            from starlette.responses import Response

            body, content_type = self.render(request.headers.get("accept"))
            return Response(body, media_type=content_type)

        return metrics


class _Counter:
    """prometheus_client's ``Counter`` as a table: per series (label values, as strings) its value
    and the time it was first counted; :meth:`collect` renders the same samples."""

    kind = "counter"

    def __init__(self, name: str, documentation: str, labelnames: tuple = ()) -> None:
        self.name = name[: -len("_total")] if name.endswith("_total") else name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.series: dict[tuple, list] = {}
        if not self.labelnames:
            self.series[()] = self._new()

    def _new(self) -> list:
        return [0.0, time.time()]

    def labels(self, *values) -> list:
        """One series' ``[value, created]``, made on first use (as ``Counter.labels`` makes a child)."""
        values = tuple(map(str, values))
        series = self.series.get(values)
        if series is None:
            series = self.series[values] = self._new()
        return series

    def inc(self, *values) -> None:
        self.labels(*values)[0] += 1.0

    def describe(self) -> list:
        from prometheus_client.metrics_core import Metric

        return [Metric(self.name, self.documentation, self.kind)]

    def collect(self) -> list:
        from prometheus_client import metrics
        from prometheus_client.metrics_core import Metric

        metric = Metric(self.name, self.documentation, self.kind)
        for values, series in list(self.series.items()):
            labels = list(zip(self.labelnames, values))
            self._samples(metric, labels, series, metrics._use_created)
        return [metric]

    def _samples(self, metric, labels: list, series: list, use_created: bool) -> None:
        metric.add_sample(self.name + "_total", dict(labels), series[0])
        if use_created:
            metric.add_sample(self.name + "_created", dict(labels), series[1])


class _Histogram(_Counter):
    """prometheus_client's ``Histogram`` as a table: per series its per-bucket counts (not
    cumulative), sum and creation time."""

    kind = "histogram"

    def __init__(self, name: str, documentation: str, labelnames: tuple = (), *, buckets: tuple) -> None:
        self.bounds = [float(bound) for bound in buckets]
        if self.bounds[-1] != INF:
            self.bounds.append(INF)
        super().__init__(name, documentation, labelnames)

    def _new(self) -> list:
        return [[0.0] * len(self.bounds), 0.0, time.time()]

    def observe(self, amount: float, *values) -> None:
        self.observe_series(self.labels(*values), amount)

    def observe_series(self, series: list, amount: float) -> None:
        series[1] += amount
        if amount == amount:  # a NaN lands in no bucket
            series[0][bisect_left(self.bounds, amount)] += 1.0

    def _samples(self, metric, labels: list, series: list, use_created: bool) -> None:
        from prometheus_client.utils import floatToGoString

        buckets, total, created = series
        count = 0.0
        for bound, in_bucket in zip(self.bounds, buckets):
            count += in_bucket
            metric.add_sample(self.name + "_bucket", dict(labels + [("le", floatToGoString(bound))]), count)
        metric.add_sample(self.name + "_count", dict(labels), count)
        if self.bounds[0] >= 0:
            metric.add_sample(self.name + "_sum", dict(labels), total)
        if use_created:
            metric.add_sample(self.name + "_created", dict(labels), created)


class _StateCollector:
    """Gauges read at scrape time: nothing is counted on the hot path."""

    def __init__(self, store, gate) -> None:
        self.store = store
        self.gate = gate

    def describe(self):
        return []

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        objects = GaugeMetricFamily("apiserver_storage_objects", "Number of stored objects at the time of last check split by kind.", labels=["resource"])
        for resource in sorted(self.store.resources(), key=str):
            objects.add_metric([str(resource)], self.store.count(resource))
        yield objects
        yield GaugeMetricFamily("mockapi_registered_watchers", "Number of watches open now.", value=self.store.watcher_count())
        if self.gate is not None:
            yield GaugeMetricFamily("mockapi_allocator_waiting_claims", "Claims held by the allocation gate (delay or manual mode).", value=len(self.gate.waiting()))
