"""The devmgmtproto.k8s.io/v1alpha1 kinds as pydantic models (the prototype's ``pkg/api`` types).

One class per Go type of kubernetes-sigs/wg-device-management ``k8srm-prototype/pkg/api``; the Go
doc comments are the field descriptions (``kubectl explain`` shows them, through the CRDs that
:mod:`mockapi.models.crdgen` generates from these classes). Python names are snake_case, wire names
camelCase. A field without a default is required on the wire.

Our extensions, marked "mockapi extension" in their descriptions (see ALLOCATOR.md):
``DeviceAllocation.adminAccess``, ``DeviceClaimStatus.conditions`` and ``DeviceClaimStatus.nodeName``;
``DeviceDriver`` (``deviceTypes`` at the top level, no spec) and ``DevicePrivilegedClaim`` (the
shape of ``DeviceClaim``) are the kinds the prototype's mock API server served without Go types.

Quantities stay ``int | str`` as on the wire (the allocator parses them); RawExtension is a plain
dict. ``metadata`` keeps every ObjectMeta field (typed where the server guarantees the type).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

GROUP = "devmgmtproto.k8s.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

# resource.Quantity's serialization pattern, as controller-gen writes it into CRDs.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


@dataclass(frozen=True, eq=False)  # hashed by identity: typing puts Annotated metadata in sets
class OpenAPI:
    """``Annotated`` marker: the OpenAPI v3 schema of a type that is not a plain Python type."""

    schema: dict[str, Any]


Quantity = Annotated[
    int | str,
    OpenAPI({"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": QUANTITY_PATTERN, "x-kubernetes-int-or-string": True}),
]
RawExtension = Annotated[dict[str, Any], OpenAPI({"type": "object", "x-kubernetes-preserve-unknown-fields": True})]


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, alias_generator=to_camel, extra="forbid")


class ObjectMeta(BaseModel):
    """Standard object's metadata (metav1.ObjectMeta). Fields not typed here are kept as they are."""

    model_config = ConfigDict(populate_by_name=True, alias_generator=to_camel, extra="allow")

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    owner_references: list[dict[str, Any]] | None = None


class _Object(_Model):
    """The TypeMeta and ObjectMeta every kind starts with."""

    api_version: str | None = Field(
        None,
        description="APIVersion defines the versioned schema of this representation of an object.\n"
        "Servers should convert recognized schemas to the latest internal value, and\n"
        "may reject unrecognized values.\n"
        "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
    )
    kind: str | None = Field(
        None,
        description="Kind is a string value representing the REST resource this object represents.\n"
        "Servers may infer this from the endpoint the client submits requests to.\n"
        "Cannot be updated.\n"
        "In CamelCase.\n"
        "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
    )
    metadata: Annotated[ObjectMeta, OpenAPI({"type": "object"})] = Field(default_factory=ObjectMeta)


# ---------------------------------------------------------------------------------------------
# Capacity types (capacity_types.go)


# Kubernetes' ResourceSlice limits (k8s.io/api/resource: DeviceAttributeMaxValueLength,
# DeviceMaxIDLength, DeviceMaxDomainLength): attribute names are qualified names — a C identifier
# of at most 32 characters, optionally prefixed by a DNS subdomain and "/" (kube checks the domain
# as a driver name: at most 63 characters, compared lowercased) — and string and version values
# hold at most 64 characters. The CEL cost estimate of the allocator relies on these caps.
ATTRIBUTE_VALUE_MAX_LENGTH = 64
ATTRIBUTE_NAME_MAX_LENGTH = 63 + 1 + 32
ATTRIBUTE_NAME_PATTERN = (
    r"^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*/)?[A-Za-z_][A-Za-z0-9_]{0,31}$"
)
_VALUE = {"maxLength": ATTRIBUTE_VALUE_MAX_LENGTH}
# A pool's devices are a list map keyed by name: a duplicate device name is refused with 422
# "Duplicate value", as Kubernetes' ResourceSlice validation refuses it. Attribute lists stay
# atomic: as list maps their managedFields would track every attribute of every device (stored
# pools twice as large); the allocator names a duplicate attribute as the problem instead.
_NAMED_LIST = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}


