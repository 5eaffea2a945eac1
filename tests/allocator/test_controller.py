"""The controller in-process: a real registry behind LocalClient, the Allocator running as a task.
Every wait is on a watch (no sleeps)."""

from __future__ import annotations

import asyncio
import contextlib
import threading

from mockapi import app as app_
from mockapi import errors
from mockapi.client import Kind, LocalClient
from mockapi.controllers.allocator import Allocator, explain_claim, kinds
from mockapi.controllers.allocator.budget import Limits
from mockapi.settings import Settings
from tests.allocator.conftest import claim, detail, device_class, pool

FOOZER_CONFIG_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "foozerconfigs.foozer.example.com"},
    "spec": {
        "group": "foozer.example.com",
        "names": {"kind": "FoozerConfig", "listKind": "FoozerConfigList", "plural": "foozerconfigs", "singular": "foozerconfig"},
        "scope": "Namespaced",
        "versions": [{"name": "v1alpha1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
    },
}
FOOZER_CONFIG = Kind("foozer.example.com/v1alpha1", "FoozerConfig")


def run(scenario, **options):
    async def main():
        server = app_.build(Settings())
        client = LocalClient(server.registry)
        allocator = Allocator(client, **options)
        task = asyncio.create_task(allocator.run())
        try:
            # hang guards, far above what a loaded machine takes (the scenarios wait on watches)
            await asyncio.wait_for(allocator.synced.wait(), 30)
            return await asyncio.wait_for(scenario(client, allocator), 60)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return asyncio.run(main())


def strip(obj: dict) -> dict:
    obj = dict(obj)
    obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace", "labels")}
    return obj


async def create(client, *objects):
    for obj in objects:
        kind = Kind(obj["apiVersion"], obj["kind"])
        await client.create(kind, strip(obj))


async def until(client, name: str, predicate, *, kind: Kind = kinds.CLAIMS, namespace: str = "default") -> dict:
    """The claim once ``predicate`` holds for it (watching: the current state, then each change)."""
    async for event in client.watch(kind, namespace):
        obj = event.object
        if obj is not None and obj["metadata"]["name"] == name and predicate(obj):
            return obj
    raise AssertionError("the watch ended")


async def until_gone(client, name: str, *, kind: Kind = kinds.CLAIMS, namespace: str = "default") -> None:
    """Return once the object does not exist (its finalizers are all removed)."""
    present = False
    async for event in client.watch(kind, namespace):
        if event.type == "SYNCED" and not present:
            return
        if event.object is not None and event.object["metadata"]["name"] == name:
            present = event.type != "DELETED"
            if not present:
                return


def condition(obj: dict) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Allocated"), {})


def reason_is(reason: str):
    return lambda obj: condition(obj).get("reason") == reason


def held(obj: dict) -> list[str]:
    return [f"{a['devicePoolName']}/{a['deviceName']}" for a in (obj.get("status") or {}).get("allocations") or []]


async def events_of(client, name: str) -> list[tuple[str, str]]:
    items, _ = await client.list(Kind("v1", "Event"), "default")
    return [(e["reason"], e["type"]) for e in items if e["involvedObject"]["name"] == name]


def test_a_claim_is_allocated_with_condition_finalizer_node_and_event():
    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 2), claim("c", detail("gpu", count=2)))
        found = await until(client, "c", reason_is(kinds.ALLOCATED))
        return found, await events_of(client, "c")

    found, events = run(scenario)
    assert held(found) == ["p/dev-00", "p/dev-01"] and found["status"]["nodeName"] == "node-a"
    assert found["metadata"]["finalizers"] == [kinds.FINALIZER]
    cond = condition(found)
    assert (cond["status"], cond["observedGeneration"], cond["message"]) == ("True", 1, "allocated 2 devices on node node-a: p/dev-00, p/dev-01")
    assert events == [("Allocated", "Normal")]


