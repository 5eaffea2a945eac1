"""A FIFO of keys for controllers that need no priorities (client-go's workqueue, in small).

A key is queued at most once; a key added while a worker holds it is queued again when the worker
is done (so no change is lost and no key is worked on twice at once). ``add_after`` delays a key
(a pod's start delay, a grace period), ``retry`` backs off after a failure (0.1 s doubling to 10 s,
until ``forget``). Delays run on the injected monotonic clock: a test that moves a fake clock calls
:meth:`kick` so the waiting worker looks again.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import time
from typing import Callable, Hashable

INITIAL_BACKOFF = 0.1
MAX_BACKOFF = 10.0


class KeyQueue:
    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic, initial_backoff: float = INITIAL_BACKOFF, max_backoff: float = MAX_BACKOFF) -> None:
        self._monotonic = monotonic
        self._initial, self._max = initial_backoff, max_backoff
        self._fifo: collections.deque = collections.deque()
        self._queued: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._delayed: dict[Hashable, float] = {}  # key → when it is due
        self._due: list[tuple[float, int, Hashable]] = []  # a heap; entries not matching _delayed are stale
        self._order = itertools.count()
        self._failures: dict[Hashable, int] = {}
        self._ready = asyncio.Event()

    def add(self, key: Hashable) -> None:
        if key in self._processing:
            self._dirty.add(key)
        elif key not in self._queued:
            self._delayed.pop(key, None)
            self._queued.add(key)
            self._fifo.append(key)
            self._ready.set()

    def add_after(self, key: Hashable, delay: float) -> None:
        """Queue ``key`` in ``delay`` seconds (or sooner, if it is added or due earlier)."""
        if delay <= 0:
            self.add(key)
        elif key not in self._queued:
            due = self._monotonic() + delay
            if due < self._delayed.get(key, float("inf")):
                self._delayed[key] = due
                heapq.heappush(self._due, (due, next(self._order), key))
                self._ready.set()

    def retry(self, key: Hashable) -> float:
        """A failure: queue again after a growing delay. Returns the delay."""
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        delay = min(self._initial * 2 ** (failures - 1), self._max)
        self.add_after(key, delay)
        return delay

    def forget(self, key: Hashable) -> None:
        """A success: the next failure backs off from the start again."""
        self._failures.pop(key, None)

    def discard(self, key: Hashable) -> None:
        """Nothing more to do for ``key`` (its object is gone): drop a pending delay."""
        self._delayed.pop(key, None)
        self._failures.pop(key, None)

    def kick(self) -> None:
        """Look at the delayed keys again (the clock moved)."""
        self._ready.set()

    async def get(self) -> Hashable:
        while True:
            self._promote_due()
            if self._fifo:
                key = self._fifo.popleft()
                self._queued.discard(key)
                self._processing.add(key)
                return key
            self._ready.clear()
            timeout = max(self._due[0][0] - self._monotonic(), 0) if self._due else None
            try:  # not wait_for: on 3.11 it swallows a cancel that comes as the wait ends (gh-86296)
                async with asyncio.timeout(timeout):
                    await self._ready.wait()
            except TimeoutError:
                pass

    def done(self, key: Hashable) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    def _promote_due(self) -> None:
        now = self._monotonic()
        while self._due and self._due[0][0] <= now:
            due, _, key = heapq.heappop(self._due)
            if self._delayed.get(key) == due:
                del self._delayed[key]
                self.add(key)

    def busy(self) -> bool:
        """Keys ready to be worked on, or being worked on (delayed ones do not count)."""
        self._promote_due()
        return bool(self._fifo or self._processing)

    def idle(self) -> bool:
        """Nothing queued, delayed or being worked on."""
        return not self._fifo and not self._processing and not self._delayed

    def __len__(self) -> int:
        return len(self._queued) + len(self._delayed)
