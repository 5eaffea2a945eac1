"""The scheduling queue, kube-scheduler's ``PriorityQueue`` in three tiers:

- **activeQ**: ready to be scheduled, by ``spec.priority`` (higher first), then creation time, then
  key (kube's ``PrioritySort``);
- **backoffQ**: failed recently; ready after 1 s, doubling per attempt up to 10 s (kube's
  ``podInitialBackoffDuration`` / ``podMaxBackoffDuration``), measured from the last failure on
  the injected monotonic clock;
- **unschedulablePods**: rejected by some plugins; parked with their names until a
  :class:`~.events.ClusterEvent` one of those plugins registered interest in (kube's
  QueueingHint idea, without per-pod hint functions), or until they have waited
  ``max_unschedulable`` seconds (kube's ``podMaxInUnschedulablePodsDuration``, 60 s: the periodic
  flush). A pod rejected by no particular plugin moves on any event, as in kube.

Moving back goes to backoffQ if the pod's backoff has not expired yet, else to activeQ. When activeQ
is empty, :meth:`pop` takes a pod from backoffQ before its backoff ends (kube-scheduler's
``SchedulerPopFromBackoffQ``, on by default since 1.33: a scheduler with nothing else to do retries
at once) — the pod whose backoff ends first, then by activeQ's order; a pod backing off after an
error (``add_backoff``: kube's podErrorBackoffQ) always waits its backoff out. Events that
arrive while a pod is being scheduled are remembered (kube's in-flight events): when the pod then
turns out unschedulable, one that could help sends it to backoff instead of parking it, so it never
waits for an event it missed. PreEnqueue plugins (``pre_enqueue``) may keep a pod out of activeQ
(gated); it is parked and re-checked when the pod is updated.

The queue holds pod dicts under their ``namespace/name`` key; a key is in at most one tier.
:meth:`pop` waits without busy-looping (an :class:`asyncio.Event`, and a timeout up to the next
backoff expiry or flush); :meth:`flush` moves whatever is due and may be called by a timer.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from mockapi.controllers.scheduler import events as events_, pods as pods_
from mockapi.controllers.scheduler.events import ClusterEvent

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
MAX_UNSCHEDULABLE = 60.0
GATED = "<gated>"  # stands in for the PreEnqueue plugin names while a pod is gated


@dataclass(eq=False)
class QueuedPod:
    """kube's ``QueuedPodInfo``: the pod, its attempts and the plugins that rejected it last."""

    pod: dict
    key: str
    timestamp: float  # when it last entered a tier (monotonic)
    attempts: int = 0
    unschedulable_plugins: frozenset = frozenset()
    backoff_until: float = 0.0
    gated_by: str = ""  # the PreEnqueue plugin that keeps it out of activeQ, if any
    errored: bool = False  # backing off after an error, not a verdict (kube's podErrorBackoffQ)
    order: tuple = field(default=(), repr=False)


class Closed(Exception):
    """:meth:`SchedulingQueue.pop` after :meth:`SchedulingQueue.close`."""


PreEnqueue = Callable[[dict], "str | None"]  # pod → the name of a plugin that gates it, or None


