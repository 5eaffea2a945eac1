"""The watch wire format: event types and one NDJSON line per event (shared by store and HTTP)."""

from __future__ import annotations

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"

_PREFIX = {t: b'{"type":"' + t.encode() + b'","object":' for t in (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)}


def event_line(event_type: str, raw: bytes) -> bytes:
    """One line of the watch stream: ``{"type":...,"object":<raw>}\\n``."""
    return _PREFIX[event_type] + raw + b"}\n"
