"""The one key of a claim, shared by the allocator, its gate and the control API.

A claim is a DeviceClaim or a DevicePrivilegedClaim: (namespace, name, kind). It reads as
``NAMESPACE/NAME`` for a DeviceClaim and ``KIND/NAMESPACE/NAME`` otherwise (the allocator's logs and
explain reports); the control API takes ``RESOURCE/NAMESPACE/NAME`` (the plural,
``deviceprivilegedclaims``) and answers with :meth:`ClaimKey.to_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockapi.client import Kind

API_VERSION = "devmgmtproto.k8s.io/v1alpha1"
CLAIM = "DeviceClaim"
PRIVILEGED_CLAIM = "DevicePrivilegedClaim"
RESOURCES = {CLAIM: "deviceclaims", PRIVILEGED_CLAIM: "deviceprivilegedclaims"}
KINDS_BY_RESOURCE = {resource: kind for kind, resource in RESOURCES.items()}


@dataclass(frozen=True, order=True, slots=True)
class ClaimKey:
    namespace: str
    name: str
    kind: str = CLAIM

    @classmethod
    def of(cls, claim: dict) -> "ClaimKey":
        meta = claim["metadata"]
        return cls(meta.get("namespace", ""), meta["name"], claim.get("kind") or CLAIM)

    @classmethod
    def parse(cls, text: str) -> "ClaimKey":
        """``NAMESPACE/NAME`` (a DeviceClaim) or ``RESOURCE/NAMESPACE/NAME`` (ValueError if malformed)."""
        parts = text.split("/")
        if len(parts) == 2:
            parts.insert(0, RESOURCES[CLAIM])
        if len(parts) != 3 or not all(parts) or parts[0] not in KINDS_BY_RESOURCE:
            raise ValueError(
                f"a claim is NAMESPACE/NAME or RESOURCE/NAMESPACE/NAME with RESOURCE one of {', '.join(KINDS_BY_RESOURCE)}, not {text!r}"
            )
        return cls(parts[1], parts[2], KINDS_BY_RESOURCE[parts[0]])

    @property
    def api_kind(self) -> "Kind":
        return _api_kind(self.kind)

    @property
    def resource(self) -> str:
        return RESOURCES[self.kind]

    @property
    def privileged(self) -> bool:
        return self.kind == PRIVILEGED_CLAIM

    def __str__(self) -> str:
        prefix = "" if self.kind == CLAIM else f"{self.kind}/"
        return f"{prefix}{self.namespace}/{self.name}"

    def to_dict(self) -> dict:
        return {"resource": self.resource, "namespace": self.namespace, "name": self.name}


@cache
def _api_kind(kind: str) -> "Kind":
    """The client's Kind of a claim kind (the client imported on first use: the control API imports
    this module at start-up, the in-process client only the controllers need)."""
    from mockapi.client import Kind

    return Kind(API_VERSION, kind)
