"""The search budget: steps and wall time per allocation cycle (ALLOCATOR.md, Search).

A cycle first runs on the event loop with a *slice* (:data:`INLINE_SLICE`): when the slice is used
up, or the cycle would evaluate an expression too costly for the loop, :class:`Preempted` stops it
and the cycle runs again in the allocator's worker thread, with the whole budget."""

from __future__ import annotations

import time
from dataclasses import dataclass

DEFAULT_STEPS = 200_000
DEFAULT_SECONDS = 0.25
INLINE_SLICE = 0.002  # how long a cycle may hold the event loop before it moves off it


@dataclass(frozen=True)
class Limits:
    steps: int = DEFAULT_STEPS
    seconds: float = DEFAULT_SECONDS


class Exhausted(Exception):
    """The budget ran out (the cycle turns this into AllocationTimeout, with backoff); ``what``,
    the message, when something other than the search ran it out."""

    def __init__(self, what: str = "") -> None:
        super().__init__(what)
        self.what = what


class Preempted(Exception):
    """The cycle would hold the event loop too long: run it again off the loop."""


class Budget:
    __slots__ = ("limits", "steps", "deadline", "slice_end", "may_wait", "_clock")

    def __init__(self, limits: Limits = Limits(), *, clock=time.monotonic, slice_seconds: float | None = None, may_wait: bool = True) -> None:
        self.limits = limits
        self.may_wait = may_wait  # whether work outside the process (the isolated evaluator) may be waited for
        self.steps = 0
        self._clock = clock
        now = clock()
        self.deadline = now + limits.seconds
        self.slice_end = None if slice_seconds is None else now + slice_seconds

    def spend(self, steps: int = 1) -> None:
        self.steps += steps
        if self.steps > self.limits.steps:
            raise Exhausted()
        if self.steps & 255 == 0:
            self.check_time()

    def check_time(self) -> None:
        now = self._clock()
        if now > self.deadline:
            raise Exhausted()
        if self.slice_end is not None and now > self.slice_end:
            raise Preempted()

    @property
    def inline(self) -> bool:
        """Whether this is an attempt on the event loop's thread (bounded by a slice)."""
        return self.slice_end is not None

    def off_loop(self) -> None:
        """Work that must not run on the event loop is next: preempt an inline attempt."""
        if self.slice_end is not None:
            raise Preempted()

    def describe(self) -> str:
        return f"{self.limits.steps} steps or {self.limits.seconds:g}s"
