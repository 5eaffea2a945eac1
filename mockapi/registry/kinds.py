"""Which strategy each kind has: the one table, so the strategy modules need not know each other."""

from __future__ import annotations

from mockapi.gvk import ResourceType
from mockapi.registry import batch, corekinds, crds, devices, namespaces, pods, rbac, reviews, scheduling, serviceaccounts, services, workloads
from mockapi.registry import apiservices, autoscaling, discovery, networking, policy, storage
from mockapi.registry.strategy import (
    ConfigMapStrategy, CustomResourceStrategy, EventStrategy, LeaseStrategy, NodeStrategy, SecretStrategy, Strategy,
)

_BUILTIN: dict[tuple[str, str], type[Strategy]] = {
    ("", "Namespace"): namespaces.NamespaceStrategy,
    ("", "ConfigMap"): ConfigMapStrategy,
    ("", "Secret"): SecretStrategy,
    ("", "Pod"): pods.PodStrategy,
    ("", "Node"): NodeStrategy,
    ("", "Event"): EventStrategy,
    ("", "Service"): services.ServiceStrategy,
    ("", "ServiceAccount"): serviceaccounts.ServiceAccountStrategy,
    (scheduling.GROUP, "PriorityClass"): scheduling.PriorityClassStrategy,
    ("coordination.k8s.io", "Lease"): LeaseStrategy,
    (workloads.GROUP, "Deployment"): workloads.WorkloadStrategy,
    (workloads.GROUP, "ReplicaSet"): workloads.WorkloadStrategy,
    (workloads.GROUP, "StatefulSet"): workloads.WorkloadStrategy,
    (workloads.GROUP, "DaemonSet"): workloads.WorkloadStrategy,
    (batch.GROUP, "Job"): batch.JobStrategy,
    (batch.GROUP, "CronJob"): batch.CronJobStrategy,
    (crds.GROUP, crds.KIND): crds.CustomResourceDefinitionStrategy,
    (rbac.GROUP, "Role"): rbac.RoleStrategy,
    (rbac.GROUP, "ClusterRole"): rbac.RoleStrategy,
    (rbac.GROUP, "RoleBinding"): rbac.BindingStrategy,
    (rbac.GROUP, "ClusterRoleBinding"): rbac.BindingStrategy,
    (reviews.GROUP, "SubjectAccessReview"): reviews.ReviewStrategy,
    (reviews.GROUP, "LocalSubjectAccessReview"): reviews.ReviewStrategy,
    (reviews.GROUP, "SelfSubjectAccessReview"): reviews.ReviewStrategy,
    (reviews.GROUP, "SelfSubjectRulesReview"): reviews.ReviewStrategy,
    # issue 12's second slice: policy, networking, storage, discovery
    (policy.GROUP, "PodDisruptionBudget"): policy.PodDisruptionBudgetStrategy,
    (networking.GROUP, "Ingress"): networking.IngressStrategy,
    (networking.GROUP, "IngressClass"): networking.IngressClassStrategy,
    (networking.GROUP, "NetworkPolicy"): networking.NetworkPolicyStrategy,
    (storage.GROUP, "StorageClass"): storage.StorageClassStrategy,
    (discovery.GROUP, "EndpointSlice"): discovery.EndpointSliceStrategy,
    (autoscaling.GROUP, "HorizontalPodAutoscaler"): autoscaling.HorizontalPodAutoscalerStrategy,
    (apiservices.GROUP, "APIService"): apiservices.APIServiceStrategy,
    # issue 12: core/v1 storage, endpoints, replication and policy kinds; apps/v1 ControllerRevision
    ("", "PersistentVolumeClaim"): corekinds.PersistentVolumeClaimStrategy,
    ("", "PersistentVolume"): corekinds.PersistentVolumeStrategy,
    ("", "Endpoints"): corekinds.EndpointsStrategy,
    ("", "ReplicationController"): corekinds.ReplicationControllerStrategy,
    ("", "LimitRange"): corekinds.LimitRangeStrategy,
    ("", "ResourceQuota"): corekinds.ResourceQuotaStrategy,
    (workloads.GROUP, "ControllerRevision"): corekinds.ControllerRevisionStrategy,
}

_CUSTOM: dict[tuple[str, str], type[Strategy]] = {
    (devices.GROUP, "DeviceClaim"): devices.DeviceConstraintsStrategy,
    (devices.GROUP, "DevicePrivilegedClaim"): devices.DevicePrivilegedClaimStrategy,
    (devices.GROUP, "DeviceClass"): devices.DeviceConstraintsStrategy,
    (devices.GROUP, "DeviceClaimTemplate"): devices.DeviceClaimTemplateStrategy,
}


def for_type(rt: ResourceType) -> Strategy:
    if rt.builtin:
        return _BUILTIN.get((rt.group, rt.kind), Strategy)(rt)
    return _CUSTOM.get((rt.group, rt.kind), CustomResourceStrategy)(rt)
