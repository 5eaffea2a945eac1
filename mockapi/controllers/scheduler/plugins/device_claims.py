"""The hook for the DeviceClaims plugin (written against the allocator, elsewhere).

The framework knows the name ``DeviceClaims``: profiles may enable, disable and weight it like any
plugin, and kube's default profile includes it after NodeResourcesFit. The plugin itself is passed
to :class:`~..framework.Framework` (``device_plugin=``, and ``Scheduler(device_plugin=...)``); without
one, the name is dropped from the profile. It must subclass :class:`DeviceClaimsPlugin` and implement:

- ``pre_enqueue(pod) -> Status``: keep a pod out of the active queue while its claims do not
  exist yet (kube's DynamicResources does: no scheduling attempt, no FailedScheduling Event); the
  claim's ADD event (``ClusterEvent("DeviceClaim", "Add")``) or the pod's update brings it back.
- ``pre_filter(state, pod, snapshot) -> Status``: read the pod's claims (``spec.deviceClaims`` and
  ``status.deviceClaimStatuses``); ``skip()`` for a pod without claims (Filter is then not called);
  ``unresolvable(...)`` when a claim is missing or a template has no claim yet (the message is
  PreFilter's in the FitError); may restrict the nodes by leaving
  ``state[("node_names", "DeviceClaims")] = {names}`` (an allocated ``claimName`` pins the node).
- ``filter(state, pod, node_info) -> Status``: whether all the pod's claims can be allocated on this
  node (network-attached pools combine with any node); ``unschedulable("cannot allocate all
  claims")`` (kube's DRA wording) or a reason per claim, as the allocator's reasons say.
- ``reserve(state, pod, node_name) -> Status`` / ``unreserve(state, pod, node_name)``: hold and
  release the chosen devices in the allocator's one ledger (never a device held twice).
- ``async pre_bind(state, pod, node_name) -> Status``: write the claims' status (allocation and
  ``podNames``); an Error here unreserves and the pod is retried after its backoff.
- optionally ``score``/``normalize_score``, and ``EVENTS``: by default the device events of
  :data:`~..events.DEVICE_EVENTS` (pools, classes, templates added or changed; claims deallocated
  or deleted), which requeue the pods this plugin rejected.

The controller feeds DeviceClaim events into the queue as ``ClusterEvent("DeviceClaim",
"Deallocate")`` and ``("DeviceClaim", "Delete")``; pool, class and template events likewise.
"""

from __future__ import annotations

from mockapi.controllers.scheduler import events
from mockapi.controllers.scheduler.plugin import Plugin

NAME = "DeviceClaims"
POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "preBind")


class DeviceClaimsPlugin(Plugin):
    """Base class of the device plugin (see the module docstring for what to implement)."""

    NAME = NAME
    EVENTS = events.DEVICE_EVENTS


class DeviceClaims(DeviceClaimsPlugin):
    """The registry's entry: builds nothing itself, hands out the framework's ``device_plugin``."""

    @classmethod
    def implements(cls, point: str) -> bool:
        return point in POINTS or point == "score"

    @classmethod
    def create(cls, args: dict, handle):
        plugin = getattr(handle, "device_plugin", None)
        if plugin is not None:
            plugin.args, plugin.handle = args, handle
        return plugin
