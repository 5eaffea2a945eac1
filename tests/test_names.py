"""mockapi/names.py: the one place names, label keys and label values are checked, in apimachinery's words."""

import pytest

from mockapi import errors, names, selectors
from mockapi.schema import meta

NAME_PART_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def test_more_than_one_slash_names_what_was_checked():
    assert names.qualified_name_errors("a/b/c") == [
        f"a qualified name {NAME_PART_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    ]
    assert names.label_key_errors("a/b/c") == [
        f"a valid label key {NAME_PART_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    ]


def test_lengths_are_bytes_and_a_lone_surrogate_does_not_raise():
    assert names.byte_len("é") == 2
    assert names.byte_len("\ud800") == 3
    assert names.qualified_name_errors("\ud800") == ["name part " + NAME_PART_MSG]
    assert names.label_value_errors("é" * 32) == [
        "must be no more than 63 characters",
        names.label_value_errors("é")[0],
    ]


def test_schema_meta_and_selectors_share_the_checks():
    assert meta.label_value_errors is names.label_value_errors
    assert meta.dns1123_subdomain_errors is names.dns1123_subdomain_errors
    assert selectors.names is names


def test_a_selector_key_with_a_lone_surrogate_gets_kubes_message_not_a_codec_error():
    with pytest.raises(errors.StatusError) as caught:
        selectors.LabelSelector.parse("\ud800=x")
    assert "name part must consist of alphanumeric characters" in str(caught.value)


def test_remembered_valid_values_still_leave_invalid_ones_reported_every_time():
    """Valid values are remembered; an invalid one is checked (and reported, with its own noun)
    each time; a full memo starts over without changing an answer."""
    assert names.qualified_name_errors("example.com/ok") == []
    assert names.qualified_name_errors("example.com/ok") == []
    for _ in range(2):
        assert names.label_key_errors("a/b/c")[0].startswith("a valid label key")
        assert names.qualified_name_errors("a/b/c")[0].startswith("a qualified name")
        assert names.label_value_errors("-bad-") != []
    for i in range(names._MEMO_SIZE + 10):
        assert names.dns1123_label_errors(f"n-{i}") == []
    assert names.dns1123_label_errors("Upper") != [] and names.dns1123_label_errors("n-1") == []
