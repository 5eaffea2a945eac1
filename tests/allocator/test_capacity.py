"""The capacity generator (mockapi gen): the prototype's shapes, pool names unique per node."""

import subprocess
import sys

import pytest
import yaml

from mockapi import capacity


@pytest.mark.parametrize("shape, devices", [("foozer-1000-tiny", 2), ("foozer-1000-small", 4), ("foozer-4000-medium", 8), ("foozer-4000-large", 16)])
def test_foozer_shapes_have_their_devices_numa_nodes_and_attributes(shape, devices):
    [found] = capacity.generate(shape, nodes=1)
    spec = found["spec"]
    assert len(spec["devices"]) == devices and spec["nodeName"] == f"{shape}-00"
    assert {a["name"] for a in spec["attributes"]} == {"vendor", "model", "firmwareVersion", "driverVersion", "memory"}
    assert {a["name"] for a in spec["devices"][0]["attributes"]} == {"numa", "index"}


def test_pool_names_are_unique_across_nodes_and_nodes_sort_by_number():
    pools = capacity.generate("mixed", nodes=120)
    names = [p["metadata"]["name"] for p in pools]
    assert len(names) == len(set(names)) == 480
    assert capacity.node_names("foozer-1000-tiny", 120)[:2] == ["foozer-1000-tiny-000", "foozer-1000-tiny-001"]


def test_the_partitionable_gpu_shape_has_pool_resources_with_block_sizes():
    pools = capacity.generate("barzer-8000", nodes=1)
    assert len(pools) == 2
    assert pools[0]["spec"]["resources"] == [{"name": "memory", "capacity": "40Gi", "blockSize": "1Gi"}, {"name": "slices", "capacity": 7}]
    assert all("requests" in d for d in pools[0]["spec"]["devices"])


def test_a_layout_overrides_the_shape_and_nodes_can_come_first():
    docs = capacity.generate("foozer-1000-medium", nodes=2, layout=capacity.Layout(2, 5), with_nodes=True)
    assert [d["kind"] for d in docs] == ["Node", "Node", "DevicePool", "DevicePool"] and len(docs[2]["spec"]["devices"]) == 10


def test_an_unknown_shape_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown shape 'nope'; known shapes: foozer-1000-tiny"):
        capacity.generate("nope", nodes=1)


def test_mockapi_gen_prints_pools_as_yaml():
    out = subprocess.run([sys.executable, "-m", "mockapi", "gen", "foozer-4000-tiny", "--nodes", "3"], capture_output=True, text=True, check=True).stdout
    docs = list(yaml.safe_load_all(out))
    assert [d["metadata"]["name"] for d in docs] == [f"foozer-4000-tiny-0{i}-foozer" for i in range(3)]
