"""The allocator: reconciles DeviceClaims and DevicePrivilegedClaims against DevicePools and
DeviceClasses (ALLOCATOR.md) and writes every outcome to the claim's status.

- :class:`Allocator` (controller.py) — informers, the work queue (queue.py), the worker, status
  writes, Events and the deallocation finalizer.
- :class:`Planner` (cycle.py) — one cycle as a recipe of plugins: ValidateSpec (request.py),
  ResolveClasses (classes.py), FilterDevices (filter.py), Search (search.py), Score (score.py),
  DereferenceConfigs (configs.py); diagnose.py explains failures, explain.py in full.
- cache.py, inventory.py, ledger.py — the cluster as the allocator sees it.
"""

from mockapi.controllers.allocator.budget import Limits
from mockapi.controllers.allocator.controller import Allocator
from mockapi.controllers.allocator.cycle import Planner
from mockapi.controllers.allocator.explain import explain, explain_claim, explain_with
from mockapi.controllers.allocator.kinds import ClaimKey
from mockapi.controllers.allocator.score import DEFAULT_POLICY, POLICIES

__all__ = ["Allocator", "Planner", "Limits", "ClaimKey", "explain", "explain_claim", "explain_with", "DEFAULT_POLICY", "POLICIES"]