class SchedulingQueue:
    def __init__(
        self, *, monotonic: Callable[[], float] = time.monotonic, hints: Mapping[str, Iterable[ClusterEvent]] | None = None,
        pre_enqueue: PreEnqueue | None = None, initial_backoff: float = INITIAL_BACKOFF, max_backoff: float = MAX_BACKOFF,
        max_unschedulable: float = MAX_UNSCHEDULABLE,
    ) -> None:  # fmt: skip
        self._now = monotonic
        self.hints = {name: tuple(registered) for name, registered in (hints or {}).items()}
        self._pre_enqueue = pre_enqueue
        self._interest: dict = {}  # event → the plugins interested in it (for the hints below)
        self._interest_hints = None
        self._initial, self._max = initial_backoff, max_backoff
        self._max_unschedulable = max_unschedulable
        self._active: list[tuple[tuple, int, str]] = []  # heap of (order, seq, key)
        self._seq = itertools.count()
        self._in_active: dict[str, QueuedPod] = {}
        self._backoff: dict[str, QueuedPod] = {}
        self._unschedulable = _Parked()
        self._in_flight: dict[str, QueuedPod] = {}  # popped, being scheduled
        self._in_flight_events: dict[str, list[ClusterEvent]] = {}
        self._ready = asyncio.Event()
        self.closed = False

    # ------------------------------------------------------------------ informer side
    def add(self, pod: dict) -> None:
        """A new pod to schedule: activeQ (or parked, when a PreEnqueue plugin gates it)."""
        key = pods_.key(pod)
        if key in self._in_flight or self._tier_of(key) is not None:
            self.update(pod)
            return
        self._enqueue(QueuedPod(pod, key, self._now()))

    def update(self, pod: dict) -> None:
        """The pod changed: keep it where it is with the new object; a parked pod whose spec or
        labels changed may fit now (kube's ``isPodUpdated``) and moves back."""
        key = pods_.key(pod)
        if key in self._in_flight:
            self._in_flight[key].pod = pod
            return
        tier = self._tier_of(key)
        if tier is None:
            self._enqueue(QueuedPod(pod, key, self._now()))
            return
        info = tier[key]
        old, info.pod = info.pod, pod
        if tier is self._in_active:
            self._push(info)  # its order may have changed; the stale heap entry is skipped
        elif tier is self._unschedulable and (info.gated_by or _changed(old, pod)):  # a gate is asked again on any update
            del self._unschedulable[key]
            self._requeue(info)

    def delete(self, pod: dict | str) -> None:
        """The pod is gone (or bound, or no longer ours): out of every tier."""
        key = pod if isinstance(pod, str) else pods_.key(pod)
        for tier in (self._in_active, self._backoff, self._unschedulable, self._in_flight):
            tier.pop(key, None)
        self._in_flight_events.pop(key, None)

    def on_event(self, event: ClusterEvent) -> int:
        """Something happened in the cluster: parked pods that a plugin interested in it rejected
        move to backoffQ / activeQ (kube's ``MoveAllToActiveOrBackoffQueue``). Returns how many."""
        for key in self._in_flight:
            self._in_flight_events.setdefault(key, []).append(event)
        # a pod a PreEnqueue plugin gated moves on the events that plugin registered too (kube's
        # queueing hints: DynamicResources' claim added), and is gated again if still not ready
        parked = self._unschedulable
        if event == events_.UNSCHEDULABLE_TIMEOUT:
            candidates = parked.values()
        else:  # only the pods a plugin interested in the event rejected, or none in particular
            candidates = parked.rejected_by(self._interested(event))
        moving = [info for info in candidates if self._worth_requeuing(info, event)]
        for info in moving:
            del self._unschedulable[info.key]
            self._requeue(info)
        return len(moving)

    # ------------------------------------------------------------------ scheduler side
    async def pop(self) -> QueuedPod:
        """The next pod to schedule (waiting for one); it is in flight until :meth:`done`,
        :meth:`add_unschedulable` or :meth:`add_backoff`."""
        while True:
            self.flush()
            info = self._pop_active() or self._pop_backoff()
            if info is not None:
                return info
            self._ready.clear()
            await self._wait()

    def pop_nowait(self) -> QueuedPod | None:
        self.flush()
        return self._pop_active() or self._pop_backoff()

    def done(self, key: str) -> None:
        """The pod was scheduled (assumed or bound): the queue forgets it."""
        self._in_flight.pop(key, None)
        self._in_flight_events.pop(key, None)

    def add_unschedulable(self, info: QueuedPod, plugins: Iterable[str]) -> str:
        """The cycle found no node: park the pod with the plugins that rejected it — or, if an event
        that could help arrived meanwhile, back off instead. Returns the tier's name."""
        info.unschedulable_plugins, info.errored = frozenset(plugins), False
        missed = self._in_flight_events.pop(info.key, [])
        if self._in_flight.pop(info.key, None) is None:
            return ""  # deleted while it was being scheduled
        self._start_backoff(info)
        if any(self._worth_requeuing(info, event) for event in missed):
            self._backoff[info.key] = info
            self._ready.set()
            return "backoff"
        info.timestamp = self._now()
        self._unschedulable[info.key] = info
        return "unschedulable"

    def add_backoff(self, info: QueuedPod) -> str:
        """An error (not a verdict on the nodes): retry after the backoff (kube puts errored pods
        in backoffQ). Returns "backoff", or "" when the pod was deleted meanwhile."""
        self._in_flight_events.pop(info.key, None)
        if self._in_flight.pop(info.key, None) is None:
            return ""
        info.errored = True
        self._start_backoff(info)
        self._backoff[info.key] = info
        self._ready.set()
        return "backoff"

    def activate(self, keys) -> int:
        """Parked pods a plugin knows an event helps (kube's ``Activate``, as queueing hints that
        look at the event's object: DeviceClaims moves just the pod whose claim was created or
        allocated). Gated pods are gated again if still not ready. Returns how many moved."""
        moved = 0
        for key in keys:
            info = self._unschedulable.pop(key, None)
            if info is not None:
                self._requeue(info)
                moved += 1
            elif key in self._in_flight:  # being scheduled: if it fails, it backs off instead of parking (kube's EventForceActivate)
                self._in_flight_events.setdefault(key, []).append(events_.UNSCHEDULABLE_TIMEOUT)
        return moved

    def parked(self):
        """The parked pods (unschedulable or gated), for a plugin looking for those an event helps."""
        return [info.pod for info in self._unschedulable.values()]

    def flush(self) -> None:
        """Move what is due: expired backoffs to activeQ, and pods parked for longer than
        ``max_unschedulable`` seconds back (kube's ``flushUnschedulablePodsLeftover``)."""
        now = self._now()
        for key in [k for k, info in self._backoff.items() if info.backoff_until <= now]:
            self._push(self._backoff.pop(key))
        stale = [info for info in self._unschedulable.ungated.values() if now - info.timestamp >= self._max_unschedulable]
        for info in stale:
            del self._unschedulable[info.key]
            self._requeue(info)

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    # ------------------------------------------------------------------ reading
    def tiers(self) -> dict[str, list[str]]:
        return {
            "active": sorted(self._in_active), "backoff": sorted(self._backoff),
            "unschedulable": sorted(self._unschedulable), "inFlight": sorted(self._in_flight),
        }  # fmt: skip

    def get(self, key: str) -> QueuedPod | None:
        for tier in (self._in_active, self._backoff, self._unschedulable, self._in_flight):
            if key in tier:
                return tier[key]
        return None

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self._in_active) + len(self._backoff) + len(self._unschedulable) + len(self._in_flight)

    # ------------------------------------------------------------------ moving
    def _enqueue(self, info: QueuedPod) -> None:
        gate = self._pre_enqueue(info.pod) if self._pre_enqueue else None
        if gate:
            info.gated_by = gate
            info.unschedulable_plugins = frozenset({gate})
            self._unschedulable[info.key] = info
        else:
            info.gated_by = ""
            self._push(info)

    def _requeue(self, info: QueuedPod) -> None:
        """Back from unschedulablePods: gated again, still backing off, or active."""
        if self._pre_enqueue and self._pre_enqueue(info.pod):
            self._enqueue(info)
        elif info.backoff_until > self._now():
            self._backoff[info.key] = info
            self._ready.set()
        else:
            self._push(info)

    def _push(self, info: QueuedPod) -> None:
        info.order = _active_order(info)
        self._in_active[info.key] = info
        heapq.heappush(self._active, (info.order, next(self._seq), info.key))
        self._ready.set()

    def _pop_active(self) -> QueuedPod | None:
        while self._active:
            order, _, key = heapq.heappop(self._active)
            info = self._in_active.get(key)
            if info is not None and info.order == order:
                del self._in_active[key]
                return self._fly(info)
        return None

    def _pop_backoff(self) -> QueuedPod | None:
        """activeQ is empty: the backing-off pod (not after an error) whose backoff ends first, by
        activeQ's order among equals (kube's ``popBackoff`` from podBackoffQ)."""
        waiting = [info for info in self._backoff.values() if not info.errored]
        if not waiting:
            return None
        info = min(waiting, key=lambda i: (i.backoff_until, *_active_order(i)))
        del self._backoff[info.key]
        return self._fly(info)

    def _fly(self, info: QueuedPod) -> QueuedPod:
        info.attempts += 1
        self._in_flight[info.key] = info
        return info

    def _start_backoff(self, info: QueuedPod) -> None:
        info.backoff_until = self._now() + backoff_duration(info.attempts, initial=self._initial, maximum=self._max)

    def _worth_requeuing(self, info: QueuedPod, event: ClusterEvent) -> bool:
        if event == events_.UNSCHEDULABLE_TIMEOUT or not info.unschedulable_plugins:
            return True
        return not info.unschedulable_plugins.isdisjoint(self._interested(event))

    def _interested(self, event: ClusterEvent) -> frozenset:
        """The plugins that registered ``event`` (remembered per event: a burst of pod creations
        asks for the same one thousands of times, against every parked pod)."""
        found = self._interest.get(event)
        if found is None or self._interest_hints is not self.hints:
            if self._interest_hints is not self.hints:
                self._interest, self._interest_hints = {}, self.hints
            found = self._interest[event] = frozenset(name for name, registered in self.hints.items() if events_.interested(registered, event))
        return found

    def _tier_of(self, key: str) -> dict | None:
        for tier in (self._in_active, self._backoff, self._unschedulable):
            if key in tier:
                return tier
        return None

    async def _wait(self) -> None:
        due = [info.backoff_until for info in self._backoff.values()]
        due += [info.timestamp + self._max_unschedulable for info in self._unschedulable.ungated.values()]
        timeout = max(min(due) - self._now(), 0.0) if due else None
        try:  # not wait_for: on 3.11 it swallows a cancel that comes as the wait ends (gh-86296)
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        except TimeoutError:
            pass
        if self.closed:
            raise Closed("the scheduling queue is closed")


