"""Pods with device claims, end to end: the claims controller and the scheduler with the allocator's
DeviceClaims plugin, built together over one client (``mockapi serve`` and the standalone
``mockapi allocator`` command use this)."""

from __future__ import annotations

from pathlib import Path

from mockapi import clock as clocks
from mockapi.client import Client
from mockapi.controllers.allocator.scheduling import AllocatorDevices
from mockapi.controllers.podclaims import PodClaims, claim_sources
from mockapi.controllers.scheduler import config as config_
from mockapi.controllers.scheduler.controller import Scheduler


class DeviceScheduler(Scheduler):
    """The scheduler beside the allocator: a pod with device claims is scheduled with the
    allocator's cache held still (its worker thread never plans on a cache being changed)."""

    def __init__(self, client: Client, allocator, **kwargs) -> None:
        super().__init__(client, **kwargs)
        self.allocator = allocator

    async def schedule_one(self, info) -> None:
        if not claim_sources(info.pod):
            await super().schedule_one(info)
            return
        async with self.allocator.holding():
            await super().schedule_one(info)


def scheduler_with_claims(client: Client, allocator, *, claims_client: Client | None = None, config_path: Path | None = None, clock: clocks.Clock | None = None):
    """(scheduler, claims controller) for ``allocator``'s process; raises ``config.ConfigError``
    for a bad ``--scheduler-config``. ``client`` is the scheduler's, ``claims_client`` the claims
    controller's (default: the same); the DeviceClaims plugin reads and reserves claims through the
    allocator's own client (the allocator's role has the claims; the scheduler's has the pods)."""
    config = config_.load(config_path) if config_path else config_.default()
    devices = AllocatorDevices(allocator, allocator.client, clock=clock)
    scheduler = DeviceScheduler(client, allocator, config=config, clock=clock, device_plugin=devices)
    devices.notify = scheduler.on_event
    devices.activate, devices.parked = scheduler.queue.activate, scheduler.queue.parked
    return scheduler, PodClaims(claims_client or client, clock=clock)
