"""The versioned in-memory object store (see :mod:`mockapi.store.memory`)."""

from mockapi.store.memory import Store
from mockapi.store.watch import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, Event, Packed, Stored, Watcher, event_line

__all__ = ["Store", "Stored", "Packed", "Event", "Watcher", "event_line", "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]
