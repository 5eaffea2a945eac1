"""Per-kind strategies: the warnings a valid write of a custom resource gets; the cost limit of
device constraints."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mockapi.registry.kinds import for_type
from mockapi.registry.strategy import STANDARD_FINALIZERS, finalizer_warnings

SUFFIX = ": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"


def claim(*finalizers: str) -> dict:
    return {"metadata": {"name": "c", "finalizers": list(finalizers)}} if finalizers else {"metadata": {"name": "c"}}


def test_a_finalizer_without_a_path_is_warned_about_in_kubes_words():
    assert finalizer_warnings(claim("hold", "example.com/ok"), None) == [f'metadata.finalizers: "hold"{SUFFIX}']


def test_a_dotted_name_without_a_path_is_still_warned_about():
    assert finalizer_warnings(claim("finalizers.example.com"), None) == [f'metadata.finalizers: "finalizers.example.com"{SUFFIX}']


def test_standard_finalizers_are_not_warned_about():
    assert finalizer_warnings(claim(*sorted(STANDARD_FINALIZERS)), None) == []


def test_an_update_warns_only_about_the_finalizers_it_adds_sorted_by_name():
    warnings = finalizer_warnings(claim("zeta", "hold", "alpha"), claim("hold"))
    assert warnings == [f'metadata.finalizers: "alpha"{SUFFIX}', f'metadata.finalizers: "zeta"{SUFFIX}']


def test_names_are_quoted_like_go():
    assert finalizer_warnings(claim('say "hi"'), None) == [f'metadata.finalizers: "say \\"hi\\""{SUFFIX}']


@given(st.lists(st.text(min_size=1, max_size=12), max_size=6), st.lists(st.text(min_size=1, max_size=12), max_size=6))
def test_one_warning_per_added_name_without_a_slash(old, new):
    expected = {name for name in set(new) - set(old) if "/" not in name and name not in STANDARD_FINALIZERS}
    assert len(finalizer_warnings(claim(*new), claim(*old))) == len(expected)


OVER = "[" + ",".join(str(i) for i in range(99)) + "]"
OVER = f"{OVER}.all(i, {OVER}.all(j, !'{'a' * 4000}'.contains(device.s)))"


def device_strategy(kind: str):
    from mockapi.gvk import ResourceType

    rt = ResourceType(group="devmgmtproto.k8s.io", version="v1alpha1", kind=kind, plural=kind.lower() + "s", singular=kind.lower(), namespaced=kind != "DeviceClass")
    return for_type(rt)


def test_claims_and_classes_refuse_constraints_over_dras_cost_limit_naming_the_field():
    spec = {"claims": [{"deviceClass": "gpu", "constraints": "device.model == 'x'"}, {"oneOf": [{"deviceClass": "gpu"}, {"deviceClass": "gpu", "constraints": OVER}]}]}
    for kind in ("DeviceClaim", "DevicePrivilegedClaim"):
        [problem] = device_strategy(kind).validate({"metadata": {"name": "c"}, "spec": spec}, None)
        assert str(problem) == "spec.claims[1].oneOf[1].constraints: Forbidden: too complex, exceeds cost limit"
    [problem] = device_strategy("DeviceClass").validate({"metadata": {"name": "c"}, "spec": {"constraints": OVER}}, None)
    assert problem.field == "spec.constraints"


def test_constraints_that_do_not_compile_are_left_to_the_allocator_and_stored_ones_are_not_checked_again():
    strategy = device_strategy("DeviceClaim")
    assert strategy.validate({"metadata": {"name": "c"}, "spec": {"claims": [{"deviceClass": "gpu", "constraints": "device.("}]}}, None) == []
    stored = {"metadata": {"name": "c"}, "spec": {"claims": [{"deviceClass": "gpu", "constraints": OVER}]}}
    assert strategy.validate(stored, stored) == []  # a status or finalizer write of a claim stored before the limit
