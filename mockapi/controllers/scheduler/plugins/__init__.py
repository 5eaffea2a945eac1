"""The in-tree plugins by name, and kube's default profile (``default_plugins.go``, v1).

The default profile lists its plugins at the ``multiPoint`` extension point, in kube's order, each
enabled at every extension point it implements; score weights are kube's (TaintToleration 3,
NodeAffinity 2, NodeResourcesFit 1). **Decision**: Coscheduling is enabled by default (it does
nothing to pods without the pod-group label), and DeviceClaims sits after NodeResourcesFit, where
kube puts DynamicResources.

:data:`KUBE_ONLY` names kube's other in-tree plugins: a configuration may disable them (real
configurations often do) but enabling one is an error, since mockapi does not implement it.
"""

from __future__ import annotations

from mockapi.controllers.scheduler.plugins.basic import DefaultBinder, NodeName, NodeUnschedulable, PrioritySort, SchedulingGates
from mockapi.controllers.scheduler.plugins.coscheduling import Coscheduling
from mockapi.controllers.scheduler.plugins.default_preemption import DefaultPreemption
from mockapi.controllers.scheduler.plugins.device_claims import DeviceClaims, DeviceClaimsPlugin
from mockapi.controllers.scheduler.plugins.node_affinity import NodeAffinity
from mockapi.controllers.scheduler.plugins.node_resources_fit import NodeResourcesFit
from mockapi.controllers.scheduler.plugins.taint_toleration import TaintToleration

REGISTRY = {
    cls.NAME: cls
    for cls in (
        SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
        NodeResourcesFit, DeviceClaims, DefaultPreemption, Coscheduling, DefaultBinder,
    )
}  # fmt: skip

DEFAULT_MULTIPOINT: list[tuple[str, int | None]] = [
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("DeviceClaims", None),
    ("DefaultPreemption", None), ("Coscheduling", None), ("DefaultBinder", None),
]  # fmt: skip

KUBE_ONLY = frozenset({
    "NodePorts", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
    "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality", "DynamicResources",
    "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits",
})  # fmt: skip

__all__ = ["REGISTRY", "DEFAULT_MULTIPOINT", "KUBE_ONLY", "DeviceClaimsPlugin"]
