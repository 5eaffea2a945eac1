"""The search budget: steps and wall time per allocation cycle (ALLOCATOR.md, Search)."""

from __future__ import annotations

import time
from dataclasses import dataclass

DEFAULT_STEPS = 200_000
DEFAULT_SECONDS = 0.25


@dataclass(frozen=True)
class Limits:
    steps: int = DEFAULT_STEPS
    seconds: float = DEFAULT_SECONDS


class Exhausted(Exception):
    """The budget ran out (the cycle turns this into AllocationTimeout, with backoff)."""


class Budget:
    __slots__ = ("limits", "steps", "deadline", "_clock")

    def __init__(self, limits: Limits = Limits(), *, clock=time.monotonic) -> None:
        self.limits = limits
        self.steps = 0
        self._clock = clock
        self.deadline = clock() + limits.seconds

    def spend(self, steps: int = 1) -> None:
        self.steps += steps
        if self.steps > self.limits.steps or (self.steps & 255 == 0 and self._clock() > self.deadline):
            raise Exhausted()

    def check_time(self) -> None:
        if self._clock() > self.deadline:
            raise Exhausted()

    def describe(self) -> str:
        return f"{self.limits.steps} steps or {self.limits.seconds:g}s"
