"""The plugin interface: one class per plugin, overriding the extension points it implements.

Extension points, in kube's order, with the method each one calls (``state`` is the cycle's
:class:`CycleState`, a dict a plugin keeps its PreFilter/PreScore results in, under its name):

==============  ==========================================================  =====
point           method                                                      async
==============  ==========================================================  =====
preEnqueue      ``pre_enqueue(pod) -> Status``                               no
queueSort       (PrioritySort only: the queue orders by priority, creation)  –
preFilter       ``pre_filter(state, pod, snapshot) -> Status``                no
filter          ``filter(state, pod, node_info) -> Status``                   no
postFilter      ``post_filter(state, pod, snapshot, statuses) -> PostFilterResult``  may be
                (or an awaitable of one, when it calls out: DefaultPreemption's extenders)
preScore        ``pre_score(state, pod, node_infos) -> Status``               no
score           ``score(state, pod, node_info) -> int`` (0..100 after normalizing)  no
                ``normalize_score(state, pod, scores: dict[node, int])`` (in place, optional)
reserve         ``reserve(state, pod, node_name) -> Status``;                 no
                ``unreserve(state, pod, node_name)`` (must not fail)
permit          ``permit(state, pod, node_name) -> (Status, timeout_seconds)``  no
preBind         ``pre_bind(state, pod, node_name) -> Status``                 yes
bind            ``bind(state, pod, node_name) -> Status`` (Skip: next binder)  yes
postBind        ``post_bind(state, pod, node_name)``                          yes
==============  ==========================================================  =====

A plugin is built by ``cls(args, handle)``: ``args`` from the profile's ``pluginConfig`` (a dict,
defaults filled by the plugin), ``handle`` the :class:`~.framework.Framework` (waiting pods, the
binder, the clock, running filters for preemption). ``EVENTS`` lists the cluster events that could
make a pod this plugin rejected schedulable (see :mod:`.events`). A plugin's ``validate_args(args)``
returns problems as ``(field, message)`` pairs for the configuration loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockapi.controllers.scheduler.status import Status

POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind")
METHODS = {
    "preEnqueue": "pre_enqueue", "queueSort": "less", "preFilter": "pre_filter", "filter": "filter",
    "postFilter": "post_filter", "preScore": "pre_score", "score": "score", "reserve": "reserve",
    "permit": "permit", "preBind": "pre_bind", "bind": "bind", "postBind": "post_bind",
}  # fmt: skip
MAX_NODE_SCORE = 100


class CycleState(dict):
    """Per-pod, per-cycle data: plugin name → what its PreFilter/PreScore computed, plus the plugins
    whose Filter / Score the framework skips for this pod, and the cycle's record
    (:class:`~.attempts.Attempt`, set by the framework)."""

    def __init__(self) -> None:
        super().__init__()
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        self.attempt = None
        self.filters: tuple | None = None  # the Filter plugins not skipped (the framework's, built once per cycle)
        self.filters_skipped = 0
        self.pure_filters = 0  # how many of the first filters are pure (their verdicts remembered)
        self.filter_memo: dict | None = None  # node → (generation, the pure filters' verdict)
        self.spec_signature: bytes | None = None  # the pod's spec, canonical (the memos' key)


@dataclass
class PostFilterResult:
    """What PostFilter achieved: a node nominated for the pod once ``victims`` are gone."""

    status: Status
    nominated_node: str = ""
    victims: list[dict] = field(default_factory=list)


class Plugin:
    NAME = ""
    EVENTS: tuple = ()
    # Filter's verdict depends on nothing but the pod's spec (its volumes and volume mounts aside:
    # the memo's key leaves them out), the NodeInfo (the Node and the pods counted on it) and the
    # plugin's args: the framework may remember it per node generation.
    PURE_FILTER = False
    PURE_SCORE = False  # likewise for Score (before NormalizeScore), PreScore's state included

    def __init__(self, args: dict | None = None, handle=None) -> None:
        self.args = dict(args or {})
        self.handle = handle

    @classmethod
    def default_args(cls) -> dict:
        return {}

    @classmethod
    def validate_args(cls, args: dict) -> list[tuple[str, str]]:
        return []

    @classmethod
    def implements(cls, point: str) -> bool:
        method = METHODS[point]
        return getattr(cls, method, None) is not getattr(Plugin, method, None) and hasattr(cls, method)

    # Unimplemented extension points: the framework never calls these (implements() is False).
    def pre_enqueue(self, pod): ...
    def pre_filter(self, state, pod, snapshot): ...
    def filter(self, state, pod, node_info): ...

    def node_filter(self, state, pod):
        """Optional: a callable ``node_info → Status`` equal to ``filter(state, pod, node_info)``
        for the nodes of this cycle's snapshot (never a trial copy), made once per cycle so that
        what does not depend on the node is looked up once, not on each of the 230 nodes a cycle
        filters. None (the default): the framework calls :meth:`filter`."""
        return None
    def post_filter(self, state, pod, snapshot, statuses): ...
    def pre_score(self, state, pod, node_infos): ...
    def score(self, state, pod, node_info): ...
    def reserve(self, state, pod, node_name): ...
    def permit(self, state, pod, node_name): ...
    async def pre_bind(self, state, pod, node_name): ...
    async def bind(self, state, pod, node_name): ...
    async def post_bind(self, state, pod, node_name): ...

    def normalize_score(self, state, pod, scores: dict[str, int]) -> None:
        """Scores as they are (override to rescale into 0..100)."""

    def unreserve(self, state, pod, node_name) -> None:
        """Nothing to undo (override with Reserve)."""


def default_normalize(scores: dict[str, int], *, reverse: bool = False) -> None:
    """kube's ``helper.DefaultNormalizeScore``: scale to 0..100 by the highest; ``reverse`` flips."""
    highest = max(scores.values(), default=0)
    if highest == 0:
        if reverse:
            for name in scores:
                scores[name] = MAX_NODE_SCORE
        return
    for name, score in scores.items():
        score = MAX_NODE_SCORE * score // highest
        scores[name] = MAX_NODE_SCORE - score if reverse else score
