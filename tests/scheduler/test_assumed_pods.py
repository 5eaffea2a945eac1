"""Assumed pods never expire, as in kube-scheduler since 1.23 (``durationToExpireAssumedPod = 0``,
kubernetes#106361; the cache in pkg/scheduler/backend/cache has no TTL at all now): a pod bound
whose update the informer has not delivered yet keeps counting on its node, however long that
takes, until its event (or its deletion) arrives; a pod whose binding failed is forgotten at once."""

import asyncio

from mockapi.clock import FakeClock
from tests.scheduler.builders import node, pod
from tests.scheduler.fake_client import NODES, PODS, FakeClient
from tests.scheduler.test_controller import condition, run, until


class SilentBinds(FakeClient):
    """Binds as the API server does, but the pod's update never reaches the watchers (a slow or
    stuck informer): the scheduler only knows the pod as it assumed it."""

    async def bind(self, namespace, name, uid, node_name):
        self.writes.append(("bind", namespace, name, uid, node_name))
        self.bindings.append((f"{namespace}/{name}", node_name))
        stored = self.objects[PODS][(namespace, name)]
        stored["spec"]["nodeName"] = node_name

    def confirm(self, namespace, name):
        stored = self.objects[PODS][(namespace, name)]
        stored["metadata"]["labels"] = {"confirmed": "yes"}  # tells the informer's copy from the assumed one
        self._emit(PODS, "MODIFIED", stored)


def test_a_bound_but_unconfirmed_pod_keeps_its_room_however_long_its_event_takes():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(PODS, pod("first", cpu="2"))
        await until(lambda: fake.bindings == [("default/first", "a")] and not scheduler._binding)
        scheduler.clock.advance(3600)  # an hour: kube's old 30 s TTL would long have expired it
        scheduler.queue.flush()
        assumed = scheduler.snapshot.pod_node.get("default/first")
        fake.put(PODS, pod("second", cpu="2"))
        await until(lambda: condition(fake, "second") is not None)
        return assumed, condition(fake, "second")["message"], scheduler.snapshot.by_name["a"].requested.get("cpu")

    assumed, message, requested = run(scenario, client=SilentBinds(), clock=FakeClock())
    assert assumed == "a" and requested == 2000
    assert message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_the_confirming_event_replaces_the_assumed_pod_and_its_deletion_frees_the_room():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(PODS, pod("first", cpu="2"))
        await until(lambda: fake.bindings == [("default/first", "a")] and not scheduler._binding)
        fake.confirm("default", "first")
        await until(lambda: scheduler.snapshot.by_name["a"].pods["default/first"]["metadata"].get("labels") == {"confirmed": "yes"})
        confirmed = scheduler.snapshot.pod_node.get("default/first")
        fake.put(PODS, pod("second", cpu="2"))
        await until(lambda: condition(fake, "second") is not None)
        await fake.delete(PODS, "default", "first")
        await until(lambda: ("default/second", "a") in fake.bindings)
        return confirmed

    assert run(scenario, client=SilentBinds()) == "a"


def test_a_pod_whose_binding_failed_is_forgotten_at_once():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(PODS, pod("doomed", cpu="2"))
        await until(lambda: any(w[0] == "bind" for w in fake.writes) and not scheduler._binding)
        await asyncio.sleep(0.01)
        return scheduler.snapshot.pod_node.get("default/doomed"), scheduler.snapshot.by_name["a"].requested.get("cpu", 0)

    assert run(scenario, client=FakeClient(fail_bind={"doomed"})) == (None, 0)
