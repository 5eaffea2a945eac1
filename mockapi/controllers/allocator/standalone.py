"""The allocator outside ``mockapi serve``: ``mockapi allocator`` and ``mockapi explain`` against any
API server, through the official ``kubernetes`` client (:class:`mockapi.client.KubeClient`).

Both first check that the server answers and serves the kinds the allocator reads, so a wrong URL
or missing CRDs fail at once. Failures are raised for the command line to print as one line:
:class:`mockapi.client.ConnectError` (no or bad kubeconfig, server unreachable or not an API
server) and :class:`mockapi.errors.StatusError` (the server answered an error Status).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re

import urllib3
import yaml

from mockapi.client import ConnectError, KubeClient
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.budget import Limits
from mockapi.controllers.allocator.controller import Allocator
from mockapi.controllers.allocator.explain import explain_with
from mockapi.controllers.allocator.kinds import ClaimKey

log = logging.getLogger("mockapi.allocator")
READS = (kinds.POOLS, kinds.CLASSES, kinds.CLAIMS, kinds.PRIVILEGED_CLAIMS, kinds.NODES)


def run(client: KubeClient, *, policy: str, limits: Limits, scheduling=None) -> int:
    """Reconcile claims until interrupted; with ``scheduling`` (True, or a scheduler configuration
    file), schedule pods and make their claims too, in this process (one ledger of held devices)."""
    try:
        _complete(_checked(client))
        doing = "claims and pods" if scheduling else "claims"
        print(f"mockapi allocator: reconciling {doing} on {client.host} (policy {policy})", flush=True)
        asyncio.run(_controllers(client, policy=policy, limits=limits, scheduling=scheduling))
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
    return 0


async def _controllers(client: KubeClient, *, policy: str, limits: Limits, scheduling) -> None:
    allocator = Allocator(client, policy=policy, limits=limits)
    runs = [allocator.run]
    if scheduling:
        from mockapi.controllers import pods

        scheduler, podclaims = pods.scheduler_with_claims(client, allocator, config_path=None if scheduling is True else scheduling)
        runs += [podclaims.run, scheduler.run]
    await asyncio.gather(*(run() for run in runs))


def explain(client: KubeClient, *, key: ClaimKey, policy: str, limits: Limits, output: str) -> int:
    """Print the allocator's full diagnosis of one claim (YAML or JSON)."""
    try:
        report = _complete(_checked(client, explain_with(client, key, policy=policy, limits=limits)))
    finally:
        client.close()
    if output == "json":
        print(json.dumps(report, indent=2))
    else:
        print(yaml.safe_dump(report, sort_keys=False, width=120), end="")
    return 0


def _complete(coro):
    """``asyncio.run(coro)``, except that an interrupt (Ctrl-C) propagates at once instead of waiting
    for a request still blocked on the server in a worker thread (closing the loop would join it)."""
    runner = asyncio.Runner()
    try:
        result = runner.run(coro)
    except KeyboardInterrupt:
        raise  # the runner stays open: the process is about to end
    except BaseException:
        runner.close()
        raise
    runner.close()
    return result


async def _checked(client: KubeClient, then=None):
    """Check the server serves :data:`READS`, then await ``then``; transport failures become
    :class:`ConnectError` naming the server."""
    with _reaching(client.host):
        try:
            for kind in READS:
                if not await client.serves(kind):
                    raise ConnectError(f"the server at {client.host} does not serve {kind} (apply the CRDs in schemas/ first)")
            return await then if then is not None else None
        finally:
            if then is not None and hasattr(then, "close"):
                then.close()  # never awaited when the check failed: no "never awaited" warning


@contextlib.contextmanager
def _reaching(host: str):
    try:
        yield
    except urllib3.exceptions.HTTPError as exc:
        raise ConnectError(f"cannot reach the API server at {host}: {transport_reason(exc)}") from exc
    except json.JSONDecodeError as exc:
        raise ConnectError(f"the server at {host} did not answer JSON: is it a Kubernetes API server?") from exc


def transport_reason(exc: BaseException) -> str:
    """What went wrong below HTTP, in words: "Connection refused", "Name or service not known"…"""
    cause = getattr(exc, "reason", None) or exc
    seen = cause
    while seen is not None:  # the OS's words, when an OSError is in the chain
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    return re.sub(r"^\w+\((host=)?[^)]*\):\s*", "", str(cause)) or type(cause).__name__
