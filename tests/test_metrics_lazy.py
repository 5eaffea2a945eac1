"""``/metrics`` counts without prometheus_client and renders what prometheus_client's own counters would.

:class:`mockapi.metrics.Metrics` counts in plain tables and imports prometheus_client at the first
scrape (docs/startup.md). The reference here is the former implementation, prometheus_client's
``Counter`` and ``Histogram`` fed the same events: the exposition (text and OpenMetrics) must be
the same bytes, ``_created`` timestamps included (both read one fake clock). The process and GC
collectors' values move between two renders, so only their lines' names are compared.
"""

from __future__ import annotations

import itertools
import re
import time
from types import SimpleNamespace

import pytest
from prometheus_client import CollectorRegistry, Counter, GCCollector, Histogram, PlatformCollector, ProcessCollector
from prometheus_client.exposition import choose_encoder

from mockapi import metrics
from mockapi.metrics import ALLOCATION_BUCKETS, COMPONENT, REQUEST_BUCKETS, REQUEST_LABELS, reported_verb, scope_of


class _Reference:
    """The former ``Metrics``: prometheus_client's collectors, made at construction."""

    def __init__(self, *, store, gate) -> None:
        self.extender_calls = None
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            (*REQUEST_LABELS, "code"), registry=self.registry,
        )  # fmt: skip
        self.latency = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            REQUEST_LABELS, buckets=REQUEST_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.attempts = Counter("mockapi_allocator_attempts", "Allocation attempts the allocator finished.", registry=self.registry)
        self.results = Counter("mockapi_allocator_results", "Allocation attempts by the reason of their Allocated condition.", ("reason",), registry=self.registry)
        self.allocation_latency = Histogram(
            "mockapi_allocator_duration_seconds", "Time one allocation attempt took, in seconds.", buckets=ALLOCATION_BUCKETS, registry=self.registry
        )
        self.faults = Counter("mockapi_faults_injected", "Fault rules that acted on a request, by rule and action.", ("rule", "action"), registry=self.registry)
        self.registry.register(metrics._StateCollector(store, gate))
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)

    def observe(self, info, code, seconds, headers) -> None:
        verb = reported_verb(info, headers)
        dry_run = "All" if info.query.get("dryRun") == "All" else ""
        if info.is_resource_request:
            labels = (verb, dry_run, info.group, info.version, info.resource, info.subresource, scope_of(info), COMPONENT)
        else:
            labels = (verb, dry_run, "", "", "", info.path if code < 400 else "", "", COMPONENT)
        self.requests.labels(*labels, str(code)).inc()
        self.latency.labels(*labels).observe(seconds)

    def extender_call(self, extender, verb, outcome, seconds) -> None:
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

    def fault_injected(self, rule, action) -> None:
        self.faults.labels(rule, action).inc()

    def allocation_finished(self, key, reason, seconds) -> None:
        self.attempts.inc()
        self.results.labels(reason).inc()
        self.allocation_latency.observe(seconds)

    def render(self, accept):
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


class _Store:
    def resources(self):
        return ["pods", "nodes.v1"]

    def count(self, resource):
        return len(resource)

    def watcher_count(self):
        return 2


class _Gate:
    def waiting(self):
        return ["a"]


def _info(resource_request: bool, verb: str, **fields):
    defaults = {"method": "GET", "query": {}, "group": "", "version": "v1", "resource": "pods", "subresource": "", "name": "", "namespace": "", "path": "/x"}
    return SimpleNamespace(is_resource_request=resource_request, verb=verb, **{**defaults, **fields})


_INFOS = [
    _info(True, "list", namespace="default"),
    _info(True, "create", group="apps", resource="deployments", namespace="default", query={"dryRun": "All"}),
    _info(True, "patch", name="p", namespace="default"),
    _info(False, "", method="GET", path="/healthz"),
    _info(True, "watch", subresource="status", name="n"),
]
_TEXT = None
_OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def _drive(factory, with_extenders: bool) -> list[tuple[bytes, str]]:
    clock = itertools.count(1_700_000_000)
    real = time.time
    time.time = lambda: float(next(clock))  # noqa: E731 - both implementations stamp _created from it
    try:
        m = factory(store=_Store(), gate=_Gate())
        rendered = []
        for i in range(60):
            code = 500 if i % 7 == 0 else (200, 201, 404, 200, 200)[i % 5]
            m.observe(_INFOS[i % 5], code, i * 0.037, {b"content-type": b"application/apply-patch+yaml; charset=utf-8"} if i % 2 else {})
        m.observe(_INFOS[0], 200, float("inf"), {})
        m.observe(_INFOS[0], 200, -1.0, {})
        m.allocation_finished(None, "Allocated", 0.003)
        m.allocation_finished(None, "Unsatisfiable", 7.0)
        m.fault_injected("r1", "error")
        m.fault_injected("r2", "latency")
        m.fault_injected("r1", "error")
        rendered += [m.render(_TEXT), m.render(_OPENMETRICS)]
        if with_extenders:
            m.extender_call("e1", "filter", "success", 0.01)
            m.extender_call("e1", "bind", "timeout", float("nan"))
            m.extender_call("e1", "filter", "success", 0.2)
        m.observe(_INFOS[3], 200, 0.5, {})
        rendered += [m.render(_TEXT), m.render(_OPENMETRICS)]
        return rendered
    finally:
        time.time = real


def _comparable(body: bytes) -> list[str]:
    """Every line, but the process and GC collectors' samples as their names only."""
    lines = []
    for line in body.decode().splitlines():
        if re.match(r"(process_|python_gc_)", line):
            line = line.split(" ")[0]
        lines.append(line)
    return lines


@pytest.mark.parametrize("with_extenders", [False, True])
def test_the_exposition_is_the_one_prometheus_clients_own_counters_render(with_extenders):
    expected = _drive(_Reference, with_extenders)
    got = _drive(metrics.Metrics, with_extenders)
    for (want_body, want_type), (body, content_type) in zip(expected, got):
        assert content_type == want_type
        assert _comparable(body) == _comparable(want_body)


def test_extender_metrics_made_after_the_first_scrape_come_last_as_before():
    m = metrics.Metrics(store=_Store(), gate=None)
    m.render(None)
    m.extender_call("e1", "filter", "success", 0.01)
    names = [line.split(" ")[2] for line in m.render(None)[0].decode().splitlines() if line.startswith("# TYPE")]
    extenders = [i for i, name in enumerate(names) if name.startswith("mockapi_scheduler_extender_")]
    assert extenders == list(range(len(names) - len(extenders), len(names)))
    assert names.index("python_gc_collections_total") < extenders[0]
