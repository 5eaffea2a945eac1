"""mockapi.cel.cost: cel-go's worst-case cost estimate over the checked expression, with DRA's sizes."""

import pytest

from mockapi import cel
from mockapi.cel import cost

RANGE = "[" + ",".join(str(i) for i in range(99)) + "]"


def estimate(expression: str) -> int:
    return cost.estimate(cel.compile(expression)._compiled.serialize())


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("true", 0),  # constants cost nothing
        ("device.model == 'x'", 3),  # ident 1 + select 1 + equality of scalars/short strings 1
        ("device.index > 2 && device.index < 4", 6),  # && is its two sides, nothing more
        ("device.a.contains(device.b)", 53),  # ceil(64 x 0.1) x ceil(64 x 0.1) + 2 + 2
        ("device.a.startsWith('ab')", 3),  # 0.1 x the argument's length, rounded up, + 2
        ("device.a.matches('^a+$')", 9),  # ceil(65 x 0.1) x ceil(4 x 0.25) + 2
        ("'x' in ['a', 'b', 'c']", 13),  # the list literal (10) + its size
        ("[1, 2, 3].all(x, x > 0)", 26),  # list 10 + 3 x (loop condition 2 + step 3) + result 1
        ("device.all(k, device[k] == 'x')", 450),  # device is a map of at most 64 attributes (pool + device)
    ],
)
def test_estimates_follow_cel_go_with_dras_sizes(expression, expected):
    assert estimate(expression) == expected


def test_a_comprehension_multiplies_its_body_by_the_range_size():
    one = estimate(f"{RANGE}.all(i, device.n > i)")
    nested = estimate(f"{RANGE}.all(i, {RANGE}.all(j, device.n > i))")
    assert 95 * one < nested < 105 * one


def test_attribute_values_are_assumed_at_most_64_characters_literals_at_their_length():
    assert estimate("device.a.contains(device.b)") < estimate(f"'{'a' * 640}'.contains(device.b)") == 64 * 7 + 2


def test_the_issues_hostile_expressions():
    # Cheap once attribute values are capped at 64 characters (the pool is what must be refused):
    assert estimate("[1,2,3,4,5,6,7,8,9,10].all(i, !device.big.contains(device.needle))") == 581
    # Two nested 99-element loops over a 4 KB literal: ~27.5 x the budget.
    with pytest.raises(cel.CostLimitExceeded) as refused:
        cel.compile(f"{RANGE}.all(i, {RANGE}.all(j, !'{'a' * 4000}'.contains(device.s)))")
    assert refused.value.estimate == 27_503_003
    assert str(refused.value) == "too complex: its estimated cost 27,503,003 exceeds the limit of 1,000,000"


def test_programs_say_whether_they_may_run_on_the_event_loop():
    assert cel.compile("device.model == 'x'").inline
    slow = cel.compile(f"{RANGE}.all(i, {RANGE}.all(j, device.n + 1 > 0))")
    assert slow.cost > cost.INLINE_COST and not slow.inline


def test_conversions_to_string_have_bounded_sizes_and_unknown_sizes_are_unbounded():
    assert estimate("string(device.n).contains('1')") < 100
    shape = cost.union([cost.SCALAR, cost.UNBOUNDED])
    assert shape is cost.UNBOUNDED


def test_a_checked_expression_is_read_inside_its_any_wrapper():
    checked = cost.decode(cel.compile("device.model == 'x'")._compiled.serialize())
    names = sorted(o.decode() for ref in checked.references.values() for o in ref.get(3, []))
    assert names == ["equals"]


def test_type_values_are_scalars():
    assert estimate("type(device.a) == string") == 5
