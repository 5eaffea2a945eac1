"""mockapi.quantity: Kubernetes' quantity grammar, exact values, canonical form."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockapi import quantity


@pytest.mark.parametrize(
    "text, units",
    [
        ("1Gi", 2**30), ("1024Mi", 2**30), ("1.5", Fraction(3, 2)), ("500m", Fraction(1, 2)), ("1e3", 1000), ("1.5e3", 1500),
        ("1E3", 1000), ("1E", 10**18), ("+3k", 3000), (".5", Fraction(1, 2)), ("1.", 1), ("-2Ki", -2048), ("7", 7), (7, 7),
        ("1n", Fraction(1, 10**9)), ("2u", Fraction(2, 10**6)), ("0", 0),
    ],
)
def test_valid_quantities_parse_to_exact_values(text, units):
    assert quantity.parse(text).value == units


@pytest.mark.parametrize(
    "text, words",
    [
        ("1K", "unknown suffix 'K'"), ("1ki", "unknown suffix 'ki'"), ("NaN", "must match the regular expression"),
        (" 1", "must match"), ("1 ", "unknown suffix ' '"), ("1e3Gi", "unknown suffix 'e3Gi'"), ("1e3.5", "unknown suffix"),
        ("", "must match"), ("Gi", "must match"), ("--1", "must match"), ("1.2.3", "unknown suffix"), (True, "must be a string or an integer"),
        (1.5, "must be a string or an integer"),
    ],
)
def test_strings_kubernetes_rejects_are_errors_that_say_why(text, words):
    with pytest.raises(quantity.QuantityError, match=words.replace("(", r"\(").replace(".", r"\.")):
        quantity.parse(text)


def test_values_round_up_to_a_nano_and_cap_at_two_to_the_63():
    assert quantity.parse("0.1n").nanos == 1
    assert quantity.parse("-0.1n").nanos == -1
    assert quantity.parse("1e100").value == 2**63 - 1
    assert quantity.parse("1e-100").nanos == 1
    assert quantity.parse("0e100").nanos == 0


@pytest.mark.parametrize(
    "text, canonical",
    [("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("1.5", "1500m"), ("1500", "1500"), ("1000", "1k"), ("1e3", "1e3"),
     ("1.5e3", "1500"), ("512Ki", "512Ki"), ("100", "100"), ("0.5Ki", "512"), ("-2Ki", "-2Ki"), ("19968Mi", "19968Mi"), ("0", "0")],
)
def test_the_canonical_form_is_apimachinerys(text, canonical):
    assert str(quantity.parse(text)) == canonical


def test_quantities_compare_by_value_whatever_their_format():
    assert quantity.parse("1Gi") == quantity.parse("1073741824") == quantity.parse("1024Mi")
    assert quantity.parse("1G") < quantity.parse("1Gi")
    assert hash(quantity.parse("1Gi")) == hash(quantity.parse("1024Mi"))


def test_round_up_rounds_to_the_block():
    assert quantity.round_up(1, 1024) == 1024
    assert quantity.round_up(2048, 1024) == 2048
    assert quantity.round_up(0, 7) == 0


@given(st.integers(min_value=-(2**62), max_value=2**62), st.sampled_from(["", "k", "M", "m", "Ki", "Mi", "Gi"]))
def test_the_canonical_form_parses_back_to_the_same_value(mantissa, suffix):
    parsed = quantity.parse(f"{mantissa}{suffix}")
    assert quantity.parse(str(parsed)) == parsed


def test_a_text_parsed_again_is_the_same_quantity_and_a_bad_one_fails_every_time():
    first = quantity.parse("19968Mi")
    assert quantity.parse("19968Mi") is first and first == quantity.parse("19968Mi ".strip())
    for _ in range(2):
        with pytest.raises(quantity.QuantityError):
            quantity.parse("12 Gi")
    assert quantity.parse(5) == quantity.parse("5")