def test_an_unsatisfiable_claim_waits_for_a_pool_and_one_that_cannot_fit_never_blocks_the_others():
    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 1), claim("big", detail("gpu", count=3)), claim("small"))
        small = await until(client, "small", reason_is(kinds.ALLOCATED))
        big = await until(client, "big", reason_is(kinds.UNSATISFIABLE))
        assert allocator.queue.tiers()["unschedulable"] == [kinds.ClaimKey("default", "big")]
        await create(client, pool("q", 3, node="node-b"))
        return small, big, await until(client, "big", reason_is(kinds.ALLOCATED)), await events_of(client, "big")

    small, big, later, events = run(scenario)
    assert held(small) == ["p/dev-00"]
    assert condition(big)["message"].startswith("0/1 nodes can allocate the claim: 1 had too few matching devices.")
    assert held(later) == ["q/dev-00", "q/dev-01", "q/dev-02"]
    assert events == [("Unsatisfiable", "Warning"), ("Allocated", "Normal")]


def test_deleting_a_claim_frees_its_devices_for_a_waiting_claim_then_lets_it_go():
    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 1), claim("first"))
        await until(client, "first", reason_is(kinds.ALLOCATED))
        await create(client, claim("second"))
        await until(client, "second", reason_is(kinds.UNSATISFIABLE))
        await client.delete(kinds.CLAIMS, "default", "first")
        second = await until(client, "second", reason_is(kinds.ALLOCATED))
        await until_gone(client, "first")
        return second

    assert held(run(scenario)) == ["p/dev-00"]


def test_clearing_the_allocations_frees_the_devices_and_the_claim_is_allocated_again():
    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 2), claim("c"))
        found = await until(client, "c", reason_is(kinds.ALLOCATED))
        status = dict(found["status"])
        status.pop("allocations")
        await client.update_status(kinds.CLAIMS, {**found, "status": status})
        return await until(client, "c", lambda obj: held(obj) and obj["metadata"]["resourceVersion"] != found["metadata"]["resourceVersion"])

    assert held(run(scenario)) == ["p/dev-00"]


def test_statuses_written_by_others_are_kept():
    async def scenario(client, allocator):
        await create(client, pool("p", 1), claim("c"))
        pending = await until(client, "c", reason_is(kinds.CLASS_NOT_FOUND))
        others = {"podNames": ["pod-a"], "deviceStatuses": [{"devicePoolName": "p", "deviceName": "dev-00"}]}
        await client.update_status(kinds.CLAIMS, {**pending, "status": {**pending["status"], **others}})
        await create(client, device_class("gpu"))
        return await until(client, "c", reason_is(kinds.ALLOCATED))

    found = run(scenario)
    assert found["status"]["podNames"] == ["pod-a"] and found["status"]["deviceStatuses"][0]["deviceName"] == "dev-00"


def test_a_spec_change_after_allocation_leaves_the_allocation_and_its_observed_generation():
    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 4), claim("c"))
        found = await until(client, "c", reason_is(kinds.ALLOCATED))
        changed = {**found, "spec": {"claims": [detail("gpu", count=3)]}}
        await client.update(kinds.CLAIMS, changed)
        await until(client, "c", lambda obj: obj["metadata"]["generation"] == 2)
        await create(client, claim("probe"))  # the worker has moved on once this one is done
        await until(client, "probe", reason_is(kinds.ALLOCATED))
        return await client.get(kinds.CLAIMS, "default", "c")

    found = run(scenario)
    assert held(found) == ["p/dev-00"] and condition(found)["observedGeneration"] == 1 and found["metadata"]["generation"] == 2


def test_a_missing_config_waits_for_the_object_to_be_created():
    async def scenario(client, allocator):
        await create(client, FOOZER_CONFIG_CRD, device_class("gpu"), pool("p", 1))
        ref = {"apiVersion": "foozer.example.com/v1alpha1", "kind": "FoozerConfig", "name": "fast"}
        await create(client, claim("c", detail("gpu", configs=[ref])))
        missing = await until(client, "c", reason_is(kinds.CONFIG_NOT_FOUND))
        config = {"apiVersion": ref["apiVersion"], "kind": "FoozerConfig", "metadata": {"name": "fast", "namespace": "default"}, "spec": {"x": 1}}
        await client.create(FOOZER_CONFIG, config)
        return missing, await until(client, "c", reason_is(kinds.ALLOCATED))

    missing, found = run(scenario)
    assert 'FoozerConfig "fast" (foozer.example.com/v1alpha1) in namespace default, referenced by spec.claims[0].configs, not found' in condition(missing)["message"]
    assert [c["spec"] for c in found["status"]["claimConfigs"]] == [{"x": 1}] and "classConfigs" not in found["status"]


