"""The work queue of claim keys, in three tiers (mini-kube-scheduler's scheduling queue):

- **active**: ready now, FIFO by creation time, then namespace/name;
- **backoff**: after a transient failure, waiting 1 s, doubling to 10 s per attempt;
- **unschedulable**: waiting for an event that could change the outcome (:meth:`wake`).

Keys, not events, are queued (level-triggered): a key is in at most one tier, and a key that is
added or woken while its claim is being processed goes back to active when the worker is done
with it. One claim that cannot fit never blocks the others.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from typing import Hashable

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0


class WorkQueue:
    def __init__(self, *, clock=time.monotonic, initial_backoff: float = INITIAL_BACKOFF, max_backoff: float = MAX_BACKOFF) -> None:
        self._clock = clock
        self._initial, self._max = initial_backoff, max_backoff
        self._active: list[tuple[tuple, Hashable]] = []
        self._queued: dict[Hashable, tuple] = {}  # key → its priority, while in active
        self._backoff: dict[Hashable, float] = {}  # key → when it is ready
        self._attempts: dict[Hashable, int] = {}
        self._parked: dict[Hashable, frozenset] = {}  # key → what it waits for
        self._processing: set[Hashable] = set()
        self._dirty: dict[Hashable, tuple] = {}
        self._priorities: dict[Hashable, tuple] = {}
        self._ready = asyncio.Event()

    # ------------------------------------------------------------- moving keys
    def add(self, key: Hashable, priority: tuple) -> None:
        """Something about this claim changed: make it active (from any tier)."""
        self._priorities[key] = priority
        if key in self._processing:
            self._dirty[key] = priority
            return
        self._parked.pop(key, None)
        self._backoff.pop(key, None)
        if key not in self._queued:
            self._queued[key] = priority
            heapq.heappush(self._active, (priority, key))
            self._ready.set()

    def backoff(self, key: Hashable, priority: tuple) -> float:
        """A transient failure: ready again after 1 s, 2 s, 4 s, ... up to 10 s. Returns the delay."""
        attempts = self._attempts[key] = self._attempts.get(key, 0) + 1
        delay = min(self._initial * 2 ** (attempts - 1), self._max)
        self._backoff[key] = self._clock() + delay
        self._dirty.pop(key, None)
        self._priorities[key] = priority
        self._ready.set()
        return delay

    def park(self, key: Hashable, priority: tuple, waits: frozenset) -> None:
        """Unschedulable until one of ``waits`` happens — unless something already did while it was
        being processed (then :meth:`done` makes it active again)."""
        self._priorities[key] = priority
        if key not in self._dirty:
            self._parked[key] = waits

    def wake(self, event: Hashable) -> int:
        """``event`` happened: every parked key waiting for it becomes active. Returns how many."""
        woken = [key for key, waits in self._parked.items() if event in waits]
        for key in sorted(woken, key=lambda k: self._priorities.get(k, ())):
            self.add(key, self._priorities.get(key, ()))
        for key in self._processing:
            self._dirty.setdefault(key, self._priorities.get(key, ()))
        return len(woken)

    def forget(self, key: Hashable) -> None:
        """The claim needs nothing more (allocated or gone): drop it from every tier."""
        self._parked.pop(key, None)
        self._backoff.pop(key, None)
        self._attempts.pop(key, None)
        self._dirty.pop(key, None)
        self._priorities.pop(key, None)
        if key in self._queued:
            del self._queued[key]  # its heap entry is skipped when popped

    # --------------------------------------------------------------- the worker
    async def get(self) -> Hashable:
        """The next active key (moving due backoff keys first); waits without busy-looping."""
        while True:
            self._promote_due()
            while self._active:
                priority, key = heapq.heappop(self._active)
                if self._queued.get(key) == priority:
                    del self._queued[key]
                    self._processing.add(key)
                    return key
            self._ready.clear()
            timeout = min(self._backoff.values()) - self._clock() if self._backoff else None
            try:  # not wait_for: on 3.11 it swallows a cancel that comes as the wait ends (gh-86296)
                async with asyncio.timeout(timeout):
                    await self._ready.wait()
            except TimeoutError:
                pass

    def done(self, key: Hashable) -> None:
        """The worker finished with ``key``; if it changed meanwhile, it is active again."""
        self._processing.discard(key)
        priority = self._dirty.pop(key, None)
        if priority is not None:
            self._parked.pop(key, None)
            self._backoff.pop(key, None)
            self.add(key, priority)

    def _promote_due(self) -> None:
        now = self._clock()
        for key in sorted(k for k, when in self._backoff.items() if when <= now):
            del self._backoff[key]
            priority = self._priorities.get(key, ())
            self._queued[key] = priority
            heapq.heappush(self._active, (priority, key))

    # ------------------------------------------------------------------ reading
    def tiers(self) -> dict[str, list]:
        return {"active": sorted(self._queued), "backoff": sorted(self._backoff), "unschedulable": sorted(self._parked)}

    def busy(self) -> bool:
        """Whether claims are waiting for the worker or being worked on now."""
        return bool(self._queued or self._processing)

    def __len__(self) -> int:
        return len(self._queued) + len(self._backoff) + len(self._parked)
