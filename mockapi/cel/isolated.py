"""Evaluate constraints in a child process that the caller kills at its deadline.

The CEL runtime cannot be interrupted and holds the GIL for the whole of an evaluation, so an
expression that may run long (estimated above :data:`~mockapi.cel.cost.INLINE_COST`) or a device
whose values are larger than the estimate assumed would stall every request the server handles if
it ran in the server's process. Here it runs in ``python -m mockapi.cel.isolated``: the caller
(the allocator's worker thread) waits on a pipe without the GIL, and at its deadline raises
:class:`Timeout` and kills the child — the hard stop the runtime lacks; the next call starts a new
one. An evaluation known to end soon (within the cost estimate) is left to finish instead, and its
late reply dropped, which spares a restart. Requests are length-prefixed JSON ``[expression, values]``; replies ``[true, result]`` or
``[false, error]``. One request at a time (a lock); the child compiles with the same cache and
cost limit as the server.
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any

import orjson

STARTUP_SECONDS = 30.0  # importing the runtime; not charged to a caller's deadline
LATE_SECONDS = 1.0  # how long a bounded evaluation may still take past its caller's deadline
NICENESS = 19  # the lowest priority: on a shared core, the server preempts it at once
_READY = b"R"


class Timeout(Exception):
    """The deadline passed before the child answered."""


class Isolated:
    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._late = 0  # replies the child still owes to callers that stopped waiting
        self._lock = threading.Lock()
        atexit.register(self.close)  # no child outlives the server

    def evaluate(self, expression: str, values: dict[str, Any], *, deadline: float, bounded: bool = False) -> bool:
        """The expression's result on ``values`` (a device's attributes as CEL sees them); raises
        ``cel.EvaluationError`` or :class:`Timeout`. ``bounded``: the evaluation is known to end
        soon (within the cost estimate), so at the deadline the child is left to finish it and
        its late reply is dropped; otherwise the child is killed. ``deadline`` (``time.monotonic``)
        is for the evaluation: starting a child, or reading replies owed to earlier callers, moves
        it later by the time they took."""
        return self.evaluate_timed(expression, values, deadline=deadline, bounded=bounded)[0]

    def evaluate_timed(self, expression: str, values: dict[str, Any], *, deadline: float, bounded: bool = False) -> tuple[bool, float]:
        """:meth:`evaluate`, and the seconds waited on this evaluation (start-up and late
        replies not counted)."""
        from mockapi import cel

        with self._lock:
            try:
                before = time.monotonic()
                process = self._ready()
                started = time.monotonic()
                deadline += started - before  # not charged to the caller
                request = orjson.dumps([expression, values])
                os.write(process.stdin.fileno(), len(request).to_bytes(4, "big") + request)
                ok, result = orjson.loads(self._reply(process, deadline, bounded=bounded))
                waited = time.monotonic() - started
            except (OSError, ValueError, TypeError) as exc:
                self._stop()
                raise cel.EvaluationError(f"the isolated evaluator failed: {exc}") from None
        if ok:
            return result, waited
        raise cel.EvaluationError(result)

    def close(self) -> None:
        with self._lock:
            self._stop()

    # ------------------------------------------------------------- the child
    def _ready(self) -> subprocess.Popen:
        """A running child that owes no reply (late ones are read and dropped, or it is replaced)."""
        process = self._running()
        while self._late:
            if not _readable(process, time.monotonic() + LATE_SECONDS):
                self._stop()
                return self._running()
            _message(process)
            self._late -= 1
        return process

    def _running(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._process = subprocess.Popen(
                [sys.executable, "-m", "mockapi.cel.isolated"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
            )
            if _read(self._process, 1, time.monotonic() + STARTUP_SECONDS) != _READY:
                raise OSError("the isolated evaluator did not start")
        return self._process

    def _reply(self, process: subprocess.Popen, deadline: float, *, bounded: bool) -> bytes:
        if _readable(process, deadline):
            return _message(process)
        if bounded:
            self._late += 1
        else:
            self._stop()  # the hard stop
        raise Timeout()

    def _stop(self) -> None:
        process, self._process, self._late = self._process, None, 0
        if process is not None:
            process.kill()
            process.wait()
            process.stdin.close()
            process.stdout.close()


def _readable(process: subprocess.Popen, deadline: float) -> bool:
    return bool(select.select([process.stdout.fileno()], [], [], max(0.0, deadline - time.monotonic()))[0])


def _message(process: subprocess.Popen) -> bytes:
    """One length-prefixed reply, which the child writes at once (a stalled one is an OSError)."""
    try:
        size = int.from_bytes(_read(process, 4, time.monotonic() + LATE_SECONDS), "big")
        return _read(process, size, time.monotonic() + LATE_SECONDS)
    except Timeout:
        raise OSError("the isolated evaluator stalled mid-reply") from None


def _read(process: subprocess.Popen, size: int, deadline: float) -> bytes:
    """Exactly ``size`` bytes from the child, or :class:`Timeout` when the deadline passes first."""
    fd, chunks, left = process.stdout.fileno(), [], size
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            raise Timeout()
        chunk = os.read(fd, left)
        if not chunk:
            raise OSError("the isolated evaluator exited")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# ------------------------------------------------------------ in the child
def _serve() -> None:
    from mockapi import cel

    os.nice(NICENESS)  # background work: the server's requests come first on a shared core
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sink.write(_READY)
    sink.flush()
    while header := source.read(4):  # until the server closes the pipe (or kills us)
        expression, values = orjson.loads(source.read(int.from_bytes(header, "big")))
        try:
            reply = [True, cel.compile(expression).evaluate(cel.activation(values))]
        except (cel.CompileError, cel.EvaluationError) as exc:
            reply = [False, str(exc)]
        body = orjson.dumps(reply)
        try:
            sink.write(len(body).to_bytes(4, "big") + body)
            sink.flush()
        except BrokenPipeError:  # the server went away
            return


if __name__ == "__main__":
    _serve()
