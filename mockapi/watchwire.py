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
SHARED_EVENTS = 1024  # at most this many lines' parsed forms are kept at once (a few MB at most)
_shared: dict[int, tuple[bytes, list]] = {}  # id(line) → (the line, kept alive; its events)
_forgetting: list = [None]  # the loop whose next passes forget _shared, when a forgetting is due
# Tests set this (MOCKAPI_CHECK_SHARED_EVENTS=1 for servers they start in other processes): each
# shared object is compared, types included, with its line's parse when it is shared and when read.
checking = os.environ.get("MOCKAPI_CHECK_SHARED_EVENTS") == "1"


def parsed(line: bytes) -> list:
    """The watch events of ``line`` (one or more NDJSON lines, as the store queues them), as dicts:
    the shared ones when the line was shared or parsed lately, else parsed (and shared) now.

    Kept for about two passes of the event loop: a write wakes every watcher of its resource at
    once and each drains its lines in one step (the informers' handlers do not await), so they all
    read the line in the pass after the write. Kept longer, the dicts outlived the young
    collections: a DevicePool create paid ~50 µs of cyclic GC for them (bench/write_stages.py)."""
    hit = _shared.get(id(line))
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
    if len(_shared) >= SHARED_EVENTS:
        _shared.clear()
    _shared[id(line)] = (line, events)
    if _forgetting[0] is not loop:  # (servers in other threads each have their own loop)
        _forgetting[0] = loop
        # two passes on: a write's line is shared before its watchers are woken (in this pass),
        # and they read it in the next one, after callbacks scheduled before their wake-ups
        loop.call_soon(loop.call_soon, _forget)


def _forget() -> None:
    _forgetting[0] = None
    _shared.clear()


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
