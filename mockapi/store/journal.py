"""The journal: every committed write of the store, made durable in SQLite (``--data-dir``).

Opt-in persistence, kine's way (k3s keeps Kubernetes in SQLite): one table holds the current
version of every object, ``(group, resource, namespace, name) → (resourceVersion, canonical
bytes, labels, selectable-field values, CRC-32)``, and meta rows the last resourceVersion handed
out and whether the last server closed the journal cleanly. The bytes are the store's own
(:class:`~mockapi.store.watch.Stored`) and the parsed facts beside them too, so a restart neither
serializes nor parses an object; the checksum catches contents damaged on disk, which SQLite does not.

**Group commit.** :meth:`Journal.record` only notes a write (the last version of a key wins) and,
once per event-loop turn, hands what the turn wrote to a writer thread: everything one request
wrote synchronously (a namespace and its content, a CRD and its objects) lands in one
transaction, never half. The writer commits every batch waiting for it in one transaction with
``synchronous=FULL`` in WAL mode (the WAL is fsynced before the commit returns), off the event loop.
A response to a write awaits :meth:`Journal.durable` for the resourceVersion it saw: one fsync
covers every write of the batch, so throughput is not capped at the disk's fsync rate.

**Compaction.** Upserts keep one row per live object; deleted objects leave their row at once. The
WAL is checkpointed and truncated when the writer has been idle for ``checkpoint_interval`` seconds
and at close (``wal_checkpoint(TRUNCATE)``), freed pages are given back (``auto_vacuum=INCREMENTAL``),
and ``journal_size_limit`` bounds the WAL between checkpoints: the files stay proportional to the
live objects.

A second process on the same directory is refused (an exclusive ``flock`` on ``DIR/lock``), as are
a file that is not our database and one written by a newer format: :class:`JournalError`, one line.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
import threading
import time
import zlib
from pathlib import Path
from typing import Iterator, NamedTuple

import orjson
from mockapi import errors
from mockapi.store.memory import Store
from mockapi.store.watch import DELETED, Event, Stored

log = logging.getLogger("mockapi.journal")

FORMAT = 1
DATABASE = "mockapi.db"
LOCK = "lock"
CHECKPOINT_INTERVAL = 5.0  # seconds of writer idleness before the WAL is checkpointed and truncated
WAL_LIMIT = 64 * 1024 * 1024  # bytes the WAL is truncated to after a checkpoint (journal_size_limit)
# Rows of a few KB: a rowid table with a unique key (a WITHOUT ROWID table suits small rows only).
# Beside the bytes, what the store keeps parsed (labels; the selectable-field values, which depend on
# the kind's selectable fields: `indexes` says which they were), so a restart parses no object.
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS objects (grp TEXT NOT NULL, resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    " rv INTEGER NOT NULL, raw BLOB NOT NULL, labels BLOB, fields BLOB, crc INTEGER NOT NULL, UNIQUE (grp, resource, namespace, name))",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS indexes (grp TEXT NOT NULL, resource TEXT NOT NULL, paths TEXT NOT NULL, PRIMARY KEY (grp, resource))",
)
_UPSERT = "INSERT OR REPLACE INTO objects (grp, resource, namespace, name, rv, raw, labels, fields, crc) VALUES "
_ROWS_PER_UPSERT = 64  # rows per INSERT statement (a few statements per batch, each one step)
_DELETE = "DELETE FROM objects WHERE grp = ? AND resource = ? AND namespace = ? AND name = ?"
_SET_RV = "INSERT OR REPLACE INTO meta (key, value) VALUES ('rv', ?)"
_SET_FIELDS = "UPDATE objects SET fields = ?, crc = ? WHERE grp = ? AND resource = ? AND namespace = ? AND name = ?"
_SET_PATHS = "INSERT OR REPLACE INTO indexes (grp, resource, paths) VALUES (?, ?, ?)"

Key = tuple[str, str, str, str]  # group, resource, namespace, name


class JournalError(Exception):
    """The data directory cannot be used: says which and why, in one line."""


class Row(NamedTuple):
    group: str
    resource: str
    namespace: str
    name: str
    rv: int
    raw: bytes
    labels: bytes | None  # JSON of the labels, or None for none
    fields: bytes | None  # JSON of the selectable-field values, or None for none
    crc: int  # CRC-32 of raw, labels and fields: SQLite checks its structures, not what a row holds


class Journal:
    def __init__(self, directory: Path, *, checkpoint_interval: float = CHECKPOINT_INTERVAL) -> None:
        self.directory = Path(directory)
        self._lock_fd = _lock(self.directory)
        try:
            self._db = _open(self.directory / DATABASE)
            self.resource_version = _stored_rv(self._db, self.directory / DATABASE)
            # Whether the last server closed the journal (everything it handed out was written), or
            # stopped without (a crash, kill -9: it may have shown versions it never wrote).
            self.clean = _stored_meta(self._db, "clean", 1) == 1
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('clean', 0)")
        except sqlite3.Error as exc:
            os.close(self._lock_fd)
            raise JournalError(f"{self.directory / DATABASE}: cannot use it: {exc}") from None
        except BaseException:
            os.close(self._lock_fd)
            raise
        self.checkpoint_interval = checkpoint_interval
        self.durable_rv = self.resource_version  # everything up to here is on disk
        self.failed: Exception | None = None
        self.batches = 0  # transactions committed (for tests and the benchmark)
        self._pending: dict[Key, tuple[int, Stored | None]] = {}
        self._pending_rv = 0
        self._scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: list[tuple[int, asyncio.Future]] = []
        self._queue: list[tuple[dict[Key, tuple[int, Stored | None]], int]] = []
        self._cond = threading.Condition()
        self._closing = False
        self._compact_asked: threading.Event | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ start-up
    def rows(self, *, only: tuple[str, str] | None = None, besides: tuple[str, str] | None = None) -> Iterator[Row]:
        """The stored objects (read before :meth:`start`): of one (group, resource), or all others."""
        query, args = "SELECT grp, resource, namespace, name, rv, raw, labels, fields, crc FROM objects", ()
        if only is not None:
            query, args = query + " WHERE grp = ? AND resource = ?", only
        elif besides is not None:
            query, args = query + " WHERE NOT (grp = ? AND resource = ?)", besides
        try:
            for row in self._db.execute(query, args):
                row = Row(*row)
                if _crc(row.raw, row.labels, row.fields) != row.crc:
                    where = "/".join(filter(None, (row.resource + ("." + row.group if row.group else ""), row.namespace, row.name)))
                    raise JournalError(f"{self.directory / DATABASE}: damaged: the stored {where} does not match its checksum")
                yield row
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{self.directory / DATABASE}: not a mockapi data directory, or damaged: cannot read the stored objects: {exc}") from None

    def indexes(self) -> dict[tuple[str, str], str]:
        """(group, resource) → the selectable-field paths (JSON) its rows' ``fields`` were made with."""
        return {(group, resource): paths for group, resource, paths in self._db.execute("SELECT grp, resource, paths FROM indexes")}

    def reindex(self, group: str, resource: str, paths: str, fields: list[tuple[Row, bytes | None]]) -> None:
        """Record a resource's selectable-field paths, with new values (JSON) for rows made with
        others, in one transaction (before :meth:`start`)."""
        updates = [(value, _crc(row.raw, row.labels, value), group, resource, row.namespace, row.name) for row, value in fields]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(_SET_FIELDS, updates)
            self._db.execute(_SET_PATHS, (group, resource, paths))

    def resume(self, rv: int) -> None:
        """The resourceVersion the store continues after (before :meth:`start`), kept at once."""
        self.resource_version = self.durable_rv = rv
        self._db.execute(_SET_RV, (rv,))

    def start(self) -> None:
        """Start the writer thread (after the stored objects were read)."""
        self._thread = threading.Thread(target=self._write_loop, name="mockapi-journal", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the write path
    def record(self, event: Event) -> None:
        """Note one committed write; it is handed to the writer at the end of this event-loop turn."""
        resource, obj = event.resource, event.obj
        self._pending[(resource.group, resource.resource, obj.namespace, obj.name)] = (event.rv, None if event.type == DELETED else obj)
        self._pending_rv = event.rv
        if not self._scheduled:
            self._scheduled = True
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop runs (start-up, --load): hand it over now
                self._handoff()
                return
            self._loop = loop
            loop.call_soon(self._handoff)

    def _handoff(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        batch, self._pending = self._pending, {}
        with self._cond:
            self._queue.append((batch, self._pending_rv))
            self._cond.notify()

    async def durable(self, rv: int) -> None:
        """Return once every write up to ``rv`` is on disk; raise 500 if the journal failed."""
        if self.failed is not None:
            raise _failure(self.failed)
        if self.durable_rv >= rv:
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((rv, future))
        await future

    def sync(self, timeout: float = 300.0) -> None:
        """Block until everything recorded so far is on disk (start-up, outside the event loop)."""
        self._handoff()
        target = self._pending_rv
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.durable_rv < target and self.failed is None and time.monotonic() < deadline:
                self._cond.wait(0.05)
        if self.failed is not None:
            raise JournalError(f"{self.directory / DATABASE}: {self.failed}")
        if self.durable_rv < target:
            raise JournalError(f"{self.directory / DATABASE}: the writes of the start-up were not on disk after {timeout:.0f} seconds")

    def _committed(self, rv: int) -> None:  # in the event loop
        waiters, still = self._waiters, []
        for waiter in waiters:
            if waiter[0] <= rv:
                if not waiter[1].done():
                    waiter[1].set_result(None)
            else:
                still.append(waiter)
        self._waiters = still

    def _broke(self, exc: Exception) -> None:  # in the event loop
        waiters, self._waiters = self._waiters, []
        for _, future in waiters:
            if not future.done():
                future.set_exception(_failure(exc))

    # ------------------------------------------------------------------ the writer thread
    def _write_loop(self) -> None:
        dirty = False
        while True:
            with self._cond:
                if not self._queue and not self._closing and self._compact_asked is None:
                    self._cond.wait(self.checkpoint_interval if dirty else None)
                batches, self._queue = self._queue, []
                closing, asked = self._closing, self._compact_asked
            if batches:
                self._commit(batches)
                dirty = True
                if asked is None:
                    continue
            if (dirty or asked is not None) and self.failed is None:
                self._compact()
                dirty = False
            if asked is not None:
                self._compact_asked = None
                asked.set()
            if closing and not batches:
                return

    def _commit(self, batches: list) -> None:
        merged: dict[Key, tuple[int, Stored | None]] = {}
        for batch, _ in batches:
            merged.update(batch)
        rv = batches[-1][1]
        if self.failed is None:
            try:
                self._write(merged, rv)
            except Exception as exc:  # noqa: BLE001 - a disk error or a bug: writes are no longer durable either way
                log.critical("the journal cannot write to %s: %s; writes are no longer acknowledged", self.directory, exc)
                self.failed = exc
        if self.failed is not None:
            self._notify(self._broke, self.failed)
            with self._cond:
                self._cond.notify_all()
            return
        self.batches += 1
        with self._cond:
            self.durable_rv = rv
            self._cond.notify_all()
        self._notify(self._committed, rv)

    def _notify(self, callback, argument) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(callback, argument)
        except RuntimeError:  # the loop closed: nobody waits there any more
            pass

    def _write(self, merged: dict[Key, tuple[int, Stored | None]], rv: int) -> None:
        upserts = []
        for key, (rv_of, s) in merged.items():
            if s is not None:
                raw, labels, fields = s.raw, _json(s.labels), _json(s.fields)  # the bytes once (a Packed record's decompress)
                upserts.append((*key, rv_of, raw, labels, fields, _crc(raw, labels, fields)))
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for start in range(0, len(upserts), _ROWS_PER_UPSERT):
                _upsert(db, upserts[start:start + _ROWS_PER_UPSERT])
            db.executemany(_DELETE, [key for key, (_, s) in merged.items() if s is None])
            db.execute(_SET_RV, (rv,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _compact(self) -> None:
        """Give freed pages back and fold the WAL into the database, truncating it."""
        try:
            self._db.executescript("PRAGMA incremental_vacuum;")  # sqlite3_exec steps it to the end (execute frees one page)
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as exc:  # a reader holds the WAL: the next idle period tries again
            log.warning("the journal could not be compacted: %s", exc)

    def compact(self) -> None:
        """Write what is pending and compact now, in the writer thread (tests; it does so when idle)."""
        self._handoff()
        done = threading.Event()
        with self._cond:
            self._compact_asked = done
            self._cond.notify()
        done.wait(60)

    # ------------------------------------------------------------------ shutdown
    def close(self) -> None:
        """Write what is pending, compact, and release the directory."""
        if self._lock_fd < 0:
            return
        self._handoff()
        if self._thread is not None:
            with self._cond:
                self._closing = True
                self._cond.notify()
            self._thread.join()
        else:  # never started: write here
            batches, self._queue = self._queue, []
            if batches:
                self._commit(batches)
            if self.failed is None:
                self._compact()
        if self.failed is None and (self.clean or self._thread is not None):
            # everything handed out is written: the next start needs no gap (see persistence.restore)
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('clean', 1)")
        self._db.close()
        os.close(self._lock_fd)
        self._lock_fd = -1

    def sizes(self) -> dict[str, int]:
        """Bytes on disk per file (the database, its WAL)."""
        found = {}
        for suffix in ("", "-wal"):
            path = self.directory / (DATABASE + suffix)
            found[path.name] = path.stat().st_size if path.exists() else 0
        return found


class JournaledStore(Store):
    """The store, with every committed write also recorded in a :class:`Journal`."""

    def __init__(self, journal: Journal, **options) -> None:
        super().__init__(**options)
        self.journal = journal

    def _emit(self, event: Event) -> None:
        super()._emit(event)
        self.journal.record(event)


def _upsert(db: sqlite3.Connection, rows: list[tuple]) -> None:
    """One INSERT of many rows: sqlite3's executemany releases and retakes the GIL once per row,
    and each retake waits for the event loop's thread to let go (up to the switch interval)."""
    db.execute(_UPSERT + ", ".join(("(?, ?, ?, ?, ?, ?, ?, ?, ?)",) * len(rows)), [value for row in rows for value in row])


def _crc(raw: bytes, labels: bytes | None, fields: bytes | None) -> int:
    return zlib.crc32(fields or b"", zlib.crc32(labels or b"", zlib.crc32(raw)))


def _json(value) -> bytes | None:
    return orjson.dumps(value) if value else None


def _failure(exc: Exception) -> errors.StatusError:
    return errors.StatusError(500, "InternalError", f"Internal error occurred: the write could not be made durable: {exc}")


def _lock(directory: Path) -> int:
    if directory.exists() and not directory.is_dir():
        raise JournalError(f"{directory}: cannot use it as the data directory: not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise JournalError(f"{directory}: cannot use it as the data directory: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise JournalError(f"{directory}: the data directory is in use by another mockapi" + (f" (pid {holder})" if holder else "")) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _open(path: Path) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, cached_statements=256)
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # takes effect on a new database only
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            raise sqlite3.DatabaseError(f"cannot use write-ahead logging (journal_mode is {mode})")
        db.execute("PRAGMA synchronous = FULL")
        db.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT}")
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('format', ?)", (FORMAT,))
        return db
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path}: not a mockapi data directory, or damaged: {exc}") from None


def _stored_meta(db: sqlite3.Connection, key: str, default: int) -> int:
    found = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return int(found[0]) if found else default


def _stored_rv(db: sqlite3.Connection, path: Path) -> int:
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        newest = db.execute("SELECT max(rv) FROM objects").fetchone()[0] or 0
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path}: not a mockapi data directory, or damaged: {exc}") from None
    if meta.get("format") != FORMAT:
        raise JournalError(f"{path}: written in format {meta.get('format')}, this mockapi reads format {FORMAT}")
    return max(int(meta.get("rv", 0)), int(newest))