def test_a_config_of_a_kind_not_yet_served_waits_for_its_crd_and_object():
    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 1))
        ref = {"apiVersion": "foozer.example.com/v1alpha1", "kind": "FoozerConfig", "name": "fast"}
        await create(client, claim("c", detail("gpu", configs=[ref])))
        await until(client, "c", reason_is(kinds.CONFIG_NOT_FOUND))
        await create(client, FOOZER_CONFIG_CRD)
        config = {"apiVersion": ref["apiVersion"], "kind": "FoozerConfig", "metadata": {"name": "fast", "namespace": "default"}}
        await client.create(FOOZER_CONFIG, config)
        return await until(client, "c", reason_is(kinds.ALLOCATED))

    assert run(scenario)["status"]["claimConfigs"][0]["metadata"]["name"] == "fast"


def test_a_conflict_on_the_status_write_requeues_and_the_claim_is_allocated():
    class ConflictOnce(LocalClient):
        conflicts = 1

        async def update_status(self, kind, obj):
            if self.conflicts:
                self.conflicts -= 1
                raise errors.conflict(errors.GroupResource("devmgmtproto.k8s.io", "deviceclaims"), obj["metadata"]["name"])
            return await super().update_status(kind, obj)

    async def main():
        server = app_.build(Settings())
        client = ConflictOnce(server.registry)
        allocator = Allocator(client)
        task = asyncio.create_task(allocator.run())
        try:
            await create(client, device_class("gpu"), pool("p", 1), claim("c"))
            return await asyncio.wait_for(until(client, "c", reason_is(kinds.ALLOCATED)), 10), client.conflicts
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    found, left = asyncio.run(main())
    assert held(found) == ["p/dev-00"] and left == 0


def test_a_restarted_allocator_rebuilds_what_is_held_from_the_statuses():
    async def main():
        server = app_.build(Settings())
        client = LocalClient(server.registry)
        first = Allocator(client)
        task = asyncio.create_task(first.run())
        await create(client, device_class("gpu"), pool("p", 2), claim("a"))
        await asyncio.wait_for(until(client, "a", reason_is(kinds.ALLOCATED)), 10)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await create(client, claim("b"), claim("c"))
        second = Allocator(client)
        task = asyncio.create_task(second.run())
        try:
            b = await asyncio.wait_for(until(client, "b", reason_is(kinds.ALLOCATED)), 10)
            c = await asyncio.wait_for(until(client, "c", reason_is(kinds.UNSATISFIABLE)), 10)
            return held(b), condition(c)["message"]
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    b, message = asyncio.run(main())
    assert b == ["p/dev-01"] and "1 had too few free devices" in message


def test_an_unchanged_outcome_is_not_written_or_recorded_again():
    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 1), claim("c", detail("gpu", count=2)))
        first = await until(client, "c", reason_is(kinds.UNSATISFIABLE))
        await create(client, device_class("other", driver="vendor-b"))  # wakes the claim; changes nothing for it
        await create(client, claim("probe"))
        await until(client, "probe", reason_is(kinds.ALLOCATED))
        now = await client.get(kinds.CLAIMS, "default", "c")
        return first["metadata"]["resourceVersion"], now["metadata"]["resourceVersion"], await events_of(client, "c")

    before, after, events = run(scenario)
    assert before == after and events == [("Unsatisfiable", "Warning")]


