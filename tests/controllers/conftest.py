"""Helpers for the garbage collector's and the kubelet's unit tests: a real registry behind
:class:`LocalClient` (the server's own in-process client), controllers run as tasks, and waits that
poll briefly instead of sleeping."""

from __future__ import annotations

import asyncio
import contextlib

from mockapi import app as app_
from mockapi import errors
from mockapi.client import Kind, LocalClient
from mockapi.settings import Settings

CONFIGMAPS = Kind("v1", "ConfigMap")
SECRETS = Kind("v1", "Secret")
PODS = Kind("v1", "Pod")
NODES = Kind("v1", "Node")
EVENTS = Kind("v1", "Event")
CLAIMS = Kind("devmgmtproto.k8s.io/v1alpha1", "DeviceClaim")
TIMEOUT = 3.0


class RecordingClient(LocalClient):
    """LocalClient that remembers each delete with its options (what a server would be asked)."""

    def __init__(self, registry) -> None:
        super().__init__(registry)
        self.deletes: list[tuple] = []

    async def delete(self, kind, namespace, name, *, propagation_policy="", grace_period_seconds=None):
        self.deletes.append((kind.kind, namespace, name, propagation_policy, grace_period_seconds))
        await super().delete(kind, namespace, name, propagation_policy=propagation_policy, grace_period_seconds=grace_period_seconds)


def new_client(**settings) -> RecordingClient:
    return RecordingClient(app_.build(Settings(**settings)).registry)


@contextlib.asynccontextmanager
async def running(*controllers):
    """Run each controller's ``run()`` as a task until the block ends; wait until each has synced."""
    tasks = [asyncio.create_task(c.run()) for c in controllers]
    try:
        for controller in controllers:
            await asyncio.wait_for(controller.synced.wait(), TIMEOUT)
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def settle(*controllers, quiet_rounds: int = 3) -> None:
    """Wait until every controller has been idle for a few loop turns (its informers caught up)."""
    loop = asyncio.get_running_loop()
    deadline, quiet = loop.time() + TIMEOUT, 0
    while quiet < quiet_rounds:
        await asyncio.sleep(0.002)
        quiet = quiet + 1 if all(c.idle() for c in controllers) else 0
        assert loop.time() < deadline, "the controllers never settled"


async def until(read, predicate=bool, *, timeout: float = TIMEOUT):
    """Poll ``await read()`` until ``predicate`` holds for its value; return it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await read()
        if predicate(value):
            return value
        assert loop.time() < deadline, f"timed out; last value {value!r}"
        await asyncio.sleep(0.005)


async def get_or_none(client, kind: Kind, name: str, namespace: str = "default") -> dict | None:
    try:
        return await client.get(kind, namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return None
        raise


def ref(owner: dict, *, block: bool | None = None, controller: bool | None = None) -> dict:
    """An ownerReference to ``owner``."""
    found = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
    if block is not None:
        found["blockOwnerDeletion"] = block
    if controller is not None:
        found["controller"] = controller
    return found


def configmap(name: str, *owners: dict, namespace: str = "default", finalizers: list[str] | None = None) -> dict:
    meta: dict = {"name": name, "namespace": namespace}
    if owners:
        meta["ownerReferences"] = list(owners)
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


async def delete_with_policy(client, kind: Kind, name: str, policy: str, namespace: str = "default") -> None:
    """DELETE with ``propagationPolicy``, as the server answers it: Foreground and Orphan leave the
    object with a deletionTimestamp and the ``foregroundDeletion`` / ``orphan`` finalizer (added here
    first, so the tests hold whether or not this server does it itself)."""
    finalizer = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(policy)
    if finalizer:
        obj = await client.get(kind, namespace, name)
        finalizers = obj["metadata"].get("finalizers") or []
        if finalizer not in finalizers:
            await client.patch(kind, namespace, name, {"metadata": {"finalizers": finalizers + [finalizer]}})
    await client.delete(kind, namespace, name, propagation_policy=policy)
