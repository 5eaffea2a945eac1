"""The search budget: steps and seconds of work per allocation cycle (ALLOCATOR.md, Search).

The seconds are the cycle's own work (:func:`work_time`): the CPU time of the thread that plans,
less the garbage collections that ran in it, plus the time it waits on the isolated evaluator
(:meth:`Budget.charge`). Not wall time: on a loaded machine, or while the event loop holds the
GIL serving requests, wall time runs on while the cycle does nothing, and a claim that fits would
fail with AllocationTimeout depending on what else the machine did (a 1 ms cycle was seen at
250 ms behind a full collection of a large heap).

A cycle first runs on the event loop with a *slice* (:data:`INLINE_SLICE`, wall time: it bounds
how long the loop is held): when the slice is used up, or the cycle would evaluate an expression
too costly for the loop, :class:`Preempted` stops it and the cycle runs again in the allocator's
worker thread, with the whole budget."""

from __future__ import annotations

import gc
import threading
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


class _Collections(threading.local):
    seconds = 0.0  # CPU time the garbage collector took in this thread
    started = 0.0


_collections = _Collections()


def _on_collection(phase: str, info: dict, *, _state=_collections, _now=time.thread_time) -> None:
    if phase == "start":
        _state.started = _now()
    else:
        _state.seconds += _now() - _state.started


gc.callbacks.append(_on_collection)


def work_time(*, _now=time.thread_time, _state=_collections) -> float:
    """The calling thread's CPU time less its garbage collections: what a budget measures."""
    return _now() - _state.seconds


class Budget:
    __slots__ = ("limits", "steps", "deadline", "slice_end", "may_wait", "_clock", "_work")

    def __init__(
        self, limits: Limits = Limits(), *, clock=time.monotonic, work_clock=work_time, slice_seconds: float | None = None, may_wait: bool = True
    ) -> None:
        self.limits = limits
        self.may_wait = may_wait  # whether work outside the process (the isolated evaluator) may be waited for
        self.steps = 0
        self._clock = clock  # wall time, for the slice
        self._work = work_clock  # the cycle's work, for the deadline
        self.deadline = work_clock() + limits.seconds
        self.slice_end = None if slice_seconds is None else clock() + slice_seconds

    def spend(self, steps: int = 1) -> None:
        self.steps += steps
        if self.steps > self.limits.steps:
            raise Exhausted()
        if self.steps & 255 == 0:
            self.check_time()

    def check_time(self) -> None:
        if self._work() > self.deadline:
            raise Exhausted()
        if self.slice_end is not None and self._clock() > self.slice_end:
            raise Preempted()

    def remaining(self) -> float:
        """Seconds of work left (negative once the deadline has passed)."""
        return self.deadline - self._work()

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` of work done elsewhere for this cycle (waiting on the isolated evaluator)."""
        self.deadline -= seconds

    @property
    def inline(self) -> bool:
        """Whether this is an attempt on the event loop's thread (bounded by a slice)."""
        return self.slice_end is not None

    def off_loop(self) -> None:
        """Work that must not run on the event loop is next: preempt an inline attempt."""
        if self.slice_end is not None:
            raise Preempted()

    def describe(self) -> str:
        return f"{self.limits.steps} steps or {self.limits.seconds:g}s of work"
