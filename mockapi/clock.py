"""Injected time and identity, so tests can compare responses exactly.

Wall-clock time and random UUIDs are the defaults users get; tests pass a :class:`FakeClock` and
:class:`SequentialUIDs`.
"""

from __future__ import annotations

import binascii
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
    """A random (version 4) UUID in its canonical text, as ``str(uuid.uuid4())``: one of a block of
    them made from one ``os.urandom`` call (a getrandom syscall per UUID costs more than the rest
    of it on a VM), at a quarter of the cost of making one alone. Safe across threads: each text
    sits in one list only, taken by an atomic ``pop``; a forked child drops its parent's."""
    try:
        return _uids.pop()
    except IndexError:
        return _refill()


UIDS_PER_BLOCK = 256  # 4 KiB of randomness per syscall
_uids: list[str] = []
_HEX = b"0123456789abcdef"
_VARIANT = bytes.maketrans(_HEX, bytes(_HEX[(i & 3) | 8] for i in range(16)))  # RFC 4122: 10xx
# (place in the 37 characters of a UUID and its separator, place in its 32 hex digits) of each
# digit drawn at random: all but the version (place 14, always 4) and the variant (19, 10xx).
_DIGITS = list(zip([*range(8), *range(9, 13), *range(15, 18), *range(20, 23), *range(24, 36)],
                   [*range(8), *range(8, 12), *range(13, 16), *range(17, 20), *range(20, 32)]))


def _refill() -> str:
    block = uid_block(UIDS_PER_BLOCK)
    uid = block.pop()
    _uids.extend(block)  # threads refilling at once each add their own block: no text twice
    return uid


def uid_block(n: int) -> list[str]:
    """``n`` random version 4 UUIDs from one ``os.urandom(16 * n)``, laid out by strided copies
    (C loops, not one format per UUID). Each UUID keeps 122 random bits, as ``uuid.uuid4()``:
    the version digit replaces four of them and the variant digit keeps two of its four."""
    hexed = binascii.hexlify(os.urandom(16 * n))
    out = bytearray(b"-" * (37 * n))
    for place, digit in _DIGITS:
        out[place::37] = hexed[digit::32]
    out[14::37] = b"4" * n
    out[19::37] = hexed[16::32].translate(_VARIANT)
    out[36::37] = b" " * n
    return out.decode("ascii").split()


os.register_at_fork(after_in_child=_uids.clear)  # a child never hands out its parent's UUIDs


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
