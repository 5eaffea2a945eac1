"""mockapi.cel: device constraints on cel-expr-python, with the Kubernetes quantity and semver helpers."""

import time

import pytest

from mockapi import cel
from mockapi import quantity as quantities


def device(**attributes):
    values = {}
    for name, value in attributes.items():
        if isinstance(value, quantities.Quantity):
            values[name] = cel.quantity_value(value)
        elif isinstance(value, str) and value.startswith("v:"):
            values[name] = cel.semver_value(cel.parse_semver(value[2:]))
        else:
            values[name] = value
    return cel.activation(values)


FOOZER = dict(model="foozer-4000", memory=quantities.parse("80Gi"), firmware="v:2.0.1", driver="v:4.2.1-gen3", index=3)


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("device.model == 'foozer-4000'", True),
        ("device.index > 2 && device.index < 4", True),
        ("device.memory.compareTo(quantity('64Gi')) >= 0", True),
        ("device.memory == quantity('81920Mi')", True),
        ("device.memory.isGreaterThan(quantity('80Gi'))", False),
        ("device.memory.isLessThan(quantity('81Gi'))", True),
        ("device.firmware.compareTo(semver('2.0.0')) >= 0", True),
        ("device.driver.isGreaterThan(semver('4.0.0'))", True),
        ("device.firmware.major() == 2 && device.firmware.minor() == 0 && device.firmware.patch() == 1", True),
        ("device.memory.asInteger() == 85899345920", True),
        ("quantity('1500m').isInteger()", False),
        ("quantity('2').add(quantity('1')) == quantity('3')", True),
        ("quantity('-2').sign() == -1", True),
        ("isQuantity('1Gi') && !isQuantity('1K') && isSemver('1.2.3') && !isSemver('1.2')", True),
        ("has(device.missing)", False),
    ],
)
def test_expressions_evaluate_against_a_device(expression, expected):
    assert cel.compile(expression).evaluate(device(**FOOZER)) is expected


@pytest.mark.parametrize(
    "expression, words",
    [
        ("device.missing == 'x'", 'no such attribute : "missing"'),
        ("device.model", "the result is a string, not a bool"),
        ("device.memory.compareTo(device.firmware) == 0", "cannot compare a quantity with a semver"),
        ("quantity('1K').sign() == 1", "unknown suffix 'K'"),
        ("semver('1.2').major() == 1", "invalid semantic version '1.2'"),
        ("device.model.compareTo(quantity('1')) == 0", "No matching overloads"),
    ],
)
def test_runtime_errors_are_evaluation_errors_with_the_reason(expression, words):
    with pytest.raises(cel.EvaluationError, match=words.replace("(", r"\(")):
        cel.compile(expression).evaluate(device(**FOOZER))


@pytest.mark.parametrize(
    "expression, words",
    [
        ("device.model ==", "Syntax error"),
        ("1 + 'a' == 2", "no matching overload"),
        ("[1, 2].map(x, x)", "must evaluate to a bool, not a list"),
        ("x" * (10 * 1024 + 1), "more than the limit of 10240"),
        ("(" * 40 + "true" + ")" * 40, "recursion"),
    ],
)
def test_compile_errors_say_why(expression, words):
    with pytest.raises(cel.CompileError, match=words):
        cel.compile(expression)


def test_compiling_is_cached_including_failures():
    assert cel.compile("device.index == 1") is cel.compile("device.index == 1")
    with pytest.raises(cel.CompileError) as first:
        cel.compile("device.index ==")
    with pytest.raises(cel.CompileError) as second:
        cel.compile("device.index ==")
    assert first.value is second.value


def test_hostile_expressions_are_refused_by_their_estimated_cost_or_bounded_at_run_time():
    ones = "[" + ",".join(["1"] * 200) + "]"
    with pytest.raises(cel.CostLimitExceeded, match="estimated cost .* exceeds the limit of 1,000,000"):
        cel.compile(f"{ones}.all(x, {ones}.all(y, {ones}.all(z, true)))")
    within_estimate = cel.compile(f"{ones}.all(x, {ones}.all(y, true))")  # 40,000 iterations
    assert within_estimate.cost <= 1_000_000 and not within_estimate.inline
    started = time.monotonic()
    with pytest.raises(cel.EvaluationError, match="budget"):
        within_estimate.evaluate(device(**FOOZER))
    assert time.monotonic() - started < 10  # a hang guard: the runtime's iteration cap ("budget") is the bound
    with pytest.raises(cel.CompileError):
        cel.compile(" + ".join(["1"] * 15000) + " == 1")
