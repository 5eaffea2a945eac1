"""discovery.k8s.io/v1 EndpointSlice as kube-apiserver stores it (``pkg/apis/discovery/validation``).
No EndpointSlice controller runs: a Service gets no slices unless a client writes them.

- **Generation**: 1 on create, counting changes (the endpointslice strategy).
- **Defaults** (``SetDefaults_EndpointPort``): a port's ``protocol`` is ``TCP`` (schema default)
  and its ``name`` ``""``.
- **Validation**: ``addressType`` is ``IPv4``, ``IPv6`` or ``FQDN`` and immutable; each endpoint
  has 1 to 100 addresses, which for ``IPv4``/``IPv6`` are addresses of that family; at most 1000
  endpoints and 20000 ports.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from mockapi import errors
from mockapi.registry.strategy import Strategy, not_supported

GROUP = "discovery.k8s.io"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
MAX_ADDRESSES, MAX_ENDPOINTS, MAX_PORTS = 100, 1000, 20000


class EndpointSliceStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        _default_ports(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        _default_ports(new)
        return super().prepare_for_update(new, old, subresource=subresource)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        kind = obj.get("addressType")
        problems = [] if kind in ADDRESS_TYPES else [not_supported("addressType", kind, ADDRESS_TYPES)]
        endpoints = obj.get("endpoints") if isinstance(obj.get("endpoints"), list) else []
        if len(endpoints) > MAX_ENDPOINTS:
            problems.append(errors.FieldError("too_many", "endpoints", f"must have at most {MAX_ENDPOINTS} items", value=len(endpoints)))
        for index, endpoint in enumerate(endpoints):
            addresses = endpoint.get("addresses") if isinstance(endpoint, dict) and isinstance(endpoint.get("addresses"), list) else []
            where = f"endpoints[{index}].addresses"
            if not addresses:
                problems.append(errors.FieldError("required", where, "must contain at least 1 address"))
            elif len(addresses) > MAX_ADDRESSES:
                problems.append(errors.FieldError("too_many", where, f"must have at most {MAX_ADDRESSES} items", value=len(addresses)))
            for a, address in enumerate(addresses[:MAX_ADDRESSES]):
                if kind in ("IPv4", "IPv6") and not _is_ip(address, 4 if kind == "IPv4" else 6):
                    problems.append(errors.FieldError("invalid", f"{where}[{a}]", f"must be a valid {kind} address", value=address))
        ports = obj.get("ports") if isinstance(obj.get("ports"), list) else []
        if len(ports) > MAX_PORTS:
            problems.append(errors.FieldError("too_many", "ports", f"must have at most {MAX_PORTS} items", value=len(ports)))
        if old is not None and kind != old.get("addressType"):
            problems.append(errors.FieldError("invalid", "addressType", "field is immutable", value=kind))
        return problems


def _default_ports(obj: dict) -> None:
    for port in obj.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("name", "")


def _is_ip(value: Any, family: int) -> bool:
    try:
        return isinstance(value, str) and ipaddress.ip_address(value).version == family
    except ValueError:
        return False
