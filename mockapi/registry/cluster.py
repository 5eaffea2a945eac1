"""The narrow handle a strategy's lifecycle hooks get: what kube's controllers and admission
plugins may read and do beside the write in progress, and nothing else.

A hook never sees the :class:`~mockapi.registry.rest.Registry` (nor imports it): it reads stored
objects, deletes objects as a client would (finalizers and hooks apply), writes an object the
registry's own way (conversion to the storage version, selectable-field index) when a controller
would (the namespace controller finalizing a namespace), and serves or stops serving kinds (the
CRD controllers). The registry builds one per instance.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Callable, Iterator

from mockapi import errors
from mockapi.gvk import ResourceType
from mockapi.registry.types import TypeRegistry
from mockapi.store import Store, Stored


@dataclass(frozen=True)
class ServiceRanges:
    """Where Services' cluster IPs and node ports come from (kube-apiserver's
    ``--service-cluster-ip-range`` and ``--service-node-port-range``)."""

    cluster_ip: ipaddress.IPv4Network | ipaddress.IPv6Network = ipaddress.ip_network("10.96.0.0/12")
    node_ports: tuple[int, int] = (30000, 32767)


def parse_service_ranges(cluster_ip: str, node_ports: str) -> ServiceRanges:
    """The ranges from their flag forms (``10.96.0.0/12``, ``30000-32767``); ValueError if bad."""
    try:
        network = ipaddress.ip_network(cluster_ip)
    except ValueError:
        raise ValueError(f"expected a CIDR such as 10.96.0.0/12, not {cluster_ip!r}") from None
    if network.num_addresses < 4:
        raise ValueError(f"the range {cluster_ip} is too small")
    low, _, high = node_ports.partition("-")
    if not (low.isdigit() and high.isdigit() and 0 < int(low) <= int(high) <= 65535):
        raise ValueError(f"expected a port range such as 30000-32767, not {node_ports!r}")
    return ServiceRanges(network, (int(low), int(high)))


@dataclass(frozen=True, eq=False)
class Cluster:
    store: Store  # read-only use: get and iterate (writes go through write/remove below)
    types: TypeRegistry
    now: Callable[[], str]
    delete: Callable[[ResourceType, str, str], None]  # a client's DELETE (404 ignored)
    write: Callable[[ResourceType, dict], Stored]  # store an object as the registry stores it
    remove: Callable[[ResourceType, dict], None]  # remove it for good (the object's final state), then its hooks
    create: Callable[[ResourceType, dict], None]  # a controller's POST (409 ignored)
    service_ranges: ServiceRanges = field(default_factory=ServiceRanges)

    def get(self, resource: errors.GroupResource, namespace: str, name: str) -> Stored | None:
        return self.store.get(resource, namespace, name)

    def objects(self, resource: errors.GroupResource, namespace: str | None = None) -> Iterator[Stored]:
        """The stored objects of a resource, in one namespace or (None) all."""
        return self.store.iterate(resource, namespace)

    def namespaced_types(self) -> list[ResourceType]:
        """One served type per namespaced resource."""
        seen, found = set(), []
        for rt in self.types.all():
            if rt.namespaced and rt.group_resource not in seen:
                seen.add(rt.group_resource)
                found.append(rt)
        return found

    def close_watchers(self, resource: errors.GroupResource) -> None:
        self.store.close_watchers(resource)

    def drop_resource(self, resource: errors.GroupResource) -> None:
        self.store.drop_resource(resource)
