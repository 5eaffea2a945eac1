"""Invariants across random sequences: no node over its allocatable, every pod bound at most once,
and the queue never loses a pod (each pod added and not deleted is bound or still queued)."""

import asyncio

from hypothesis import HealthCheck, event, given, settings, strategies as st

from mockapi.controllers.scheduler import events, pods as pods_
from mockapi.controllers.scheduler.framework import CycleState, FitError, Framework, Snapshot
from mockapi.controllers.scheduler.queue import SchedulingQueue
from tests.scheduler.builders import Clock, node, pod

nodes_ = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=4)
pod_specs = st.tuples(st.integers(0, 3000), st.integers(0, 3), st.integers(0, 3))  # milli cpu, GiB, priority
OPS = ["add"] * 4 + ["delete", "node"] + ["schedule"] * 3
ops = st.lists(st.tuples(st.sampled_from(OPS), pod_specs), min_size=5, max_size=40)


def within_allocatable(snapshot: Snapshot) -> bool:
    for info in snapshot.node_infos():
        if len(info.pods) > info.allocatable["pods"]:
            return False
        if any(info.requested.get(name, 0) > info.allocatable.get(name, 0) for name in ("cpu", "memory")):
            return False
    return True


class World:
    def __init__(self, node_specs) -> None:
        self.clock = Clock()
        self.bound: list[str] = []
        self.fwk = Framework(binder=self._bind)
        self.queue = SchedulingQueue(monotonic=self.clock, hints=self.fwk.hints())
        self.snapshot = Snapshot([node(f"n{i}", cpu=str(c), memory=f"{m}Gi", pods=p) for i, (c, m, p) in enumerate(node_specs)])
        self.live: dict[str, dict] = {}
        self.count = 0
        self.preempted = 0

    async def _bind(self, p, node_name):
        self.bound.append(pods_.key(p))

    def add(self, spec) -> None:
        cpu, gib, priority = spec
        self.count += 1
        p = pod(f"p{self.count}", cpu=f"{cpu}m", memory=f"{gib}Gi", priority=priority)
        self.live[pods_.key(p)] = p
        self.queue.add(p)

    def delete(self, index: int) -> None:
        if not self.live:
            return
        key = sorted(self.live)[index % len(self.live)]
        del self.live[key]
        self.queue.delete(key)
        if self.snapshot.remove_pod(key):
            self.queue.on_event(events.POD_DELETE)

    def add_node(self, cpu: int) -> None:
        self.snapshot.set_node(node(f"extra{len(self.snapshot)}", cpu=str(cpu)))
        self.queue.on_event(events.NODE_ADD)

    async def schedule(self, times: int) -> None:
        for _ in range(times):
            info = self.queue.pop_nowait()
            if info is None:
                return
            state = CycleState()
            result, status = self.fwk.scheduling_cycle(state, info.pod, self.snapshot)
            if isinstance(result, FitError):
                for victim in result.victims:
                    self.preempted += 1
                    self.delete(sorted(self.live).index(pods_.key(victim)))
                self.queue.add_unschedulable(info, result.diagnosis.unschedulable_plugins)
                continue
            assert status.success
            bound = await self.fwk.bind(state, info.pod, result.node, self.snapshot)
            assert bound.success
            self.queue.done(info.key)

    def accounted(self) -> bool:
        return all(key in self.queue or key in self.snapshot.pod_node for key in self.live)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes_, ops)
def test_no_node_over_allocatable_every_pod_bound_once_and_none_lost(node_specs, operations):
    async def scenario():
        world = World(node_specs)
        for op, value in operations:
            if op == "add":
                world.add(value)
            elif op == "delete":
                world.delete(value[0])
            elif op == "node":
                world.add_node(1 + value[1])
            else:
                await world.schedule(1 + value[2])
                world.clock.advance(11)  # every backoff expires
            assert within_allocatable(world.snapshot)
            assert len(world.bound) == len(set(world.bound))
            assert world.accounted()
        return world

    world = asyncio.run(scenario())
    event(f"bound {min(len(world.bound), 5)}+, preempted {min(world.preempted, 2)}+")

