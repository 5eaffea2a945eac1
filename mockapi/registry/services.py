"""Services (core/v1): kube's defaults, the validation clients run into, and the allocation of
cluster IPs and node ports.

- **Defaults** (``SetDefaults_Service``): ``type: ClusterIP``, ``sessionAffinity: None`` (ClientIP
  gets a 10800 s timeout), each port's ``protocol: TCP`` and ``targetPort`` = ``port``,
  ``internalTrafficPolicy: Cluster`` (all types but ExternalName), ``externalTrafficPolicy:
  Cluster`` for NodePort and LoadBalancer, ``allocateLoadBalancerNodePorts: true`` for
  LoadBalancer; ``status: {loadBalancer: {}}``.
- **Allocation** (kube's service REST and its IP and port allocators): a ``clusterIP`` from
  ``--service-cluster-ip-range`` (default 10.96.0.0/12), or the one asked for when it is in the
  range and free; ``clusterIPs``, ``ipFamilies`` and ``ipFamilyPolicy: SingleStack`` beside it
  (headless services: ``None``; without a selector ``RequireDualStack``); node ports from
  ``--service-node-port-range`` (default 30000-32767) for NodePort and LoadBalancer services. As
  upstream, a dynamic value comes from the upper part of the range (the lower part is kept for
  values users choose); unlike upstream, it is the lowest free one there, not a random one, so
  runs are reproducible. A taken or out-of-range value is refused with kube's 422 messages.
- **Updates**: what an update leaves out of the allocated values (``clusterIP``, ``clusterIPs``,
  ``ipFamilies``, ``ipFamilyPolicy``, node ports by port name) is kept, as kube's
  ``patchAllocatedValues`` does for ``kubectl apply``; ``clusterIP`` is immutable once set; node
  ports go when the type no longer needs them.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from mockapi import errors
from mockapi.registry.cluster import Cluster, ServiceRanges
from mockapi.registry.strategy import Strategy, json_copy, not_supported

SERVICES = errors.GroupResource("", "services")
TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
PROTOCOLS = ("SCTP", "TCP", "UDP")
AFFINITIES = ("ClientIP", "None")
CLIENT_IP_TIMEOUT = 10800  # v1.DefaultClientIPServiceAffinitySeconds
_ALLOCATED = ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy")


class ServiceStrategy(Strategy):
    return_deleted_object = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"loadBalancer": {}}
        set_defaults(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "status":
            set_defaults(new)
            _keep_allocated(_spec(new), _spec(old))
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems = spec_errors(_spec(obj))
        if old is not None:
            problems += update_errors(_spec(obj), _spec(old))
        return problems

    def admit(self, cluster: Cluster, obj: dict) -> None:
        allocate(cluster, obj, None)

    def before_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        if old is not None:
            allocate(cluster, obj, old)


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _ports(spec: dict) -> list[dict]:
    return [p for p in spec.get("ports") or [] if isinstance(p, dict)]


def set_defaults(obj: dict) -> None:
    """SetDefaults_Service."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec["sessionAffinity"] = spec.get("sessionAffinity") or "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP" and not ((spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}).get("timeoutSeconds"):
        spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": CLIENT_IP_TIMEOUT}}
    spec["type"] = kind = spec.get("type") or "ClusterIP"
    for port in _ports(spec):
        port["protocol"] = port.get("protocol") or "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if (kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and spec.get("externalIPs"))) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def _keep_allocated(new: dict, old: dict) -> None:
    """patchAllocatedValues: an update that leaves out allocated values keeps them."""
    if _needs_cluster_ip(old) and _needs_cluster_ip(new) and not new.get("clusterIP"):
        for key in _ALLOCATED:
            if key in old and not new.get(key):
                new[key] = json_copy(old[key])
    if _needs_node_ports(old) and _needs_node_ports(new):
        used = {p.get("nodePort") for p in _ports(new)} & {p.get("nodePort") for p in _ports(old)}
        by_name = {p.get("name", ""): p.get("nodePort") for p in _ports(old)}
        for port in _ports(new):
            if not port.get("nodePort") and by_name.get(port.get("name", "")) not in (None, *used):
                port["nodePort"] = by_name[port.get("name", "")]
    elif _needs_node_ports(old):
        for port in _ports(new):
            if port.get("nodePort") == next((p.get("nodePort") for p in _ports(old) if p.get("name", "") == port.get("name", "")), None):
                port.pop("nodePort", None)


def _needs_cluster_ip(spec: dict) -> bool:
    return spec.get("type", "ClusterIP") != "ExternalName"


def _needs_node_ports(spec: dict) -> bool:
    kind = spec.get("type")
    return kind == "NodePort" or (kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True) is not False)


def spec_errors(spec: dict) -> list[errors.FieldError]:
    """The parts of ValidateService clients meet most."""
    problems = []
    kind = spec.get("type")
    if kind not in TYPES:
        return [not_supported("spec.type", kind, TYPES)]
    if spec.get("sessionAffinity") not in AFFINITIES:
        problems.append(not_supported("spec.sessionAffinity", spec.get("sessionAffinity"), AFFINITIES))
    ports = _ports(spec)
    if not ports and spec.get("clusterIP") != "None" and kind != "ExternalName":
        problems.append(errors.FieldError("required", "spec.ports", ""))
    if kind == "ExternalName" and not spec.get("externalName"):
        problems.append(errors.FieldError("required", "spec.externalName", ""))
    names, keys = set(), set()
    for i, port in enumerate(ports):
        path = f"spec.ports[{i}]"
        name = port.get("name", "")
        if len(ports) > 1 and not name:
            problems.append(errors.FieldError("required", f"{path}.name", ""))
        elif name in names:
            problems.append(errors.FieldError("duplicate", f"{path}.name", value=name))
        names.add(name)
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            problems.append(errors.FieldError("invalid", f"{path}.port", "must be between 1 and 65535, inclusive", value=number))
        if port.get("protocol") not in PROTOCOLS:
            problems.append(not_supported(f"{path}.protocol", port.get("protocol"), PROTOCOLS))
        target = port.get("targetPort")
        if isinstance(target, int) and not isinstance(target, bool) and not 1 <= target <= 65535:
            problems.append(errors.FieldError("invalid", f"{path}.targetPort", "must be between 1 and 65535, inclusive", value=target))
        if port.get("nodePort") and not _needs_node_ports(spec) and kind in ("ClusterIP", "ExternalName"):
            problems.append(errors.FieldError("forbidden", f"{path}.nodePort", f"may not be used when `type` is '{kind}'"))
        key = (number, port.get("protocol"))
        if key in keys:
            problems.append(errors.FieldError("duplicate", path, value={"port": number, "protocol": port.get("protocol")}))
        keys.add(key)
    return problems


