"""Query parameters decode as kube-apiserver's parameter codec does (apimachinery runtime/conversion.go)."""

from __future__ import annotations

import pytest

from mockapi import errors, wire
from mockapi.registry.options import DeleteOptions, ListOptions


@pytest.mark.parametrize(
    "raw, message",
    [
        ("1_0", 'strconv.ParseInt: parsing "1_0": invalid syntax'),
        ("12345678901234567890123", 'strconv.ParseInt: parsing "12345678901234567890123": value out of range'),
        (" 10", 'strconv.ParseInt: parsing " 10": invalid syntax'),
        ("１０", 'strconv.ParseInt: parsing "１０": invalid syntax'),
        ("", 'strconv.ParseInt: parsing "": invalid syntax'),
        ("ten", 'strconv.ParseInt: parsing "ten": invalid syntax'),
    ],
)
@pytest.mark.parametrize("name", ["limit", "timeoutSeconds"])
def test_integers_are_go_parseint_or_400(name, raw, message):
    with pytest.raises(errors.StatusError) as caught:
        ListOptions.parse({name: raw}, watch=name == "timeoutSeconds")
    assert caught.value.code == 400 and caught.value.reason == "BadRequest" and caught.value.message == message


def test_grace_period_is_parsed_the_same_way():
    with pytest.raises(errors.StatusError, match="invalid syntax"):
        DeleteOptions.parse({"gracePeriodSeconds": "3_0"}, None)
    assert DeleteOptions.parse({"gracePeriodSeconds": "+30"}, None).grace_period_seconds == 30


def test_valid_integers_still_parse():
    assert ListOptions.parse({"limit": "10"}).limit == 10
    assert ListOptions.parse({"limit": "-1"}).limit == 0
    assert ListOptions.parse({"timeoutSeconds": "9223372036854775807"}, watch=True).timeout_seconds == 2**63 - 1


@pytest.mark.parametrize(
    "raw, expected",
    [("true", True), ("True", True), ("1", True), ("maybe", True), ("", True), ("f", True), ("0", False), ("false", False), ("FALSE", False), ("False", False)],
)
def test_booleans_are_kubes_conversion_not_parsebool(raw, expected):
    assert wire.query_bool({"allowWatchBookmarks": raw}, "allowWatchBookmarks") is expected
    assert ListOptions.parse({"allowWatchBookmarks": raw}, watch=True).allow_bookmarks is expected


def test_an_absent_boolean_is_its_default():
    assert wire.query_bool({}, "force") is False
    assert wire.query_bool({}, "keep", default=True) is True


def test_the_control_api_keeps_strict_booleans():
    with pytest.raises(errors.StatusError, match="must be a boolean"):
        wire.strict_query_bool({"keepCRDs": "maybe"}, "keepCRDs")
    assert wire.strict_query_bool({"keepCRDs": "F"}, "keepCRDs", default=True) is False


@pytest.mark.parametrize("rv", ["1_0", "+1", " 1", "-1", "١", "18446744073709551616", "abc"])
def test_a_resource_version_is_parseuint_or_400(rv):
    with pytest.raises(errors.StatusError) as caught:
        ListOptions.parse({"resourceVersion": rv})
    assert caught.value.code == 400 and caught.value.message == f'resourceVersion: Invalid value: "{rv}": must be a non-negative integer'


def test_a_valid_resource_version_parses():
    assert ListOptions.parse({"resourceVersion": "18446744073709551615"}).resource_version == "18446744073709551615"
