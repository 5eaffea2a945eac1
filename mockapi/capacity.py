"""The capacity generator behind ``mockapi gen SHAPE --nodes N``: DevicePools (and Nodes) in the
prototype's shapes (k8srm-prototype ``pkg/gen``), with pool names unique per node.

Shapes:

- ``foozer-1000-{tiny,small,medium,large}`` and ``foozer-4000-…``: one pool per node, NUMA nodes x
  devices per NUMA node of 1x2, 1x4, 2x4, 4x4 (override with ``numa_nodes`` / ``devices_per_numa``),
  pool attributes vendor/model/firmwareVersion/driverVersion/memory and per-device ``numa`` and
  ``index``. foozer-4000 devices offer 80Gi of shareable ``memory`` (blockSize 1Gi).
- ``barzer-8000``: partitionable GPUs, one pool per GPU (one GPU per NUMA node, 2 by default): pool
  resources ``memory`` (40Gi, blockSize 1Gi) and ``slices`` (7), and the partitions that request them.
- ``mixed``: two barzer GPUs and two SR-IOV NICs per node (PFs and VFs sharing VF counters).

:func:`vlan_pool` is a network-attached pool (no nodeName) for any of them.
"""

from __future__ import annotations

from dataclasses import dataclass

API_VERSION = "devmgmtproto.k8s.io/v1alpha1"
SIZES = {"tiny": (1, 2), "small": (1, 4), "medium": (2, 4), "large": (4, 4)}  # NUMA nodes, devices per NUMA node
FOOZERS = {
    # model: pool-wide attributes beyond vendor and model, and what each device offers for sharing
    "foozer-1000": {"firmwareVersion": "1.8.2", "memory": "40Gi", "shared": None},
    "foozer-4000": {"firmwareVersion": "2.0.1", "memory": "80Gi", "shared": {"name": "memory", "capacity": "80Gi", "blockSize": "1Gi"}},
}
# Partitions of a barzer-8000 GPU: profile, count, memory, slices (7 slices and 40Gi per GPU).
PARTITIONS = (("7g.40gb", 1, "40Gi", 7), ("3g.20gb", 2, "19968Mi", 3), ("2g.10gb", 3, "9856Mi", 2), ("1g.5gb", 7, "4864Mi", 1))


@dataclass(frozen=True)
class Layout:
    numa_nodes: int
    devices_per_numa: int


def shapes() -> list[str]:
    return [f"{model}-{size}" for model in FOOZERS for size in SIZES] + ["barzer-8000", "mixed"]


def string(name: str, value: str) -> dict:
    return {"name": name, "stringValue": value}


def pool(name: str, driver: str, *, node: str | None, attributes: list, devices: list, resources: list | None = None) -> dict:
    spec: dict = {"driver": driver}
    if node:
        spec["nodeName"] = node
    spec["attributes"] = attributes
    if resources:
        spec["resources"] = resources
    spec["devices"] = devices
    return {"apiVersion": API_VERSION, "kind": "DevicePool", "metadata": {"name": name}, "spec": spec}


def node(name: str, shape: str) -> dict:
    labels = {"kubernetes.io/hostname": name, "example.com/node-shape": shape}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def node_names(shape: str, count: int, *, start: int = 0) -> list[str]:
    width = max(2, len(str(start + count - 1)))
    return [f"{shape}-{index:0{width}d}" for index in range(start, start + count)]


def foozer_pool(node_name: str, model: str, layout: Layout) -> dict:
    info = FOOZERS[model]
    attributes = [
        string("vendor", "example.com"),
        string("model", model),
        {"name": "firmwareVersion", "semVerValue": info["firmwareVersion"]},
        {"name": "driverVersion", "semVerValue": "4.2.1-gen3"},
        {"name": "memory", "quantityValue": info["memory"]},
    ]
    devices = []
    for numa in range(layout.numa_nodes):
        for index in range(numa * layout.devices_per_numa, (numa + 1) * layout.devices_per_numa):
            device = {"name": f"dev-{index:02d}", "attributes": [string("numa", str(numa)), {"name": "index", "intValue": index}]}
            if info["shared"]:
                device["resources"] = [dict(info["shared"])]
            devices.append(device)
    return pool(f"{node_name}-foozer", "example.com-foozer", node=node_name, attributes=attributes, devices=devices)


