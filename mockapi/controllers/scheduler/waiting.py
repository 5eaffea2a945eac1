"""Pods that Permit told to wait (kube's ``waitingPod``).

A Permit plugin that answers ``Wait`` with a timeout makes the pod wait in its binding cycle until
every waiting plugin allows it, any plugin rejects it, or a plugin's timeout passes — then it is
rejected with kube's message ``rejected due to timeout after waiting <d> at plugin <name>``.
Deadlines are taken on the framework's monotonic clock when Permit runs, so the wait continues
the scheduling cycle's time, not the binding cycle's.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from mockapi.controllers.scheduler import pods as pods_, status as status_
from mockapi.controllers.scheduler.status import Status


class WaitingPod:
    def __init__(self, pod: dict, node_name: str, timeouts: dict[str, float], monotonic: Callable[[], float]) -> None:
        self.pod = pod
        self.key = pods_.key(pod)
        self.node_name = node_name
        now = monotonic()
        self.pending = {name: now + seconds for name, seconds in timeouts.items()}  # plugin → deadline
        self._timeouts = dict(timeouts)
        self._monotonic = monotonic
        self._outcome: Status | None = None
        self._changed: asyncio.Event | None = None

    def allow(self, plugin: str) -> None:
        self.pending.pop(plugin, None)
        if not self.pending:
            self._decide(status_.SUCCESS)

    def reject(self, plugin: str, message: str) -> None:
        self._decide(status_.unschedulable(message, plugin=plugin))

    @property
    def decided(self) -> bool:
        return self._outcome is not None

    async def wait(self) -> Status:
        """Until allowed, rejected or timed out; the verdict."""
        while self._outcome is None:
            plugin, deadline = min(self.pending.items(), key=lambda item: item[1])
            left = deadline - self._monotonic()
            if left <= 0:
                self.reject(plugin, f"rejected due to timeout after waiting {_go_duration(self._timeouts[plugin])} at plugin {plugin}")
                break
            self._changed = asyncio.Event()
            try:  # not wait_for: on 3.11 it swallows a cancel that comes as the wait ends (gh-86296)
                async with asyncio.timeout(left):
                    await self._changed.wait()
            except TimeoutError:
                pass
        return self._outcome

    def _decide(self, outcome: Status) -> None:
        if self._outcome is None:
            self._outcome = outcome
            if self._changed is not None:
                self._changed.set()


def _go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for the usual cases: ``30s``, ``1.5s``, ``100ms``, ``2m0s``, ``1h0m0s``."""
    if seconds >= 60:
        minutes, rest = divmod(round(seconds), 60)
        hours, minutes = divmod(minutes, 60)
        return (f"{hours}h" if hours else "") + f"{minutes}m{rest}s"
    if seconds >= 1:
        return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{round(seconds * 1000)}ms"
