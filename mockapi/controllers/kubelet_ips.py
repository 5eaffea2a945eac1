"""The simulated kubelet's addresses: each Node's number, InternalIP and pod range, and its pods' IPs.

Node *i* (numbered in the order the kubelet first needs one, lowest free number first) gets
address *i+1* of the node range (``10.0.0.1``, ``10.0.0.2``, ...) and, unless its ``spec.podCIDR``
says otherwise, /24 number *i* of the cluster range (``10.244.0.0/24``, ``10.244.1.0/24``, ...).
A Node that already has an InternalIP in the node range keeps the number it implies, so a restarted
kubelet hands out the same ranges; pods' IPs already given are remembered from the pods.
"""

from __future__ import annotations

import ipaddress

NODE_MASK = 24  # each node's pod range, without spec.podCIDR
PodKey = tuple[str, str]


class Addresses:
    def __init__(self, *, node_cidr: str, cluster_cidr: str) -> None:
        self.node_network = ipaddress.ip_network(node_cidr)
        self.cluster_network = ipaddress.ip_network(cluster_cidr)
        self._numbers: dict[str, int] = {}  # node → its number
        self._pod_cidrs: dict[str, str] = {}  # node → its spec.podCIDR
        self._pod_ips: dict[str, dict[str, PodKey]] = {}  # node → pod IP → pod

    # ------------------------------------------------------------------ nodes
    def observe_node(self, name: str, *, internal_ip: str, pod_cidr: str) -> None:
        """What a Node says of itself: its spec.podCIDR, and the number its InternalIP implies."""
        if pod_cidr:
            self._pod_cidrs[name] = pod_cidr
        else:
            self._pod_cidrs.pop(name, None)
        if name in self._numbers or not internal_ip:
            return
        try:
            ip = ipaddress.ip_address(internal_ip)
        except ValueError:
            return
        number = int(ip) - int(self.node_network.network_address) - 1
        if ip in self.node_network and number >= 0 and number not in self._numbers.values():
            self._numbers[name] = number

    def forget_node(self, name: str) -> None:
        for memo in (self._numbers, self._pod_cidrs, self._pod_ips):
            memo.pop(name, None)

    def node_ip(self, name: str) -> str:
        return str(self.node_network[self._number(name) + 1])

    def _number(self, name: str) -> int:
        if name not in self._numbers:
            taken = set(self._numbers.values())
            self._numbers[name] = next(i for i in range(len(taken) + 1) if i not in taken)
        return self._numbers[name]

    def pod_network(self, name: str):
        if name in self._pod_cidrs:
            return ipaddress.ip_network(self._pod_cidrs[name], strict=False)
        base, number = self.cluster_network, self._number(name)
        size = 2 ** (base.max_prefixlen - NODE_MASK)
        if (number + 1) * size > base.num_addresses:
            raise RuntimeError(f"no pod range left for node {name} in {base}")
        return ipaddress.ip_network((base.network_address + number * size, NODE_MASK))

    # ------------------------------------------------------------------- pods
    def observe_pod(self, node: str, pod: PodKey, ip: str) -> None:
        self._pod_ips.setdefault(node, {})[ip] = pod

    def forget_pod(self, node: str, pod: PodKey) -> None:
        ips = self._pod_ips.get(node, {})
        for ip in [ip for ip, owner in ips.items() if owner == pod]:
            del ips[ip]

    def pod_ip(self, node: str, pod: PodKey) -> str:
        """The pod's IP: the one it has, or the lowest free address of the node's range after the
        first (the node's bridge)."""
        ips = self._pod_ips.setdefault(node, {})
        network = self.pod_network(node)
        first, size = int(network.network_address), network.num_addresses
        for offset in range(2, size - 1 if size > 2 else size):
            ip = str(ipaddress.ip_address(first + offset))
            if ips.get(ip, pod) == pod:
                ips[ip] = pod
                return ip
        raise RuntimeError(f"no pod IP left on node {node}")
