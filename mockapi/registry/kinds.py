"""Which strategy each kind has: the one table, so the strategy modules need not know each other.

A strategy is named here (``"module.Class"`` under :mod:`mockapi.registry`), and its module is
imported when the registry first needs that kind's strategy — its first write or read — so ~40
kinds' rules cost nothing at start-up until used (``registry/devices.py`` alone brings the CEL
compiler, quantities and semver). ``tests/test_startup_lazy.py`` checks every name resolves.
"""

from __future__ import annotations

import importlib
from functools import cache

from mockapi.gvk import ResourceType
from mockapi.registry.strategy import CustomResourceStrategy, Strategy

_APPS, _BATCH, _RBAC, _REVIEWS = "apps", "batch", "rbac.authorization.k8s.io", "authorization.k8s.io"
_DEVICES = "devmgmtproto.k8s.io"

BUILTIN: dict[tuple[str, str], str] = {
    ("", "Namespace"): "namespaces.NamespaceStrategy",
    ("", "ConfigMap"): "strategy.ConfigMapStrategy",
    ("", "Secret"): "strategy.SecretStrategy",
    ("", "Pod"): "pods.PodStrategy",
    ("", "Node"): "strategy.NodeStrategy",
    ("", "Event"): "strategy.EventStrategy",
    ("", "Service"): "services.ServiceStrategy",
    ("", "ServiceAccount"): "serviceaccounts.ServiceAccountStrategy",
    ("scheduling.k8s.io", "PriorityClass"): "scheduling.PriorityClassStrategy",
    ("coordination.k8s.io", "Lease"): "strategy.LeaseStrategy",
    (_APPS, "Deployment"): "workloads.WorkloadStrategy",
    (_APPS, "ReplicaSet"): "workloads.WorkloadStrategy",
    (_APPS, "StatefulSet"): "workloads.WorkloadStrategy",
    (_APPS, "DaemonSet"): "workloads.WorkloadStrategy",
    (_BATCH, "Job"): "batch.JobStrategy",
    (_BATCH, "CronJob"): "batch.CronJobStrategy",
    ("apiextensions.k8s.io", "CustomResourceDefinition"): "crds.CustomResourceDefinitionStrategy",
    (_RBAC, "Role"): "rbac.RoleStrategy",
    (_RBAC, "ClusterRole"): "rbac.RoleStrategy",
    (_RBAC, "RoleBinding"): "rbac.BindingStrategy",
    (_RBAC, "ClusterRoleBinding"): "rbac.BindingStrategy",
    (_REVIEWS, "SubjectAccessReview"): "reviews.ReviewStrategy",
    (_REVIEWS, "LocalSubjectAccessReview"): "reviews.ReviewStrategy",
    (_REVIEWS, "SelfSubjectAccessReview"): "reviews.ReviewStrategy",
    (_REVIEWS, "SelfSubjectRulesReview"): "reviews.ReviewStrategy",
    # issue 12's second slice: policy, networking, storage, discovery
    ("policy", "PodDisruptionBudget"): "policy.PodDisruptionBudgetStrategy",
    ("networking.k8s.io", "Ingress"): "networking.IngressStrategy",
    ("networking.k8s.io", "IngressClass"): "networking.IngressClassStrategy",
    ("networking.k8s.io", "NetworkPolicy"): "networking.NetworkPolicyStrategy",
    ("storage.k8s.io", "StorageClass"): "storage.StorageClassStrategy",
    ("discovery.k8s.io", "EndpointSlice"): "discovery.EndpointSliceStrategy",
    ("autoscaling", "HorizontalPodAutoscaler"): "autoscaling.HorizontalPodAutoscalerStrategy",
    ("apiregistration.k8s.io", "APIService"): "apiservices.APIServiceStrategy",
    # issue 12: core/v1 storage, endpoints, replication and policy kinds; apps/v1 ControllerRevision
    ("", "PersistentVolumeClaim"): "corekinds.PersistentVolumeClaimStrategy",
    ("", "PersistentVolume"): "corekinds.PersistentVolumeStrategy",
    ("", "Endpoints"): "corekinds.EndpointsStrategy",
    ("", "ReplicationController"): "corekinds.ReplicationControllerStrategy",
    ("", "LimitRange"): "corekinds.LimitRangeStrategy",
    ("", "ResourceQuota"): "corekinds.ResourceQuotaStrategy",
    (_APPS, "ControllerRevision"): "corekinds.ControllerRevisionStrategy",
    ("", "PodTemplate"): "pods.PodTemplateStrategy",
}

CUSTOM: dict[tuple[str, str], str] = {
    (_DEVICES, "DeviceClaim"): "devices.DeviceConstraintsStrategy",
    (_DEVICES, "DevicePrivilegedClaim"): "devices.DevicePrivilegedClaimStrategy",
    (_DEVICES, "DeviceClass"): "devices.DeviceConstraintsStrategy",
    (_DEVICES, "DeviceClaimTemplate"): "devices.DeviceClaimTemplateStrategy",
}


def for_type(rt: ResourceType) -> Strategy:
    if rt.builtin:
        name = BUILTIN.get((rt.group, rt.kind))
        return (strategy_class(name) if name else Strategy)(rt)
    name = CUSTOM.get((rt.group, rt.kind))
    return (strategy_class(name) if name else CustomResourceStrategy)(rt)


@cache
def strategy_class(name: str) -> type[Strategy]:
    """``"pods.PodStrategy"`` → the class, its module imported now if it was not yet."""
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(f"mockapi.registry.{module}"), attribute)