def barzer_pool(node_name: str, gpu: int) -> dict:
    attributes = [
        string("vendor", "example.com"),
        string("model", "barzer-8000"),
        {"name": "firmwareVersion", "semVerValue": "3.0.0"},
        {"name": "driverVersion", "semVerValue": "1.1.1"},
        string("numa", str(gpu)),
    ]
    resources = [{"name": "memory", "capacity": "40Gi", "blockSize": "1Gi"}, {"name": "slices", "capacity": 7}]
    devices = []
    for profile, count, memory, slices in PARTITIONS:
        for index in range(count):
            name = f"gpu-{gpu}" if slices == 7 else f"gpu-{gpu}-{profile.split('.')[0]}-{index}"
            devices.append(
                {
                    "name": name,
                    "attributes": [string("profile", profile), {"name": "memory", "quantityValue": memory}],
                    "requests": {"memory": memory, "slices": slices},
                }
            )
    return pool(f"{node_name}-barzer-gpu-{gpu}", "example.com-barzer", node=node_name, attributes=attributes, devices=devices, resources=resources)


def nic_pool(node_name: str, card: int, bandwidth: str) -> dict:
    attributes = [
        string("vendor", "example.com"),
        string("model", f"com-sriov-{bandwidth.lower()}"),
        {"name": "bandwidth", "quantityValue": bandwidth},
        string("numa", str(card)),
        string("hwdevname", f"ecsriov{card}"),
    ]
    resources = [{"name": f"vfs-pf-{pf}", "capacity": 2} for pf in (0, 1)]
    devices = [{"name": f"pf-{pf}", "attributes": [string("sriovType", "pf")], "requests": {f"vfs-pf-{pf}": 2}} for pf in (0, 1)]
    for pf in (0, 1):
        for vf in (0, 1):
            devices.append(
                {
                    "name": f"pf-{pf}-vf-{vf}",
                    "attributes": [string("sriovType", "vf"), string("pf", str(pf))],
                    "requests": {f"vfs-pf-{pf}": 1},
                }
            )
    return pool(f"{node_name}-nic-{card}", "sriov-nic", node=node_name, attributes=attributes, devices=devices, resources=resources)


def vlan_pool(name: str = "vlan-interfaces", *, interfaces: int = 4) -> dict:
    attributes = [string("vendor", "example.com"), {"name": "bandwidth", "quantityValue": "10G"}]
    devices = [{"name": f"vlan-if-{index:02d}"} for index in range(interfaces)]
    return pool(name, "vlan", node=None, attributes=attributes, devices=devices)


def node_pools(shape: str, node_name: str, *, layout: Layout | None = None) -> list[dict]:
    """The pools of one node of ``shape``."""
    if shape == "mixed":
        gpus = [barzer_pool(node_name, gpu) for gpu in (0, 1)]
        return gpus + [nic_pool(node_name, card, bandwidth) for card, bandwidth in ((0, "1G"), (1, "10G"))]
    if shape == "barzer-8000":
        return [barzer_pool(node_name, gpu) for gpu in range(layout.numa_nodes if layout else 2)]
    model, _, size = shape.rpartition("-")
    if model not in FOOZERS or size not in SIZES:
        raise ValueError(f"unknown shape {shape!r}; known shapes: {', '.join(shapes())}")
    return [foozer_pool(node_name, model, layout or Layout(*SIZES[size]))]


def generate(shape: str, *, nodes: int, layout: Layout | None = None, with_nodes: bool = False, start: int = 0) -> list[dict]:
    """``nodes`` nodes of ``shape``: their pools (and Node objects first, when asked)."""
    if nodes < 0:
        raise ValueError("the number of nodes must not be negative")
    names = node_names(shape, nodes, start=start)
    pools = [p for name in names for p in node_pools(shape, name, layout=layout)]
    return ([node(name, shape) for name in names] if with_nodes else []) + pools
