"""Plugin Score: which feasible node wins (rule 12). Deterministic; lower keys win.

- ``binpack`` (the default): the lexicographically smallest (sum of chosen oneOf indices, sum of
  class ranks for deviceType, number of pools used, free devices left on the node, node name) —
  the node left with the fewest free devices.
- ``spread``: the same, but the node left with the *most* free devices.
- ``first-fit``: the first feasible node in name order.

Nodes are examined in name order, and at most :data:`EXAMINED_AFTER_FIRST` after the first
feasible one; a node whose best possible key cannot beat the best so far is not searched at all.
"""

from __future__ import annotations

from mockapi.controllers.allocator.cache import Inventory
from mockapi.controllers.allocator.ledger import Ledger
from mockapi.controllers.allocator.search import Solution

NAME = "Score"
POLICIES = ("binpack", "first-fit", "spread")
DEFAULT_POLICY = "binpack"
EXAMINED_AFTER_FIRST = 100


def free_after(solution: Solution, inventory: Inventory, ledger: Ledger) -> int:
    newly = {
        pick.device.key
        for picks in solution.picks
        for pick in picks
        if pick.device.pool.node and not pick.option.admin and not ledger.is_held(pick.device.key)
    }
    return inventory.free_devices(solution.node, ledger.held_count) - len(newly)


def key(policy: str, solution: Solution, free_left: int) -> tuple:
    node = solution.node or ""
    if policy == "first-fit":
        return (0,)
    packing = free_left if policy == "binpack" else -free_left
    return (solution.alternatives, solution.class_ranks, len(solution.pools), packing, node)


def cannot_beat(policy: str, node: str, free_now: int, most_taken: int, best: tuple) -> bool:
    """Whether every solution on ``node`` scores worse than ``best`` (so it need not be searched)."""
    if policy == "first-fit":
        return True
    packing = max(free_now - most_taken, 0) if policy == "binpack" else -free_now
    return (0, 0, 1, packing, node) > best
