"""The allocator's vocabulary: the kinds it reads and writes, claim keys, condition reasons, and
:class:`Failure` — "doesn't fit" and every other reason a claim is not allocated is a value."""

from __future__ import annotations

from dataclasses import dataclass

from mockapi.client import Kind
from mockapi.controllers.keys import ClaimKey  # noqa: F401  (the one claim key)

API_VERSION = "devmgmtproto.k8s.io/v1alpha1"
POOLS = Kind(API_VERSION, "DevicePool")
CLASSES = Kind(API_VERSION, "DeviceClass")
CLAIMS = Kind(API_VERSION, "DeviceClaim")
PRIVILEGED_CLAIMS = Kind(API_VERSION, "DevicePrivilegedClaim")
CLAIM_KINDS = {CLAIMS.kind: CLAIMS, PRIVILEGED_CLAIMS.kind: PRIVILEGED_CLAIMS}
NODES = Kind("v1", "Node")
NAMESPACES = Kind("v1", "Namespace")
CRDS = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")

FINALIZER = "devmgmtproto.k8s.io/allocation"
ADMIN_ACCESS_LABEL = "devmgmtproto.k8s.io/admin-access"
CONDITION = "Allocated"
COMPONENT = "mockapi-allocator"

# The Allocated condition's reasons (ALLOCATOR.md rule 13).
ALLOCATED = "Allocated"
UNSATISFIABLE = "Unsatisfiable"
INVALID_SPEC = "InvalidSpec"
CLASS_NOT_FOUND = "ClassNotFound"
CONSTRAINT_COMPILE_ERROR = "ConstraintCompileError"
CONSTRAINT_EVALUATION_ERROR = "ConstraintEvaluationError"
CONFIG_NOT_FOUND = "ConfigNotFound"
ALLOCATION_TIMEOUT = "AllocationTimeout"


@dataclass(frozen=True)
class Failure:
    """Why a claim is not allocated: one of the reasons above and a message a person can act on.
    ``waits`` names the events that could change the outcome (see :mod:`.queue`)."""

    reason: str
    message: str
    waits: frozenset = frozenset()
    transient: bool = False


# What could help a claim that failed for each reason.
POOLS_CHANGED, CLASSES_CHANGED, CAPACITY_FREED, CRD_ADDED = "pools", "classes", "capacity", "crds"
WAITS = {
    UNSATISFIABLE: frozenset({POOLS_CHANGED, CLASSES_CHANGED, CAPACITY_FREED}),
    CLASS_NOT_FOUND: frozenset({CLASSES_CHANGED}),
    CONSTRAINT_COMPILE_ERROR: frozenset({CLASSES_CHANGED}),
    CONSTRAINT_EVALUATION_ERROR: frozenset({POOLS_CHANGED, CLASSES_CHANGED}),
    INVALID_SPEC: frozenset({CLASSES_CHANGED}),
    CONFIG_NOT_FOUND: frozenset({CLASSES_CHANGED, CRD_ADDED}),
}


def failure(reason: str, message: str, *, waits: frozenset = frozenset()) -> Failure:
    return Failure(reason, message, WAITS.get(reason, frozenset()) | waits, transient=reason == ALLOCATION_TIMEOUT)