class Attribute(_Model):
    """Attribute capture the name, value, and type of an device attribute."""

    name: str = Field(
        description="Name is the name of the attribute.\n"
        "A C identifier of at most 32 characters, optionally prefixed by a DNS subdomain and a slash (as Kubernetes' QualifiedName).",
        json_schema_extra={"maxLength": ATTRIBUTE_NAME_MAX_LENGTH, "pattern": ATTRIBUTE_NAME_PATTERN},
    )
    string_value: str | None = Field(
        None, description="StringValue is a string value. One of the value fields must be set.\nAt most 64 characters.", json_schema_extra=_VALUE
    )
    int_value: int | None = Field(None, description="IntValue is an integer value. One of the value fields must be set.")
    quantity_value: Quantity | None = Field(
        None, description="QuantityValue is a quantity value, such as 40Gi. One of the value fields must be set."
    )
    sem_ver_value: str | None = Field(
        None,
        description="SemVerValue is a semantic version value, such as 1.8.2. One of the value fields must be set.\n"
        "In this prototype it is just a string.\nAt most 64 characters.",
        json_schema_extra=_VALUE,
    )


class ResourceCapacity(_Model):
    """ResourceCapacity is the capacity of a named resource, allocated in blocks of blockSize."""

    name: str = Field(description="Name is the resource name/type.")
    capacity: Quantity = Field(description="Capacity is the total capacity of the named resource.")
    block_size: Quantity | None = Field(
        None,
        description="BlockSize is the increments in which capacity is consumed. For\n"
        "example, if you can only allocate memory in 4k pages, then the\n"
        'block size should be "4Ki". Default is 1.',
    )


class Device(_Model):
    """Device is used to track individual devices in a pool."""

    name: str = Field(description="Name is a driver-specific identifier for the device.")
    attributes: list[Attribute] | None = Field(
        None,
        description="Attributes contain additional metadata that can be used in\n"
        "constraints. If an attribute name overlaps with the pool attribute,\n"
        "the device attribute takes precedence.",
    )
    requests: dict[str, Quantity] | None = Field(
        None,
        description="Requests contains the pool resources that are consumed when\nthis device is allocated.",
    )
    resources: list[ResourceCapacity] | None = Field(
        None,
        description="Resources allows the definition of per-device resources that can\n"
        "be allocated in a manner similar to standard Kubernetes resources.\n"
        "NOTE: We may not need to implement this right away.",
    )


class DevicePoolSpec(_Model):
    """DevicePoolSpec identifies the driver and contains the data for the pool
    prior to any allocations.
    NOTE: It's not clear that spec/status is the right model for this data."""

    node_name: str | None = Field(
        None,
        description="NodeName is the name of the node containing the devices in the pool.\n"
        "For network attached devices, this may be empty.",
    )
    driver: str = Field(
        description="Driver is the name of the DeviceDriver that created this object and\nowns the data in it."
    )
    attributes: list[Attribute] | None = Field(
        None,
        description="Attributes contains device attributes that are common to all devices\nin the pool.",
    )
    resources: list[ResourceCapacity] | None = Field(
        None,
        description="Resources are pooled resources that are shared by all devices in the\n"
        "pool. This is typically used when representing a partitionable\n"
        "device, and need not be populated otherwise.",
    )
    devices: list[Device] = Field(
        description="Devices contains the individual devices in the pool.\nDevice names are unique within the pool.",
        json_schema_extra=_NAMED_LIST,
    )


class DevicePoolStatus(_Model):
    """DevicePoolStatus contains the state of the pool as last reported by the
    driver. Note that this will not include the allocations that have been
    made by the scheduler but not yet seen by the driver. Thus, it is NOT
    sufficient to make future scheduling decisions."""

    available_devices: int | None = Field(
        None,
        description="AvailableDevices is the number of devices of the pool the driver last reported as available.\n"
        "mockapi's allocator, standing in for the driver, keeps it current: the devices the spec lists\n"
        "that are allocatable and held by no claim.",
    )


