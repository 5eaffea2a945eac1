"""Allocator progression control: when may the allocator take its next attempt at a claim.

moto's state manager, for DeviceClaims. Three modes:

- ``immediate`` (the default): every attempt goes ahead at once.
- ``delay``: each attempt waits ``delay`` seconds, ± up to ``jitter`` at random, so a test can see
  a claim pending for a while without the allocator being slow.
- ``manual``: an attempt goes ahead only when it is stepped (``POST /mockapi/v1/allocation/step``
  or ``mockapi.allocation.step(...)`` in a test), so "Pending" is testable without sleeps.

How the allocator uses it (all calls inside the server's event loop; nothing here blocks)::

    gate.bind(queue.add)                    # once, at start: how a parked claim comes back
    ...
    key = ClaimKey(namespace, name)         # mockapi.controllers.keys, the one claim key
    if not gate.admit(key):                 # before each attempt at a claim that is not allocated
        continue                            # parked: the gate calls queue.add(key) when it may go
    started = time.perf_counter()
    reason = run_cycle(...)                 # the Allocated condition's reason, e.g. "Allocated"
    gate.finished(key, reason=reason, seconds=time.perf_counter() - started)
    ...
    gate.forget(key)                        # when the claim is deleted

``admit`` never blocks a worker, so one parked claim never holds up the others. ``await
gate.wait(key)`` is the same check for code that runs one task per claim. A step that names a claim
the allocator has not reached yet is kept as a permit, so "create, then step" has no race.
"""

from __future__ import annotations

import asyncio
import random
from collections import OrderedDict
from typing import Callable

from mockapi.controllers.keys import ClaimKey

MODES = ("immediate", "delay", "manual")


Finished = Callable[[ClaimKey, str, float], None]


class AllocationGate:
    def __init__(self, mode: str = "immediate", *, delay: float = 1.0, jitter: float = 0.0, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()
        self._requeue: Callable[[ClaimKey], None] | None = None
        self._waiting: OrderedDict[ClaimKey, None] = OrderedDict()  # parked in manual mode, oldest first
        self._timers: dict[ClaimKey, asyncio.TimerHandle] = {}  # scheduled in delay mode
        self._permits: dict[ClaimKey, int] = {}
        self._futures: dict[ClaimKey, list[asyncio.Future]] = {}
        self.listeners: list[Finished] = []  # called by finished(): metrics
        self.mode, self.delay, self.jitter = "immediate", 0.0, 0.0
        self.configure(mode=mode, delay=delay, jitter=jitter)
        self._initial = (self.mode, self.delay, self.jitter)

    # ------------------------------------------------------------ the allocator's side
    def bind(self, requeue: Callable[[ClaimKey], None]) -> None:
        """Called once by the allocator: ``requeue(key)`` brings a released claim back to its queue."""
        self._requeue = requeue

    @property
    def bound(self) -> bool:
        """Whether an allocator is attached (so claims will actually progress)."""
        return self._requeue is not None

    def admit(self, key: ClaimKey) -> bool:
        """May the allocator attempt ``key`` now? False parks it; the gate requeues it when it may."""
        if self.mode == "immediate":
            return True
        if self._take_permit(key):
            return True
        if self.mode == "manual":
            self._waiting.setdefault(key, None)
        elif key not in self._timers:
            seconds = max(0.0, self.delay + self._rng.uniform(-self.jitter, self.jitter))
            self._timers[key] = asyncio.get_running_loop().call_later(seconds, self._expire, key)
        return False

    async def wait(self, key: ClaimKey) -> None:
        """Return when ``key`` may take its next attempt (``admit`` for one-task-per-claim code)."""
        while not self.admit(key):
            future = asyncio.get_running_loop().create_future()
            self._futures.setdefault(key, []).append(future)
            await future

    def finished(self, key: ClaimKey, *, reason: str, seconds: float) -> None:
        """Report one finished attempt and its outcome (the Allocated condition's reason)."""
        for listener in self.listeners:
            listener(key, reason, seconds)

    def forget(self, key: ClaimKey) -> None:
        """The claim is gone: drop whatever the gate held for it."""
        self._waiting.pop(key, None)
        self._permits.pop(key, None)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    # ------------------------------------------------------------ the control API's side
    def configure(self, *, mode: str | None = None, delay: float | None = None, jitter: float | None = None) -> None:
        """Change mode, delay or jitter. Leaving ``manual`` or ``delay`` releases what was held."""
        mode = self.mode if mode is None else mode
        delay = self.delay if delay is None else float(delay)
        jitter = self.jitter if jitter is None else float(jitter)
        if mode not in MODES:
            raise ValueError(f'unsupported allocation mode "{mode}": supported values: "immediate", "delay", "manual"')
        if delay < 0 or jitter < 0:
            raise ValueError("allocation delay and jitter must not be negative")
        previous = self.mode
        self.mode, self.delay, self.jitter = mode, delay, jitter
        if previous != mode:
            self._release_all()
            if mode == "immediate":
                self._permits.clear()

    def step(self, key: ClaimKey | None = None, *, all: bool = False) -> list[ClaimKey]:
        """Let claims take one attempt: ``key`` (kept as a permit if it is not waiting yet), else
        the oldest waiting claim, or every waiting claim with ``all``. Returns the claims stepped."""
        if all:
            keys = list(self._waiting)
        elif key is not None:
            keys = [key]
        else:
            keys = list(self._waiting)[:1]
        for one in keys:
            self._grant(one)
        return keys

    @staticmethod
    def key(text: str) -> ClaimKey:
        """``NAMESPACE/NAME`` or ``RESOURCE/NAMESPACE/NAME`` → a ClaimKey (ValueError if malformed)."""
        return ClaimKey.parse(text)

    def waiting(self) -> list[ClaimKey]:
        """Claims parked in manual mode (oldest first) and those whose delay is running."""
        return list(self._waiting) + [key for key in self._timers if key not in self._waiting]

    def reset(self) -> None:
        """Back to the start-up settings, holding nothing (the control API's reset)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._waiting.clear()
        self._permits.clear()
        mode, delay, jitter = self._initial
        self.mode, self.delay, self.jitter = mode, delay, jitter

    def describe(self) -> dict:
        return {
            "mode": self.mode,
            "delaySeconds": self.delay,
            "jitterSeconds": self.jitter,
            "controller": self.bound,
            "waiting": [key.to_dict() for key in self.waiting()],
        }

    # ------------------------------------------------------------ inside
    def _take_permit(self, key: ClaimKey) -> bool:
        count = self._permits.get(key, 0)
        if not count:
            return False
        if count == 1:
            del self._permits[key]
        else:
            self._permits[key] = count - 1
        return True

    def _grant(self, key: ClaimKey) -> None:
        self._waiting.pop(key, None)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        self._permits[key] = self._permits.get(key, 0) + 1
        self._release(key)

    def _expire(self, key: ClaimKey) -> None:
        self._timers.pop(key, None)
        self._permits[key] = self._permits.get(key, 0) + 1
        self._release(key)

    def _release(self, key: ClaimKey) -> None:
        if self._requeue is not None:
            self._requeue(key)
        for future in self._futures.pop(key, []):
            if not future.done():
                future.set_result(None)

    def _release_all(self) -> None:
        for key in list(self._waiting) + list(self._timers):
            self._grant(key)
