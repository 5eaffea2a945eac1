"""The watch wire format: event types and one NDJSON line per event (shared by store and HTTP),
and the parsed form of those lines shared by the in-process watchers."""

from __future__ import annotations

import asyncio
import os

import orjson

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"

_PREFIX = {t: b'{"type":"' + t.encode() + b'","object":' for t in (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)}


def event_line(event_type: str, raw: bytes) -> bytes:
    """One line of the watch stream: ``{"type":...,"object":<raw>}\\n``."""
    return _PREFIX[event_type] + raw + b"}\n"


# ---------------------------------------------------------------- parsed events, shared in process
# The in-process watchers (the controllers' informers) read events as dicts. The store hands all its
# watchers the same line object, so each line is parsed once for all of them; and when the writer
# vouches for the object it committed (the store's own load, or a body nobody else holds: see
# Store.create's ``shared``), that very dict is shared instead and the line is not parsed at all.
# What a watch yields is therefore read-only: every controller copies before it changes an object.
SHARED_EVENTS = 1024  # at most this many lines' parsed forms are kept in a pass (a few MB at most)
# id(line) → (the line, kept alive; its events): the lines kept in this pass of the event loop, and
# in the pass before (two tables, turned at each pass while any is kept: see _turn)
_tables: list[dict[int, tuple[bytes, list]]] = [{}, {}]
_turning: list = [None]  # the loop whose next pass turns the tables, when a turn is due
# Tests set this (MOCKAPI_CHECK_SHARED_EVENTS=1 for servers they start in other processes): each
# shared object is compared, types included, with its line's parse when it is shared and when read.
checking = os.environ.get("MOCKAPI_CHECK_SHARED_EVENTS") == "1"


def parsed(line: bytes) -> list:
    """The watch events of ``line`` (one or more NDJSON lines, as the store queues them), as dicts:
    the shared ones when the line was shared or parsed lately, else parsed (and shared) now.

    Kept for one to two passes of the event loop: a write wakes every watcher of its resource at
    once and each drains its lines in one step (the informers' handlers do not await), so they all
    read the line in the pass after the write — or after the parse, for a line parsed by its first
    reader. Kept longer, the dicts outlived the young collections: a DevicePool create paid ~50 µs of
    cyclic GC for them (bench/write_stages.py)."""
    key = id(line)
    hit = _tables[0].get(key) or _tables[1].get(key)
    if hit is not None and hit[0] is line:
        if checking:
            _check(line, hit[1], "read")
        return hit[1]
    events = [orjson.loads(one) for one in line.splitlines()]
    _keep(line, events)
    return events


def share(line: bytes, event_type: str, obj: dict) -> None:
    """``obj`` is the object of the one event of ``line`` (``{"type": event_type, "object": obj}``),
    exactly as the line encodes it, and nobody changes it from now on: in-process watchers read it
    rather than a parse of the line. Outside a running event loop (nobody to read it), nothing."""
    events = [{"type": event_type, "object": obj}]
    if checking:
        _check(line, events, "shared")
    _keep(line, events)


def _keep(line: bytes, events: list) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    current = _tables[0]
    if len(current) >= SHARED_EVENTS:
        current.clear()
    current[id(line)] = (line, events)
    if _turning[0] is not loop:  # (servers in other threads each have their own loop)
        _turning[0] = loop
        loop.call_soon(_turn, loop)


def _turn(loop) -> None:
    """A pass of the loop: the lines kept in the last pass are forgotten, this pass's are kept for
    one more (a turn may come before the watchers a write woke in the same pass have read)."""
    previous = _tables[1]
    previous.clear()
    _tables[0], _tables[1] = previous, _tables[0]
    if _tables[1]:
        loop.call_soon(_turn, loop)
    else:
        _turning[0] = None


def _check(line: bytes, events: list, when: str) -> None:
    """Testing aid: ``events`` must be the parse of ``line``, JSON types exactly (a tuple for a
    list, a float for an int, a NaN, or a change made after the write would show here)."""
    fresh = [orjson.loads(one) for one in line.splitlines()]
    if not _same(fresh, events):
        raise AssertionError(f"a shared watch event ({when}) is not what its line says: {line[:300]!r}")


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b