ANY_PLUGIN = ""  # the index entry of the pods no plugin in particular rejected (any event moves them)


class _Parked(dict):
    """unschedulablePods (key → :class:`QueuedPod`), indexed so that an event looks only at the
    pods it may help — those rejected by a plugin interested in it, or by none in particular — and
    the periodic flush only at the pods not gated (a burst parks thousands of pods waiting for
    their claims; every bound pod's event would otherwise walk them all). A pod's
    ``unschedulable_plugins`` and ``gated_by`` do not change while it is parked."""

    def __init__(self) -> None:
        super().__init__()
        self.by_plugin: dict[str, dict[str, QueuedPod]] = {}
        self.ungated: dict[str, QueuedPod] = {}

    def __setitem__(self, key: str, info: QueuedPod) -> None:
        if key in self:
            self._unindex(key, self[key])
        super().__setitem__(key, info)
        for name in info.unschedulable_plugins or (ANY_PLUGIN,):
            self.by_plugin.setdefault(name, {})[key] = info
        if not info.gated_by:
            self.ungated[key] = info

    def __delitem__(self, key: str) -> None:
        self._unindex(key, self[key])
        super().__delitem__(key)

    def pop(self, key: str, *default):
        if key not in self:
            return default[0] if default else super().pop(key)
        info = super().pop(key)
        self._unindex(key, info)
        return info

    def _unindex(self, key: str, info: QueuedPod) -> None:
        for name in info.unschedulable_plugins or (ANY_PLUGIN,):
            keys = self.by_plugin.get(name)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del self.by_plugin[name]
        self.ungated.pop(key, None)

    def rejected_by(self, plugins: frozenset) -> list[QueuedPod]:
        """The parked pods rejected by one of ``plugins`` or by no plugin in particular (the
        order does not matter: activeQ orders what moves)."""
        groups = [self.by_plugin[name] for name in (ANY_PLUGIN, *plugins) if name in self.by_plugin]
        if not groups:
            return []
        if len(groups) == 1:
            return list(groups[0].values())
        found: dict[str, QueuedPod] = {}
        for group in groups:
            found.update(group)
        return list(found.values())


def _active_order(info: QueuedPod) -> tuple:
    """activeQ's order (kube's PrioritySort): higher ``spec.priority`` first, then creation, then key."""
    return (-pods_.priority(info.pod), pods_.created(info.pod), info.key)


def backoff_duration(attempts: int, *, initial: float = INITIAL_BACKOFF, maximum: float = MAX_BACKOFF) -> float:
    """1 s, 2 s, 4 s, 8 s, 10 s, 10 s, ... for attempts 1, 2, 3, ..."""
    return min(initial * 2 ** max(attempts - 1, 0), maximum)


def _changed(old: dict, new: dict) -> bool:
    """kube's ``isPodUpdated``: anything but status, resourceVersion, generation and managedFields."""
    def strip(pod: dict) -> dict:
        meta = {k: v for k, v in pod.get("metadata", {}).items() if k not in ("resourceVersion", "generation", "managedFields")}
        return {**{k: v for k, v in pod.items() if k != "status"}, "metadata": meta}

    return strip(old) != strip(new)
