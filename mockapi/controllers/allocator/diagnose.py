"""Why a node cannot satisfy a claim, in words a person can act on, and the condition message
that summarises all nodes ("0/3 nodes can allocate the claim: 2 had too few matching devices,
1 failed matchAttributes numa", then one line per node like the prototype's
"node-a: could not satisfy these claims: ...").

Each claim entry is checked on its own, option by option: too few matching devices, too few of
them free, no group of equal matchAttributes values large enough, or too little pool or device
resource; entries that fit alone but not together are reported as such.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mockapi.controllers.allocator.budget import Budget, Exhausted, Limits
from mockapi.controllers.allocator.filter import Candidates
from mockapi.controllers.allocator.ledger import Ledger
from mockapi.controllers.allocator.search import NodeSearch
from mockapi.controllers.allocator.search_groups import match_values

MESSAGE_NODES = 10  # node lines in a condition message; `mockapi explain` shows them all
UNALLOCATABLE = "unallocatable: "  # how FilterDevices words a device's own problem
HINTS = 3  # ignored pools or device problems named in one hint
DIAGNOSIS = Limits(steps=20_000, seconds=0.05)  # for checking options on their own, all nodes together


@dataclass
class OptionCheck:
    option: str  # the option, described
    ok: bool
    category: str = ""
    text: str = ""


@dataclass
class NodeDiagnosis:
    node: str | None
    category: str
    entries: list[list[OptionCheck]] = field(default_factory=list)  # per entry, per option

    def line(self, describe_entry) -> str:
        failing = [i for i, checks in enumerate(self.entries) if not any(c.ok for c in checks)]
        where = self.node or "network-attached pools"
        if not failing:
            return f"{where}: {self.category}"
        parts = [f"{describe_entry(i)}: {self.entries[i][0].text}" for i in failing]
        return f"{where}: could not satisfy these claim entries: " + "; ".join(parts)


def diagnose(node: str | None, rows: list[list[Candidates]], ledger: Ledger, claim_match: tuple[str, ...], budget: Budget) -> NodeDiagnosis:
    probe = NodeSearch(node, rows, ledger, claim_match, budget)
    entries = [[_check(probe, node, c, ledger, claim_match) for c in row] for row in rows]
    for checks in entries:
        if not any(check.ok for check in checks):
            return NodeDiagnosis(node, checks[0].category, entries)
    together = f"failed matchAttributes {','.join(claim_match)} across claim entries" if claim_match else "could not satisfy all claim entries together"
    return NodeDiagnosis(node, together, entries)


def _check(probe: NodeSearch, node, candidates: Candidates, ledger: Ledger, claim_match) -> OptionCheck:
    option = candidates.option
    detail = option.detail
    devices = candidates.on(node)
    count, label = detail.count, option.describe()
    if len(devices) < count:
        return OptionCheck(label, False, "had too few matching devices", f"{len(devices)} matching devices, needs {count}{_hint(candidates, node, ledger)}")
    free = [d for d in devices if probe._available(d, option)]
    if len(free) < count:
        return OptionCheck(label, False, "had too few free devices", f"{len(free)} of {len(devices)} matching devices free, needs {count}")
    names = tuple(dict.fromkeys(claim_match + detail.match))
    if names:
        largest = max(Counter(match_values(d, names) for d in free).values())
        if largest < count:
            text = f"at most {largest} free devices have equal {','.join(names)}, needs {count}"
            return OptionCheck(label, False, f"failed matchAttributes {','.join(names)}", text)
    if _fits_alone(node, candidates, ledger, claim_match, probe.budget):
        return OptionCheck(label, True)
    if detail.shared:
        wanted = ", ".join(f"{name} {amount}" for name, amount, _ in _formatted(detail))
        return OptionCheck(label, False, "had too little device resources", f"free devices cannot provide {wanted}")
    return OptionCheck(label, False, "had too little pool resources", f"the pools' shared resources cannot cover {count} free devices")


def _hint(candidates: Candidates, node: str | None, ledger: Ledger) -> str:
    """Why there are too few matching devices, when it is not (only) the constraints: no pool of
    the class's driver is usable (each ignored pool named with its reason), or devices of its
    pools are unallocatable (each named with its problem: an undeclared pool resource, ...)."""
    pools = sum(map(len, candidates.by_node.values())) + len(candidates.network)
    driver = candidates.option.device_class.driver
    if pools == 0:
        ignored = [f"{name}: {why}" for name, why in candidates.ignored_pools if _pool_driver(ledger, name) == driver]
        return f' (no usable DevicePool of driver "{driver}"{_listed(ignored)})'
    problems = [
        f"{pc.pool.name}/{device.name}: {why[len(UNALLOCATABLE):]}"
        for pc in _pools_on(candidates, node) for device, why in pc.ruled_out if why.startswith(UNALLOCATABLE)
    ]
    if problems:
        return f' ({len(problems)} unallocatable device{"s" if len(problems) > 1 else ""} of driver "{driver}"{_listed(problems)})'
    if not candidates.has_local() and not any(pc.devices for pc in candidates.network):
        return f' (no device of the {pools} pools of driver "{driver}" passes the constraints)'
    return ""


def _pool_driver(ledger: Ledger, name: str) -> str | None:
    pool = ledger.pool(name)
    return pool.driver if pool is not None else None


def _pools_on(candidates: Candidates, node: str | None):
    """The pools usable with ``node``: its own, then the network-attached ones (every node's,
    for the network-only verdict given when no node has candidates)."""
    if node:
        yield from candidates.by_node.get(node, [])
    else:
        for pools in candidates.by_node.values():
            yield from pools
    yield from candidates.network


def _listed(reasons: list[str]) -> str:
    if not reasons:
        return ""
    more = f"; and {len(reasons) - HINTS} more" if len(reasons) > HINTS else ""
    return ": " + "; ".join(reasons[:HINTS]) + more


def _fits_alone(node, candidates: Candidates, ledger: Ledger, claim_match, budget: Budget) -> bool:
    try:
        return NodeSearch(node, [[candidates]], ledger, claim_match, budget).run() is not None
    except Exhausted:
        return True  # not provably impossible alone: report the entries as not fitting together


def _formatted(detail):
    from mockapi import quantity as quantities

    return [(name, str(quantities.Quantity(amount, fmt)), fmt) for name, amount, fmt in detail.resources]


def summarize(diagnoses: list[NodeDiagnosis], describe_entry, *, total: int) -> str:
    """The Allocated=False message: a count per reason, then the first nodes' lines."""
    counts = Counter(d.category for d in diagnoses)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if diagnoses and diagnoses[0].node is None:
        head = "no node has matching devices, and network-attached pools alone cannot satisfy the claim"
    else:
        head = f"0/{total} nodes can allocate the claim: " + ", ".join(f"{n} {category}" for category, n in ranked)
    lines = [d.line(describe_entry) for d in diagnoses[:MESSAGE_NODES]]
    if len(diagnoses) > MESSAGE_NODES:
        lines.append(f"... and {len(diagnoses) - MESSAGE_NODES} more nodes (mockapi explain shows every node)")
    return "\n".join([head + "."] + lines)