class DevicePool(_Object):
    """DevicePool represents a collection of devices managed by a given driver. How
    devices are divided into pools is driver-specific, but typically the
    expectation would a be a pool per identical collection of devices, per node.
    It is fine to have more than one pool for a given node, for the same driver."""

    spec: DevicePoolSpec
    status: DevicePoolStatus | None = None


class DeviceDriver(_Object):
    """DeviceDriver is published by a driver to register with the control plane
    and declare the device types it handles (for example "gpu" or "sriov-nic").
    Claims may name a device type instead of a class. Cluster scoped."""

    device_types: list[str] = Field(
        description="DeviceTypes lists the driver-independent device types this driver handles."
    )


# ---------------------------------------------------------------------------------------------
# Claim types (claim_types.go)


class DeviceClassConfigReference(_Model):
    """DeviceClassConfigReference is used to refer to arbitrary configuration
    objects from the class. Since it is the class, and therefore is created by
    the administrator, it allows referencing objects in any namespace."""

    api_version: str = Field(description="API version of the referent.")
    kind: str = Field(description="Kind of the referent.")
    namespace: str = Field(description="Namespace of the referent.")
    name: str = Field(description="Name of the referent.")


class DeviceClassSpec(_Model):
    """DeviceClassSpec provides the details of the DeviceClass."""

    driver: str = Field(
        description="Driver specifies the driver that should handle this class of devices.\n"
        "When a DeviceClaim uses this class, only devices published by the\n"
        "specified driver will be considered."
    )
    device_type: str = Field(
        description="DeviceType is a driver-independent classification of the device.  In\n"
        "claims, this may be used instead of specifying the class\n"
        "explicitly, so that we do not aribtrarily limit claims to a\n"
        "particular vendor's devices.\n"
        "\n"
        "Alternatively, we may want to consider a DeviceCapabilities vector,\n"
        "or use device attributes or individual resource types supported by a\n"
        "device to indicate device functions."
    )
    constraints: str | None = Field(
        None,
        description="Constraints is a CEL expression that operates on device attributes,\n"
        "and must evaluate to true for a device to be considered. It will be\n"
        "ANDed with any Constraints field in the DeviceClaim using this class.",
    )
    admin_access: bool | None = Field(
        None,
        description="AdminAccess indicates that this class provides administrative access\n"
        "to the devices. Claims using a class with AdminAccess are expected\n"
        "to be used for monitoring or other management services for a device.\n"
        "They ignore all ordinary claims to the device with respect to access\n"
        "modes and any resource allocations. Access to these classes must be\n"
        "controlled via ResourceQuota. Default is false.",
    )
    configs: list[DeviceClassConfigReference] | None = Field(
        None,
        description="DeviceConfigs contains references to arbitrary vendor device configuration\n"
        "objects that will be attached to the device allocation.",
    )


class DeviceClass(_Object):
    """DeviceClass is a vendor or admin-provided resource that contains
    contraint and configuration information. Essentially, it is a re-usable
    collection of predefined data that device claims may use.
    Cluster scoped."""

    spec: DeviceClassSpec


class DeviceConfigReference(_Model):
    """DeviceConfigReference is used to refer to arbitrary configuration object
    from the claim. Since it is created by the end user, the referenced objects
    are restricted to the same namespace as the DeviceClaim."""

    api_version: str = Field(description="API version of the referent.")
    kind: str = Field(description="Kind of the referent.")
    name: str = Field(description="Name of the referent.")