def test_privileged_claims_are_allocated_with_admin_access():
    async def scenario(client, allocator):
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops", "labels": {kinds.ADMIN_ACCESS_LABEL: "true"}}}
        await create(client, namespace, device_class("gpu"), pool("p", 1), claim("user"))
        await until(client, "user", reason_is(kinds.ALLOCATED))
        await create(client, claim("watch", namespace="ops", kind="DevicePrivilegedClaim"))
        return await until(client, "watch", reason_is(kinds.ALLOCATED), kind=kinds.PRIVILEGED_CLAIMS, namespace="ops")

    found = run(scenario)
    assert found["status"]["allocations"] == [{"devicePoolName": "p", "deviceName": "dev-00", "adminAccess": True}]


SLOW = "[" + ",".join(str(i) for i in range(99)) + "]"
SLOW = f"{SLOW}.all(i, {SLOW}.all(j, device.size + 1 > 0))"  # past INLINE_COST: planned off the loop


def test_informer_events_wait_while_a_cycle_plans_in_the_worker_thread_and_explain_waits_for_the_cycle():
    """The worker thread's plan waits at a gate until the test has seen q's event held: the cycle
    is still planning then however fast or slow the machine is (no race with the evaluation)."""
    entered, release = threading.Event(), threading.Event()

    async def scenario(client, allocator):
        plan_on = allocator.planner.plan

        def gated(claim, **options):
            if threading.current_thread() is not threading.main_thread():
                entered.set()
                release.wait(30)
            return plan_on(claim, **options)

        allocator.planner.plan = gated
        await create(client, device_class("gpu"), pool("p", [{"name": "a", "attributes": [{"name": "size", "intValue": 1}]}]))
        await create(client, claim("c", detail("gpu", constraints=SLOW)))
        while not entered.is_set():  # the cycle plans in the worker thread
            await asyncio.sleep(0.01)
        explaining = asyncio.create_task(explain_claim(allocator, client, kinds.ClaimKey("default", "c")))
        await create(client, pool("q", [{"name": "b", "attributes": [{"name": "size", "intValue": 2}]}], node="node-b"))
        while not allocator.held:  # q's ADDED event arrived, and waits
            await asyncio.sleep(0)
        assert "q" not in allocator.cache.pools and not explaining.done()
        release.set()
        report = await explaining  # after the cycle (its own hold applied q's event)
        assert "q" in allocator.cache.pools and allocator.held is None
        return report, await until(client, "c", reason_is(kinds.ALLOCATED))

    try:
        report, found = run(scenario, limits=Limits(seconds=60))  # the evaluator's speed is not the point
    finally:
        release.set()
    assert held(found) == ["p/a"]
    assert report["result"]["reason"] == kinds.ALLOCATED  # explained with the claim's own device put back


def test_an_injected_fake_clock_drives_the_condition_and_event_timestamps():
    from datetime import datetime, timezone

    from mockapi.clock import FakeClock

    fake = FakeClock(datetime(2030, 5, 6, 7, 8, 9, tzinfo=timezone.utc))

    async def scenario(client, allocator):
        await create(client, device_class("gpu"), pool("p", 1), claim("c", detail("gpu", count=1)))
        found = await until(client, "c", reason_is(kinds.ALLOCATED))
        items, _ = await client.list(Kind("v1", "Event"), "default")
        return found, [e for e in items if e["involvedObject"]["name"] == "c"]

    found, events = run(scenario, clock=fake)
    assert condition(found)["lastTransitionTime"] == "2030-05-06T07:08:09Z"
    assert [e["lastTimestamp"] for e in events] == ["2030-05-06T07:08:09Z"]


def test_a_fake_clocks_monotonic_time_jumps_with_advance_so_a_backoff_is_over_at_once():
    from mockapi.clock import FakeClock
    from mockapi.controllers.allocator.queue import WorkQueue

    fake = FakeClock()
    queue = WorkQueue(clock=fake.monotonic, initial_backoff=60.0)
    key = kinds.ClaimKey("default", "c")
    queue.backoff(key, ("", "default", "c", ""))
    assert queue.tiers()["backoff"] == [key]
    fake.advance(61)
    assert asyncio.run(asyncio.wait_for(queue.get(), 1)) == key
