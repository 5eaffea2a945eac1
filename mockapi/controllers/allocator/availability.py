"""``status.availableDevices`` of every DevicePool, kept current by the allocator.

The prototype's driver would report it; with no driver around, the allocator stands in: a pool's
available devices are those its spec lists that are allocatable (no problem named for them, in a
valid pool) and that no claim holds (admin access holds nothing). ``kubectl get devicepools``
shows the count in its DEVICES column — the CRD's printer column, so a real cluster with our
``schemas/`` and the allocator shows the same.

The writer wakes every :data:`PERIOD` seconds, and only writes the pools whose count differs from
the status it last saw (a merge patch of ``/status``): its own writes come back as watch events
that change nothing, and a status someone else wrote is put right. Claims come first: while the
allocator has claims to work on, the counts are written every :data:`BUSY_PERIOD` seconds only
(each pool once, however many claims changed it) — writing them as they change would halve the
allocation rate of a burst.
"""

from __future__ import annotations

import asyncio
import logging
import time

from mockapi import errors
from mockapi.client import Client
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.inventory import Pool
from mockapi.controllers.allocator.ledger import Ledger

log = logging.getLogger("mockapi.allocator")
PERIOD = 0.2  # seconds between passes over the pools that changed
BUSY_PERIOD = 2.0  # ... while claims are waiting for the allocator
BATCH = 200  # writes between yields to the event loop


def available_devices(pool: Pool, ledger: Ledger) -> int:
    if pool.problem:
        return 0
    name = pool.name
    return sum(1 for device in pool.devices if not device.problem and not ledger.is_held((name, device.name)))


class PoolStatusWriter:
    """Writes the pools the cache and the ledger marked changed (their ``touched`` sets)."""

    def __init__(self, cache, client: Client, *, busy=lambda: False, monotonic=time.monotonic) -> None:
        self.cache, self.client, self.busy, self.monotonic = cache, client, busy, monotonic
        # nobody reads the written pool back: the in-process client skips parsing it, and its watch
        # hands the cache an ECHO of the write (the pool, the count) instead of the object to parse
        # again (Cache.apply_own_status); any other client answers, and watches, as it always does
        self._unread = getattr(client, "patch_unread", None)

    async def run(self) -> None:
        self.cache.touched.update(self.cache.pools)  # the first pass: every pool
        last = self.monotonic()
        while True:
            await asyncio.sleep(PERIOD)
            if self.busy() and self.monotonic() - last < BUSY_PERIOD:
                continue
            await self.write_changed()
            last = self.monotonic()

    async def write_changed(self) -> int:
        """Write every changed pool whose status is not current; the number written."""
        ledger = self.cache.ledger
        names = self.cache.touched | ledger.touched
        self.cache.touched.clear()
        ledger.touched.clear()
        written = 0
        for name in sorted(names):
            pool = self.cache.pools.get(name)
            if pool is None:
                continue
            value = available_devices(pool, ledger)
            if self.cache.pool_status.get(name, -1) == value:
                continue
            await self._write(name, value)
            written += 1
            if written % BATCH == 0:
                await asyncio.sleep(0)
        return written

    async def _write(self, name: str, value: int) -> None:
        try:
            patch = {"status": {"availableDevices": value}}
            if self._unread is not None:
                await self._unread(kinds.POOLS, "", name, patch, subresource="status", echo=(name, value))
            else:
                await self.client.patch(kinds.POOLS, "", name, patch, subresource="status")
        except errors.StatusError as exc:
            if exc.code != 404:  # gone meanwhile: nothing to do
                log.warning("could not write the status of DevicePool %s: %s", name, exc)
