"""Plugin ValidateSpec: a claim's spec → a Request, or InvalidSpec / ConstraintCompileError with the field."""

import pytest

from mockapi.controllers.allocator import kinds, request
from tests.allocator.conftest import claim, detail, one_of


def test_a_detail_defaults_to_one_device_exclusively():
    found = request.validate(claim("c", detail("gpu")))
    [[only]] = found.entries
    assert (only.count, only.limit, only.shared, only.path) == (1, 1, False, "spec.claims[0]")


def test_counts_limits_resources_and_match_attributes_are_read():
    found = request.validate(claim("c", detail("gpu", count=2, limit=4, match=["numa", "numa"], memory="10Gi"), match=["model"]))
    [[only]] = found.entries
    assert (only.count, only.limit, only.match, found.match) == (2, 4, ("numa",), ("model",))
    assert only.resources == (("memory", 10 * 2**30 * 10**9, "BinarySI"),) and only.shared


def test_a_resource_limit_alone_also_sets_the_request_as_for_a_pod():
    [[only]] = request.validate(claim("c", detail("gpu", limit={"memory": "2Gi"}))).entries
    assert only.resources[0][1] == 2 * 2**30 * 10**9 and only.resource_limits == (("memory", 2 * 2**30 * 10**9),)


def test_one_of_alternatives_keep_their_order_and_paths():
    found = request.validate(claim("c", one_of(detail("a"), detail("b", count=2))))
    assert [(d.device_class, d.alternative, d.path) for d in found.entries[0]] == [("a", 0, "spec.claims[0].oneOf[0]"), ("b", 1, "spec.claims[0].oneOf[1]")]


def test_a_privileged_claim_is_an_admin_request():
    assert request.validate(claim("c", kind="DevicePrivilegedClaim")).admin


@pytest.mark.parametrize(
    "entry, words",
    [
        (detail("gpu", count=0), 'spec.claims[0].requests.count: Invalid value: 0: must be a positive integer'),
        (detail("gpu", count="1500m"), "must be a positive integer"),
        (detail("gpu", count=3, limit=2), "spec.claims[0].limits.count: Invalid value: 2: must be greater than or equal to requests.count (3)"),
        (detail("gpu", count="1K"), "spec.claims[0].requests.count: invalid quantity '1K'"),
        (detail("gpu", memory="0"), "spec.claims[0].requests.memory: Invalid value: '0': must be positive"),
        (detail("gpu", memory="2Gi", limit={"memory": "1Gi"}), "limits.memory: Invalid value: '1Gi': must be greater than or equal to requests.memory (2Gi)"),
        ({"deviceClass": "a", "deviceType": "gpu"}, "exactly one of deviceClass and deviceType must be set"),
        ({}, "exactly one of deviceClass and deviceType must be set"),
        ({**one_of(detail("a")), "deviceClass": "b"}, "either oneOf or an inline claim detail, not both (found oneOf and deviceClass)"),
        (detail("gpu", match=[""]), "spec.claims[0].matchAttributes[0]: Invalid value: '': must be a non-empty attribute name"),
        (detail("gpu", configs=[{"apiVersion": "v1", "kind": "ConfigMap"}]), "spec.claims[0].configs[0].name: Required value"),
    ],
)
def test_invalid_specs_name_the_field_and_the_rule(entry, words):
    found = request.validate(claim("c", entry))
    assert found.reason == kinds.INVALID_SPEC and words in found.message


def test_a_claim_without_entries_is_invalid():
    empty = claim("c")
    empty["spec"]["claims"] = []
    assert request.validate(empty).message == "spec.claims: Required value: a claim needs at least one entry"


def test_claim_constraints_that_do_not_compile_are_a_compile_error_naming_the_field():
    found = request.validate(claim("c", detail("gpu", constraints="device.model ==")))
    assert found.reason == kinds.CONSTRAINT_COMPILE_ERROR
    assert found.message.startswith("spec.claims[0].constraints 'device.model ==' does not compile: ")
