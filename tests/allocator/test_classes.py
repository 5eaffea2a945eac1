"""Plugin ResolveClasses: deviceClass names one class, deviceType every class of the type in name order."""

from mockapi.controllers.allocator import classes, kinds, request
from tests.allocator.conftest import claim, detail, device_class, one_of


def resolve(spec_claim, *class_manifests):
    known = {m["metadata"]["name"]: classes.parse_class(m) for m in class_manifests}
    return classes.resolve(request.validate(spec_claim), known)


def test_a_device_type_expands_to_its_classes_in_name_order():
    [options] = resolve(claim("c", detail(device_type="gpu")), device_class("zeta"), device_class("alpha"), device_class("nic", device_type="nic"))
    assert [(o.device_class.name, o.class_rank) for o in options] == [("alpha", 0), ("zeta", 1)]


def test_one_of_alternatives_come_before_the_classes_they_expand_to():
    [options] = resolve(claim("c", one_of(detail("b"), detail(device_type="gpu"))), device_class("a"), device_class("b"))
    assert [(o.detail.alternative, o.device_class.name) for o in options] == [(0, "b"), (1, "a"), (1, "b")]
    assert [o.id for o in options] == [0, 1, 2]


def test_admin_access_comes_from_the_class_or_a_privileged_claim():
    [[plain]] = resolve(claim("c", detail("a")), device_class("a"))
    [[admin]] = resolve(claim("c", detail("a")), device_class("a", admin=True))
    [[privileged]] = resolve(claim("c", detail("a"), kind="DevicePrivilegedClaim"), device_class("a"))
    assert (plain.admin, admin.admin, privileged.admin) == (False, True, True)


def test_a_missing_class_or_type_is_class_not_found():
    missing = resolve(claim("c", detail("nope")), device_class("a"))
    assert (missing.reason, missing.message) == (kinds.CLASS_NOT_FOUND, 'spec.claims[0].deviceClass: DeviceClass "nope" not found')
    untyped = resolve(claim("c", detail(device_type="fpga")), device_class("a"))
    assert untyped.message == 'spec.claims[0].deviceType: no DeviceClass has deviceType "fpga"'


def test_class_constraints_that_do_not_compile_name_the_class():
    found = resolve(claim("c", detail("a")), device_class("a", constraints="device.x =="))
    assert found.reason == kinds.CONSTRAINT_COMPILE_ERROR and found.message.startswith('DeviceClass "a" constraints \'device.x ==\' do not compile')
