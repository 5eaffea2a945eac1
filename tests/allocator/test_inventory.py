"""DevicePools parsed once: merged attributes, exact quantities, invalid pools and unallocatable devices."""

from mockapi.controllers.allocator.inventory import UNIT, parse_pool
from tests.allocator.conftest import device, pool, q, v

GI = 2**30 * UNIT


def test_device_attributes_win_over_the_pools():
    parsed = parse_pool(pool("p", [device("a", model="new"), device("b")], model="old", memory=q("40Gi")))
    a, b = parsed.devices
    assert (str(a.attributes["model"]), str(b.attributes["model"])) == ("new", "old")
    assert a.attributes["memory"].match_key == ("quantity", 40 * GI)


def test_device_requests_are_rounded_up_to_the_pool_block_size():
    resources = [{"name": "memory", "capacity": "40Gi", "blockSize": "1Gi"}, {"name": "slices", "capacity": 7}]
    parsed = parse_pool(pool("p", [device("a", requests={"memory": "9856Mi", "slices": 2})], resources=resources))
    assert parsed.devices[0].requests == {"memory": 10 * GI, "slices": 2 * UNIT}
    assert parsed.counters["memory"].capacity == 40 * GI and parsed.counters["slices"].block == UNIT


def test_duplicate_device_names_make_the_pool_invalid():
    parsed = parse_pool(pool("p", [device("a"), device("a")]))
    assert parsed.problem == 'spec.devices[1].name: duplicate device name "a"' and parsed.devices == []


def test_a_request_for_an_undeclared_pool_resource_makes_only_that_device_unallocatable():
    parsed = parse_pool(pool("p", [device("a", requests={"memory": "1Gi"}), device("b")]))
    assert parsed.problem is None
    assert parsed.devices[0].problem == 'spec.devices[0].requests.memory: requests pool resource "memory", which the pool does not declare'
    assert parsed.devices[1].problem is None


def test_unusable_values_name_their_field():
    parsed = parse_pool(pool("p", [device("a", firmware=v("1.2")), device("b", size=q("1K"))]))
    assert parsed.devices[0].problem.startswith("spec.devices[0].attributes[0].semVerValue: invalid semantic version '1.2'")
    assert parsed.devices[1].problem.startswith("spec.devices[1].attributes[0].quantityValue: invalid quantity '1K'")
    broken = parse_pool(pool("p", 1, resources=[{"name": "m", "capacity": "1Gi", "blockSize": "0"}]))
    assert broken.problem == "spec.resources[0].blockSize: must be positive"


def test_an_attribute_needs_exactly_one_value():
    raw = pool("p", [{"name": "a", "attributes": [{"name": "x", "stringValue": "s", "intValue": 1}]}])
    assert parse_pool(raw).devices[0].problem == 'spec.devices[0].attributes[0]: attribute "x" must have exactly one value, not 2'


def test_semver_match_keys_ignore_build_metadata():
    parsed = parse_pool(pool("p", [device("a", fw=v("1.0.0+a")), device("b", fw=v("1.0.0+b"))]))
    a, b = parsed.devices
    assert a.attributes["fw"].match_key == b.attributes["fw"].match_key


def test_a_duplicate_attribute_name_is_the_pools_or_the_devices_problem():
    raw = pool("p", [device("a"), {"name": "b", "attributes": [{"name": "x", "intValue": 1}, {"name": "x", "intValue": 2}]}])
    raw["spec"]["attributes"] = [{"name": "m", "stringValue": "1"}]
    parsed = parse_pool(raw)
    assert parsed.problem is None and parsed.devices[0].problem is None
    assert parsed.devices[1].problem == 'spec.devices[1].attributes[1].name: duplicate attribute name "x"'
    raw["spec"]["attributes"].append({"name": "m", "stringValue": "2"})
    assert parse_pool(raw).problem == 'spec.attributes[1].name: duplicate attribute name "m"'


def test_equal_amounts_parse_once_and_a_bad_one_is_named_every_time():
    resources = [{"name": "memory", "capacity": "40Gi", "blockSize": "1Gi"}]
    first, second = (parse_pool(pool(name, [device("a", requests={"memory": "9856Mi"})], resources=resources)) for name in ("p", "q"))
    assert first.counters["memory"] is not second.counters["memory"]  # each pool its own counters ...
    assert first.counters["memory"] == second.counters["memory"] and first.devices[0].requests == second.devices[0].requests == {"memory": 10 * GI}
    for name in ("p", "q"):  # ... and an amount that does not parse is no cached answer
        broken = parse_pool(pool(name, [device("a", requests={"memory": "1K"})], resources=resources))
        assert broken.devices[0].problem.startswith("spec.devices[0].requests.memory: invalid quantity '1K'")
