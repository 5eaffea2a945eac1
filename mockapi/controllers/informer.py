"""Informers: how every controller here lists and watches the kinds it reads (client-go's idea).

:func:`inform` keeps one kind's watch going for a controller — events to its handler, the SYNCED
marker (the initial list is in) to the controller's ``synced`` callback, and never dying: a failed watch is
logged and lists again after :data:`RETRY_WATCH` seconds. A kind the server does not serve (404)
counts as listed, so a controller whose optional kinds are absent still starts.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from mockapi import errors
from mockapi.client import SYNCED, Client, Kind

RETRY_WATCH = 1.0
Handler = Callable[[str, dict], None]


async def inform(
    client: Client, kind: Kind, handle: Handler, synced: Callable[[Kind], None], log: logging.Logger, *, retry: float = RETRY_WATCH, echoes: bool = False
) -> None:
    """Watch ``kind`` until cancelled, handing each event to ``handle`` (``echoes``: the client's
    announced writes too, as ECHO events: ``LocalClient.patch_unread``)."""
    while True:
        try:
            async for event in client.watch(kind, echoes=True) if echoes else client.watch(kind):
                if event.type == SYNCED:
                    synced(kind)
                else:
                    handle(event.type, event.object)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - an informer never dies; it lists again
            if isinstance(exc, errors.StatusError) and exc.code == 404:
                synced(kind)  # not served (yet): nothing to wait for
            log.warning("watching %s failed: %s; retrying", kind, exc)
            await asyncio.sleep(retry)