class DeviceClaimDetail(_Model):
    """DeviceClaimDetail contains the details of how to fulfill a specific
    request for devices."""

    device_type: str | None = Field(
        None,
        description="DeviceType may be specified to get a device from any class that\n"
        "supports this type of device. For example, the user can request\n"
        "an 'sriov-nic', and any class that can provide that type will be\n"
        "considered for fulfillment of the claim.",
    )
    device_class: str | None = Field(
        None,
        description="DeviceClass is the name of the DeviceClass containing the basic information\n"
        "about the device being requested.",
    )
    constraints: str | None = Field(
        None,
        description="Constraints is a CEL expression that operates on device attributes.\n"
        "In order for a device to be considered, this CEL expression and the\n"
        "Constraints expression from the DeviceClass must both be true.",
    )
    requests: dict[str, Quantity] | None = Field(
        None,
        description="Requests allows the user to specify the minimum requirements that\n"
        "must be satisfied across all devices allocated for this claim.  All\n"
        'drivers can support "count" for requests, but other resource types\n'
        "are driver-specific. The default value for requests is a single\n"
        'entry for "count" with value of 1.',
    )
    limits: dict[str, Quantity] | None = Field(
        None,
        description="Limits allows the user to control the maximum count of devices\n"
        "that is allocated to satisfy the claim. Depending on the driver\n"
        "and device other resource limits may or may not be enforceable.",
    )
    match_attributes: list[str] | None = Field(
        None,
        description="MatchAttributes allows specifying a constraint within a set of\n"
        "chosen devices, without having to explicitly specify the value of\n"
        "the constraint.  For example, this allows constraints like \"all\n"
        'devices must be the same model", without having to specify the exact\n'
        "model. We may be able to use this for some basic topology\n"
        "constraints too, by representing the topology as device attributes.\n"
        "\n"
        "Currently, these are just strings. However, we could make them\n"
        "structs, and include required vs preferred matches. Required matches\n"
        "would fail if not met, where as preferred would lower the score if\n"
        "not met. We could even allow low/medium/high priority and adjust the\n"
        "score differently for each.",
    )
    configs: list[DeviceConfigReference] | None = Field(
        None,
        description="Configs contains references to arbitrary vendor device configuration\n"
        "objects that will be attached to the device allocation.",
    )


class DeviceClaimInstance(DeviceClaimDetail):
    """DeviceClaimInstance captures a claim which must be satisfied,
    or a group for which one must be sastisfied.
    If fields of DeviceClaimDetail are populated, OneOf should be empty."""

    one_of: list[DeviceClaimDetail] | None = Field(
        None,
        description="OneOf contains a list of claims, only one of which must be satisfied.\n"
        "Claims are listed in order of priority.",
    )


class DeviceClaimSpec(_Model):
    """DeviceClaimSpec details the requirements that devices chosen
    to satisfy this claim must meet."""

    match_attributes: list[str] | None = Field(
        None,
        description="MatchAttributes allows specifying a constraint that will apply\n"
        'across all of the claims. For example, if you specified "numa", then\n'
        "this overall claim could only be successfully fulfilled if all of\n"
        "the included claims could be fulfilled by pools with the same \"numa\"\n"
        "attribute value. If we simply set matchAttributes in each claim\n"
        "separately, then they could be consistent within claims, but\n"
        "inconsistent across claims. Therefore, we need this additional\n"
        "constraint.",
    )
    claims: list[DeviceClaimInstance] = Field(
        description="Claims contains the actual claim details, arranged into groups\n"
        "containing claims which must all be satsified, or for which only\n"
        "one needs to be satisfied."
    )


# ---------------------------------------------------------------------------------------------
# Allocation types (the status of claims)


