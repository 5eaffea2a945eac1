"""The allocator outside ``mockapi serve``: ``mockapi allocator`` and ``mockapi explain`` against any
API server, through the official ``kubernetes`` client (:class:`mockapi.client.KubeClient`)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys

import yaml

from mockapi import errors
from mockapi.client import KubeClient
from mockapi.controllers.allocator.budget import Limits
from mockapi.controllers.allocator.controller import Allocator
from mockapi.controllers.allocator.explain import explain_with
from mockapi.controllers.allocator.kinds import ClaimKey

log = logging.getLogger("mockapi.allocator")


def run(*, kubeconfig: str | None, context: str | None, policy: str, limits: Limits) -> int:
    """Reconcile claims until interrupted."""
    client = KubeClient.from_kubeconfig(kubeconfig, context=context)
    host = client.api.configuration.host
    print(f"mockapi allocator: reconciling claims on {host} (policy {policy})", flush=True)
    try:
        asyncio.run(Allocator(client, policy=policy, limits=limits).run())
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
    return 0


def explain(*, kubeconfig: str | None, context: str | None, key: ClaimKey, policy: str, limits: Limits, output: str) -> int:
    """Print the allocator's full diagnosis of one claim (YAML or JSON)."""
    client = KubeClient.from_kubeconfig(kubeconfig, context=context)
    try:
        report = asyncio.run(explain_with(client, key, policy=policy, limits=limits))
    except errors.StatusError as exc:
        print(f"mockapi explain: {exc.message}", file=sys.stderr)
        return 1
    finally:
        client.close()
    if output == "json":
        print(json.dumps(report, indent=2))
    else:
        print(yaml.safe_dump(report, sort_keys=False, width=120), end="")
    return 0
