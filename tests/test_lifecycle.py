"""CRD lifecycle: the deprecation warnings of a CRD's served versions."""

from __future__ import annotations

from mockapi.registry.crds import deprecation_warnings, version_priority


def crd(*versions: dict) -> dict:
    return {"spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "versions": list(versions)}}


def test_a_deprecated_version_gets_kubes_default_warning():
    assert deprecation_warnings(crd({"name": "v1", "served": True, "deprecated": True})) == {"v1": "example.com/v1 Widget is deprecated"}


def test_the_default_warning_names_the_most_preferred_newer_version_that_is_not_deprecated():
    versions = crd(
        {"name": "v1alpha1", "served": True, "deprecated": True},
        {"name": "v1beta1", "served": True},
        {"name": "v1", "served": True},
        {"name": "v2", "served": True, "deprecated": True},
        {"name": "v3", "served": False},
    )
    assert deprecation_warnings(versions) == {
        "v1alpha1": "example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget",
        "v2": "example.com/v2 Widget is deprecated",
    }


def test_a_deprecation_warning_of_the_crd_replaces_the_default():
    custom = crd({"name": "v1", "served": True, "deprecated": True, "deprecationWarning": "widgets are going away"})
    assert deprecation_warnings(custom) == {"v1": "widgets are going away"}


def test_versions_not_deprecated_or_not_served_get_none():
    assert deprecation_warnings(crd({"name": "v1", "served": True}, {"name": "v2", "served": False, "deprecated": True})) == {}


def test_version_priority_is_kube_aware():
    versions = ["foo", "v1alpha1", "v11alpha2", "v1", "v10beta3", "v2", "v12alpha1", "v1beta2", "bar", "v10", "v3beta1"]
    ordered = ["v10", "v2", "v1", "v10beta3", "v3beta1", "v1beta2", "v12alpha1", "v11alpha2", "v1alpha1", "bar", "foo"]
    assert sorted(versions, key=version_priority) == ordered
