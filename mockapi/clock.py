"""Injected time and identity, so tests can compare responses exactly.

Wall-clock time and random UUIDs are the defaults users get; tests pass a :class:`FakeClock` and
:class:`SequentialUIDs`.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from datetime import datetime, timedelta, timezone
from typing import Callable, Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Wall-clock time (timestamps written into objects)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (backoffs, budgets, durations)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    monotonic = staticmethod(time.monotonic)  # no wrapper: budgets read it inside the planner


class FakeClock:
    """A wall clock that only moves when told to (``advance``), starting at a fixed instant.

    Its monotonic clock runs with real time (so a server's backoffs still expire) and jumps forward
    by whatever ``advance`` adds."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2024, 1, 1, tzinfo=timezone.utc)
        self._skew = 0.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return time.monotonic() + self._skew

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._skew += seconds


UIDGenerator = Callable[[], str]


def random_uid() -> str:
    """A random (version 4) UUID in its canonical text, as ``str(uuid.uuid4())`` at a third of the cost."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class SequentialUIDs:
    """Deterministic UIDs: 00000000-0000-0000-0000-000000000001, ...2, ..."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def __call__(self) -> str:
        n = next(self._counter)
        return f"00000000-0000-0000-0000-{n:012d}"


def rfc3339(moment: datetime) -> str:
    """Seconds-precision RFC 3339 in UTC, as metav1.Time marshals: ``2024-01-01T00:00:00Z``.
    The text of the last second formatted is reused (every write stamps one or two times)."""
    global _last_second
    second = math.floor(moment.timestamp())
    last = _last_second  # one tuple, replaced whole: a reader on another thread sees a matching pair
    if last[0] == second:
        return last[1]
    text = moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last_second = (second, text)
    return text


_last_second: tuple = (None, "")


def rfc3339_micro(moment: datetime) -> str:
    """metav1.MicroTime: ``2024-01-01T00:00:00.000000Z``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