def update_errors(new: dict, old: dict) -> list[errors.FieldError]:
    """ValidateServiceUpdate: a set clusterIP stays (unless the type moves to or from ExternalName)."""
    if new.get("type") != "ExternalName" and old.get("type") != "ExternalName" and old.get("clusterIP"):
        if new.get("clusterIP") != old.get("clusterIP"):
            return [errors.FieldError("invalid", "spec.clusterIP", "field is immutable", value=new.get("clusterIP", ""))]
    return []


# ------------------------------------------------------------------ allocation
def allocate(cluster: Cluster, obj: dict, old: dict | None) -> None:
    """Give a valid service its cluster IP and node ports, or refuse it (422)."""
    spec = _spec(obj)
    ranges = cluster.service_ranges
    problems = []
    others = [s.load() for s in cluster.objects(SERVICES) if (s.namespace, s.name) != (obj["metadata"].get("namespace"), obj["metadata"]["name"])]
    if spec.get("clusterIP") == "None":
        spec["clusterIPs"] = ["None"]
        spec.setdefault("ipFamilies", [_family(ranges)])
        spec.setdefault("ipFamilyPolicy", "SingleStack" if spec.get("selector") else "RequireDualStack")
    elif _needs_cluster_ip(spec):
        problems += _allocate_ip(spec, ranges, {_spec(o).get("clusterIP") for o in others})
    if _needs_node_ports(spec):
        problems += _allocate_node_ports(spec, ranges, {p.get("nodePort") for o in others for p in _ports(_spec(o))})
    if problems:
        raise errors.invalid("Service", "", obj["metadata"]["name"], problems)


def _family(ranges: ServiceRanges) -> str:
    return "IPv6" if ranges.cluster_ip.version == 6 else "IPv4"


def _allocate_ip(spec: dict, ranges: ServiceRanges, taken: set) -> list[errors.FieldError]:
    network = ranges.cluster_ip
    asked = spec.get("clusterIP") or (spec.get("clusterIPs") or [None])[0]
    if asked:
        problem = _ip_problem(asked, network, taken)
        if problem:
            return [errors.FieldError("invalid", "spec.clusterIPs", f"failed to allocate IP {asked}: {problem}", value=[asked])]
        address = asked
    else:
        address = _first_free_ip(network, taken)
        if address is None:
            return [errors.FieldError("invalid", "spec.clusterIPs", "failed to allocate a serviceIP: range is full", value=[])]
    spec["clusterIP"] = address
    spec["clusterIPs"] = [address]
    spec.setdefault("ipFamilies", [_family(ranges)])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    return []


def _ip_problem(asked: str, network, taken: set) -> str:
    try:
        ip = ipaddress.ip_address(asked)
    except ValueError:
        return f"the provided IP ({asked}) is not a valid IP address"
    if ip not in network or ip == network.network_address or (network.version == 4 and ip == network.broadcast_address):
        return f"the provided IP ({asked}) is not in the valid range. The range of valid IPs is {network}"
    if asked in taken:
        return "provided IP is already allocated"
    return ""


def _first_free_ip(network, taken: set) -> str | None:
    """The lowest free address above the static band (kube's ServiceIPStaticSubrange: the first
    min(max(16, size/16), 256) addresses are left to users), then below it."""
    size = min(network.num_addresses, 1 << 20)
    band = min(max(16, size // 16), 256)
    for offset in (*range(band + 1, size - 1), *range(1, band + 1)):
        address = str(network.network_address + offset)
        if address not in taken:
            return address
    return None


def _allocate_node_ports(spec: dict, ranges: ServiceRanges, taken: set) -> list[errors.FieldError]:
    low, high = ranges.node_ports
    problems, mine = [], {}
    for i, port in enumerate(_ports(spec)):
        asked = port.get("nodePort")
        if not asked:
            continue
        if not low <= asked <= high:
            problems.append(errors.FieldError("invalid", f"spec.ports[{i}].nodePort", f"provided port is not in the valid range. The range of valid ports is {low}-{high}", value=asked))
        elif asked in taken or mine.get(asked) == port.get("protocol"):
            problems.append(errors.FieldError("invalid", f"spec.ports[{i}].nodePort", "provided port is already allocated", value=asked))
        mine[asked] = port.get("protocol")
    band = min(max(16, (high - low + 1) // 16), 128)
    free = (p for p in (*range(low + band, high + 1), *range(low, low + band)) if p not in taken and p not in mine)
    for port in _ports(spec):
        if not port.get("nodePort"):
            port["nodePort"] = next(free, None)
            if port["nodePort"] is None:
                problems.append(errors.FieldError("invalid", "spec.ports", "failed to allocate a nodePort: range is full"))
                break
    return problems
