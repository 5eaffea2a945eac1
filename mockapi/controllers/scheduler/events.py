"""Cluster events: what may make an unschedulable pod schedulable (kube's ``ClusterEvent``).

Each plugin declares the events that could change its verdict (``EVENTS``, kube's
``EventsToRegister`` without the per-pod queueing-hint functions); the queue moves a parked pod back
only on an event one of the plugins that rejected it registered. ``"*"`` matches any resource or
action.
"""

from __future__ import annotations

from dataclasses import dataclass

ADD, UPDATE, DELETE = "Add", "Update", "Delete"
ANY = "*"

NODE, POD = "Node", "Pod"
DEVICE_POOL, DEVICE_CLASS, DEVICE_CLAIM, DEVICE_CLAIM_TEMPLATE = "DevicePool", "DeviceClass", "DeviceClaim", "DeviceClaimTemplate"
# DeviceClaim actions beyond add/update/delete: the ones that free devices.
DEALLOCATE = "Deallocate"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action: str
    label: str = ""  # for logs: what happened ("NodeAdd", "AssignedPodDelete", ...)

    def matches(self, happened: "ClusterEvent") -> bool:
        """Whether this registered interest covers the event that ``happened``."""
        return self.resource in (ANY, happened.resource) and self.action in (ANY, happened.action)

    def __str__(self) -> str:
        return self.label or f"{self.resource}{self.action}"


NODE_ADD = ClusterEvent(NODE, ADD)
NODE_UPDATE = ClusterEvent(NODE, UPDATE)
POD_DELETE = ClusterEvent(POD, DELETE, "AssignedPodDelete")
POD_UPDATE = ClusterEvent(POD, UPDATE, "AssignedPodUpdate")
POD_ADD = ClusterEvent(POD, ADD, "AssignedPodAdd")
WILDCARD = ClusterEvent(ANY, ANY, "WildCardEvent")
# Periodic flush and "moved because of a failure elsewhere" use this one (kube's UnschedulableTimeout).
UNSCHEDULABLE_TIMEOUT = ClusterEvent(ANY, ANY, "UnschedulableTimeout")

DEVICE_EVENTS = (
    ClusterEvent(DEVICE_POOL, ADD), ClusterEvent(DEVICE_POOL, UPDATE),
    ClusterEvent(DEVICE_CLASS, ADD), ClusterEvent(DEVICE_CLASS, UPDATE),
    ClusterEvent(DEVICE_CLAIM_TEMPLATE, ADD), ClusterEvent(DEVICE_CLAIM_TEMPLATE, UPDATE),
    ClusterEvent(DEVICE_CLAIM, DEALLOCATE), ClusterEvent(DEVICE_CLAIM, DELETE),
)  # fmt: skip


def interested(registered, happened: ClusterEvent) -> bool:
    return any(event.matches(happened) for event in registered)
