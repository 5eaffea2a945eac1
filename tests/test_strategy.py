"""Per-kind strategies: the warnings a valid write of a custom resource gets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

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
