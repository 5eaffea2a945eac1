"""client-go's EventCorrelator (mockapi.event_correlator), step by step with its constants, and the
in-process client that writes what it decides (LocalClient.create_event): repeats counted on one
Event, similar Events combined, a flood about one object cut by its token bucket."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from mockapi import app as app_
from mockapi.auth import identities
from mockapi.auth.audit import AuditLog, parse_policy
from mockapi.client import EVENTS, LocalClient, event_sink
from mockapi.event_correlator import COMBINED_PREFIX, EventCorrelator
from mockapi.settings import Settings

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
_names = iter(range(1, 1_000_000))


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def event(message: str = "0/3 nodes are available", *, t: float = 0, reason: str = "FailedScheduling", pod: str = "web",
          field_path: str = "", kind_type: str = "Warning", host: str = "", instance: str = "") -> dict:  # fmt: skip
    involved = {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": pod, "uid": f"uid-{pod}", "resourceVersion": str(next(_names))}
    if field_path:
        involved["fieldPath"] = field_path
    body = {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{pod}.{next(_names):x}", "namespace": "default"},
        "involvedObject": involved, "reason": reason, "message": message, "type": kind_type,
        "source": {"component": "default-scheduler", **({"host": host} if host else {})}, "reportingComponent": "default-scheduler",
        "firstTimestamp": at(t), "lastTimestamp": at(t), "count": 1,
    }  # fmt: skip
    if instance:
        body["reportingInstance"] = instance
    return body


# ------------------------------------------------------------------ counting (eventLogger)
def test_a_repeat_is_a_patch_of_the_first_event_count_and_last_timestamp():
    correlator, first = EventCorrelator(), event(t=0)
    created = correlator.correlate(first)
    assert created.event is first and created.patch is None  # a new Event: written as recorded, no copy
    repeat = correlator.correlate(event(t=30))
    assert repeat.patch == {"count": 2, "lastTimestamp": at(30), "message": "0/3 nodes are available"}  # client-go's two-way merge patch
    assert (repeat.event["metadata"]["name"], repeat.event["count"], repeat.event["firstTimestamp"]) == (first["metadata"]["name"], 2, at(0))
    assert correlator.correlate(event(t=60)).patch["count"] == 3


def test_the_key_is_getEventKey_fieldpath_and_host_count_the_involved_objects_version_does_not():
    correlator = EventCorrelator()
    assert correlator.correlate(event(field_path="spec.containers{a}")).patch is None
    assert correlator.correlate(event(field_path="spec.containers{b}")).patch is None  # another container: another Event
    assert correlator.correlate(event(field_path="spec.containers{a}")).patch["count"] == 2  # (the pod's resourceVersion moved)
    assert correlator.correlate(event(host="node-1")).patch is None
    assert correlator.correlate(event(kind_type="Normal")).patch is None
    assert correlator.correlate(event(reason="Other")).patch is None
    assert correlator.correlate(event()).patch is None
    assert correlator.correlate(event(instance="other")).patch["count"] == 2  # reportingInstance: not in getEventKey (only in the aggregation's)


def test_an_event_recorded_without_a_count_is_never_counted_on():
    correlator, bare = EventCorrelator(), event()
    del bare["count"]
    assert correlator.correlate(bare).patch is None
    assert correlator.correlate(dict(bare)).patch is None  # client-go keeps count 0: the next one is new again


def test_an_event_without_a_name_is_never_counted_on():
    correlator, unnamed = EventCorrelator(), event()
    unnamed["metadata"] = {"generateName": "web.", "namespace": "default"}
    assert correlator.correlate(unnamed).patch is None
    assert correlator.correlate(dict(unnamed)).patch is None  # there is no name to patch


def test_the_caches_are_lrus_of_bounded_size():
    correlator = EventCorrelator(cache_size=3)
    for pod in ("a", "b", "c", "d"):  # "a" is the oldest of four: forgotten
        correlator.correlate(event(pod=pod))
    assert correlator.correlate(event(pod="a")).patch is None
    assert correlator.correlate(event(pod="d")).patch["count"] == 2
    assert all(len(cache) <= 3 for cache in (correlator._aggregates, correlator._observed, correlator._buckets))


# ------------------------------------------------------------------ aggregation (EventAggregator)
def test_the_tenth_distinct_similar_message_in_ten_minutes_is_combined():
    correlator = EventCorrelator(spam_filter=False)
    written = [correlator.correlate(event(f"0/{n} nodes are available", t=n)) for n in range(1, 10)]
    assert all(c.patch is None and not c.event["message"].startswith(COMBINED_PREFIX) for c in written)  # nine: each its own Event
    tenth = correlator.correlate(event("0/10 nodes are available", t=10))
    assert tenth.patch is None and tenth.event["message"] == "(combined from similar events): 0/10 nodes are available"
    assert (tenth.event["count"], tenth.event["firstTimestamp"], tenth.event["reason"], tenth.event["type"]) == (1, at(10), "FailedScheduling", "Warning")
    assert "reportingComponent" not in tenth.event  # EventAggregate's copy carries no reporting fields
    eleventh = correlator.correlate(event("0/11 nodes are available", t=11))
    assert eleventh.event["metadata"]["name"] == tenth.event["metadata"]["name"]
    assert eleventh.patch == {"count": 2, "lastTimestamp": at(11), "message": "(combined from similar events): 0/11 nodes are available"}


def test_a_window_without_similar_events_for_longer_than_600_s_starts_again():
    correlator = EventCorrelator(spam_filter=False)
    for n in range(1, 10):
        correlator.correlate(event(f"m{n}", t=n))
    assert correlator.correlate(event("m10", t=9 + 600)).event["message"] == "(combined from similar events): m10"  # 600 s: still the window
    for n in range(11, 20):  # … each one renews it; then a pause of 601 s
        correlator.correlate(event(f"m{n}", t=609 + n))
    assert correlator.correlate(event("m20", t=628 + 601)).event["message"] == "m20"


def test_similar_means_the_same_reason_and_reporting_instance():
    correlator = EventCorrelator(spam_filter=False)
    for n in range(9):
        correlator.correlate(event(f"m{n}", reason="A"))
    assert correlator.correlate(event("m9", reason="B")).event["message"] == "m9"
    assert correlator.correlate(event("m9", reason="A", instance="elsewhere")).event["message"] == "m9"
    assert correlator.correlate(event("m9", reason="A")).event["message"].startswith(COMBINED_PREFIX)


# ------------------------------------------------------------------ the spam filter
def test_twenty_five_events_about_an_object_then_one_per_five_minutes():
    correlator = EventCorrelator()
    results = [correlator.correlate(event(f"reason {n}", reason=f"R{n}", t=0)) for n in range(26)]
    assert all(r is not None for r in results[:25]) and results[25] is None  # the bucket's burst
    assert correlator.correlate(event("reason 99", reason="R99", t=299)) is None
    assert correlator.correlate(event("reason 99", reason="R99", t=300)) is not None  # one token refilled
    assert correlator.correlate(event("other pod", pod="api", t=300)) is not None  # buckets are per object
    assert correlator.correlate(event("as normal", kind_type="Normal", t=300)) is not None  # … and per type


def test_a_dropped_repeat_still_counts():
    correlator = EventCorrelator(burst=2)
    assert correlator.correlate(event(t=0)).patch is None
    assert correlator.correlate(event(t=1)).patch["count"] == 2
    assert correlator.correlate(event(t=2)) is None  # dropped, observed all the same
    assert correlator.correlate(event(t=302)).patch["count"] == 4  # the next one written carries it


# ------------------------------------------------------------------ written by the in-process client
async def _events(client) -> list[dict]:
    items, _ = await client.list(EVENTS, "default")
    return items


def test_local_client_counts_on_one_event_and_makes_it_again_when_deleted():
    async def main():
        registry = app_.build(Settings()).registry
        recorder, reader = LocalClient(registry), LocalClient(registry)
        first = event(t=0)
        for t in (0, 5, 9):
            await recorder.create_event({**event(t=t), "metadata": first["metadata"]} if t == 0 else event(t=t))
        [stored] = await _events(reader)
        assert (stored["metadata"]["name"], stored["count"], stored["firstTimestamp"], stored["lastTimestamp"]) == (first["metadata"]["name"], 3, at(0), at(9))
        await reader.delete(EVENTS, "default", stored["metadata"]["name"])
        await recorder.create_event(event(t=12))
        [again] = await _events(reader)
        assert (again["metadata"]["name"], again["count"], again["firstTimestamp"], again["lastTimestamp"]) == (first["metadata"]["name"], 4, at(0), at(12))

    asyncio.run(main())


def test_deferred_events_are_correlated_in_the_order_recorded():
    async def main():
        registry = app_.build(Settings()).registry
        recorder, reader = LocalClient(registry, defer_events=True), LocalClient(registry)
        for t in range(6):  # recorded before any is written: the creates and patches keep that order
            await recorder.create_event(event(t=t))
            await recorder.create_event(event("another", reason="Other", t=t))
        assert await _events(reader) == []
        event_sink(registry).flush()
        return sorted((e["reason"], e["count"], e["lastTimestamp"]) for e in await _events(reader))

    assert asyncio.run(main()) == [("FailedScheduling", 6, at(5)), ("Other", 6, at(5))]


def test_each_client_is_a_recorder_of_its_own():
    async def main():
        registry = app_.build(Settings()).registry
        one, two = LocalClient(registry), LocalClient(registry)
        await one.create_event(event(t=0))
        await two.create_event(event(t=1))  # another component's recorder: it knows nothing of the first's
        return sorted(e["count"] for e in await _events(one))

    assert asyncio.run(main()) == [1, 1]


def test_a_controllers_repeat_is_an_authorized_and_audited_strategic_merge_patch():
    server = app_.build(Settings(authorization_mode="RBAC", allocator=False, scheduler=False))
    log = AuditLog(parse_policy({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "RequestResponse"}]}))
    recorder = LocalClient(server.registry, identities.SCHEDULER, authorizer=server.authorizer, audit=log)

    async def main():
        await recorder.create_event(event(t=0))
        await recorder.create_event(event(t=7))
        return await _events(LocalClient(server.registry))

    [stored] = asyncio.run(main())
    assert stored["count"] == 2
    patched = [e for e in log.events() if e["stage"] == "ResponseComplete"][-1]
    assert (patched["verb"], patched["objectRef"]["resource"], patched["objectRef"]["name"]) == ("patch", "events", stored["metadata"]["name"])
    assert patched["requestObject"] == {"count": 2, "lastTimestamp": at(7), "message": "0/3 nodes are available"}
    assert patched["responseStatus"]["code"] == 200 and patched["user"]["username"] == "system:serviceaccount:devmgmtproto-system:scheduler"