class Condition(_Model):
    """Condition contains details for one aspect of the current state of this API Resource."""

    type: str = Field(
        description="type of condition in CamelCase or in foo.example.com/CamelCase.",
        json_schema_extra={
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
    )
    status: str = Field(
        description="status of the condition, one of True, False, Unknown.",
        json_schema_extra={"enum": ["True", "False", "Unknown"]},
    )
    observed_generation: int | None = Field(
        None,
        description="observedGeneration represents the .metadata.generation that the condition was set based upon.\n"
        "For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, "
        "the condition is out of date\n"
        "with respect to the current state of the instance.",
        json_schema_extra={"format": "int64", "minimum": 0},
    )
    last_transition_time: str = Field(
        description="lastTransitionTime is the last time the condition transitioned from one status to another.\n"
        "This should be when the underlying condition changed.  If that is not known, then using the time "
        "when the API field changed is acceptable.",
        json_schema_extra={"format": "date-time"},
    )
    reason: str = Field(
        description="reason contains a programmatic identifier indicating the reason for the condition's last transition.\n"
        "Producers of specific condition types may define expected values and meanings for this field,\n"
        "and whether the values are considered a guaranteed API.\n"
        "The value should be a CamelCase string.\n"
        "This field may not be empty.",
        json_schema_extra={"maxLength": 1024, "minLength": 1, "pattern": r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"},
    )
    message: str = Field(
        description="message is a human readable message indicating details about the transition.\nThis may be an empty string.",
        json_schema_extra={"maxLength": 32768},
    )


# metav1.Condition lists are maps keyed by type, as in Kubernetes' own types (+listType=map).
_CONDITION_LIST = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}


class ResourceAllocation(_Model):
    """ResourceAllocation contains the per-device resource allocations."""

    name: str = Field(description="Name is the resource name/string for this allocation.")
    allocation: Quantity = Field(description="Amount is the amount of resource allocated for this claim.")


class DeviceAllocation(_Model):
    """DeviceAllocation contains an individual device allocation result, including
    per-device resource allocations, when applicable."""

    device_pool_name: str = Field(
        description="DevicePoolName is the name of the DevicePool to which this\ndevice belongs."
    )
    device_name: str = Field(description="DeviceName contains the name of the allocated Device.")
    allocations: list[ResourceAllocation] | None = Field(
        None,
        description="Allocations contain the resource allocations from this device,\n"
        "for the claim. Note that this may only satisfy part of the claim.\n"
        "Also, because devices may allocate some resources in blocks, this\n"
        "may even be larger than the requests or limits in the claim.",
    )
    admin_access: bool | None = Field(
        None,
        description="AdminAccess is true when the device was allocated with administrative access\n"
        "(a class with adminAccess, or a DevicePrivilegedClaim): it consumes no pool or\n"
        "device resources and does not keep the device from other claims.\n"
        "mockapi extension.",
    )


class DeviceIP(_Model):
    """DeviceIP is one IP address assigned to a device."""

    ip: str | None = Field(None, description="IP is the IP address assigned to the device")


class DeviceStatus(_Model):
    """DeviceStatus contains the status of an allocated result, if the driver
    chooses to report it. This may include driver-specific information."""

    device_pool_name: str = Field(
        description="DevicePoolName is the name of the DevicePool to which this\n"
        "device belongs. The driver for that device pool owns this\n"
        "entry."
    )
    device_name: str = Field(description="DeviceName contains the name of the allocated Device.")
    conditions: list[Condition] | None = Field(
        None,
        description="Conditions contains the latest observation of the device's state.",
        json_schema_extra=_CONDITION_LIST,
    )
    device_ip: str | None = Field(
        None, alias="deviceIP", description="DeviceIP contains the IP allocated for the device, if appropriate."
    )
    device_ips: list[DeviceIP] | None = Field(
        None,
        alias="deviceIPs",
        description="DeviceIPs contains all of the IPs allocated for a device, if any.\n"
        "If populated, the zero'th entry must match DeviceIP.",
    )
    device_info: list[RawExtension] | None = Field(None, description="Arbitrary driver-specific data.")
    allocations: list[ResourceAllocation] | None = Field(
        None,
        description="Allocations contain the resource allocations from this device,\n"
        "for the claim. Note that this may only satisfy part of the claim.\n"
        "Also, because devices may allocate some resources in blocks, this\n"
        "may even be larger than the requests or limits in the claim.",
    )


class DeviceClaimStatus(_Model):
    """DeviceClaimStatus contains the results of the claim allocation."""

    class_configs: list[RawExtension] | None = Field(
        None,
        description="ClassConfigs contains the entire set of dereferenced vendor\n"
        "configurations from the DeviceClass, as of the time of allocation.",
    )
    claim_configs: list[RawExtension] | None = Field(
        None,
        description="ClaimConfigs contains the entire set of dereferenced vendor\n"
        "configurations from the DeviceClaim, as of the time of allocation.",
    )
    allocations: list[DeviceAllocation] | None = Field(
        None,
        description="Allocations contains the list of device allocations needed to\n"
        "satisfy the claim, one per pool from which devices were allocated.\n"
        "\n"
        'Note that the "current capacity" of the cluster is the result of\n'
        "applying all such allocations to the published DevicePools. This\n"
        "means storing these allocations only in claim status fields is likely\n"
        "to scale poorly, and we will need a different strategy in the real\n"
        "code. For example, we may need to accumulate these in the DevicePool\n"
        "status fields themselves, and just reference them from here.\n"
        "\n"
        "This field is owned by the scheduler, whereas the Devices field\n"
        "is owned by the driver.",
    )
    device_statuses: list[DeviceStatus] | None = Field(
        None,
        description="Devices contains the status of each device assigned to this\n"
        "claim, as reported by the driver. This can include driver-specific\n"
        "information. Entries are owned by their respective drivers.",
    )
    pod_names: list[str] | None = Field(None, description="PodNames contains the names of all Pods using this claim.")
    conditions: list[Condition] | None = Field(
        None,
        description="Conditions contains the latest observations of the claim's state. The\n"
        "allocator maintains the Allocated condition: status True once devices are\n"
        "allocated, False with a reason (Unsatisfiable, InvalidSpec, ClassNotFound,\n"
        "ConstraintCompileError, ConstraintEvaluationError, ConfigNotFound,\n"
        "AllocationTimeout) and a message while they cannot be.\n"
        "mockapi extension.",
        json_schema_extra=_CONDITION_LIST,
    )
    node_name: str | None = Field(
        None,
        description="NodeName is the node whose devices were allocated; absent when only\n"
        "network-attached devices were.\n"
        "mockapi extension.",
    )


class DeviceClaim(_Object):
    """DeviceClaim is used to specify a request for a set of devices.
    Namespace scoped."""

    spec: DeviceClaimSpec
    status: DeviceClaimStatus | None = None


class DevicePrivilegedClaim(_Object):
    """DevicePrivilegedClaim is a DeviceClaim with administrative access to the
    devices it selects, for monitoring or other management services: its
    devices may already be allocated to other claims, and it consumes no
    resources. Allowed only in namespaces labelled
    devmgmtproto.k8s.io/admin-access: "true". Namespace scoped."""

    spec: DeviceClaimSpec
    status: DeviceClaimStatus | None = None


class DeviceClaimTemplateMeta(_Model):
    """The metadata copied into each DeviceClaim made from a template: labels and annotations only."""

    labels: dict[str, str] | None = Field(None, description="Labels added to each claim made from the template.")
    annotations: dict[str, str] | None = Field(None, description="Annotations added to each claim made from the template.")


class DeviceClaimTemplateSpec(_Model):
    """What a DeviceClaim made from the template gets."""

    metadata: DeviceClaimTemplateMeta | None = Field(
        None,
        description="Labels and annotations copied into each DeviceClaim made from the template.\n"
        "No other metadata fields are allowed.",
    )
    spec: DeviceClaimSpec = Field(
        description="Spec of each DeviceClaim made from the template; its validation is the\n"
        "DeviceClaim's.",
    )


class DeviceClaimTemplate(_Object):
    """DeviceClaimTemplate is the pattern of the DeviceClaims made for each pod that
    names it in spec.deviceClaims[].claimTemplateName (one claim per pod and entry,
    owned by the pod, deleted with it). Shaped like Kubernetes' ResourceClaimTemplate.
    It is never allocated itself. Namespace scoped."""

    spec: DeviceClaimTemplateSpec


# kind → model, for the kinds served under devmgmtproto.k8s.io/v1alpha1.
KINDS: dict[str, type[_Object]] = {
    model.__name__: model
    for model in (DeviceDriver, DeviceClass, DevicePool, DeviceClaim, DevicePrivilegedClaim, DeviceClaimTemplate)
}
