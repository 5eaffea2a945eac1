"""Label and field selectors: grammar, messages and matching, as k8s.io/apimachinery has them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi import errors
from mockapi.selectors import FieldSelector, LabelSelector, Requirement

# -- label selector grammar --------------------------------------------------------------------

PARSES = [
    ("", ""),
    ("   ", ""),
    ("a", "a"),
    ("!a", "!a"),
    ("a=b", "a=b"),
    ("a==b", "a==b"),
    ("a!=b", "a!=b"),
    ("a = b", "a=b"),
    ("a=", "a="),
    ("a in (x,y)", "a in (x,y)"),
    ("a in ( y , x )", "a in (x,y)"),
    ("a notin (x)", "a notin (x)"),
    ("a in ()", "a in ()"),
    ("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"),
    ("a in (b,)", "a in (,b)"),
    ("a>1", "a>1"),
    ("a < 5", "a<5"),
    ("b=1,a=2", "a=2,b=1"),  # requirements are sorted by key
    ("example.com/app=web", "example.com/app=web"),
    ("in=notin", "in=notin"),  # the keywords are identifiers where a key or value is expected
    ("a in (in,notin)", "a in (in,notin)"),
    ("\ta\n=\rb", "a=b"),
]


@pytest.mark.parametrize(("text", "canonical"), PARSES)
def test_label_selector_parses_and_prints_canonically(text, canonical):
    selector = LabelSelector.parse(text)
    assert str(selector) == canonical
    assert LabelSelector.parse(canonical) == selector


_KEY_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

REJECTS = [
    ("app:monolith", f'unable to parse requirement: <nil>: Invalid value: "app:monolith": name part {_KEY_REGEX}'),
    ("*bar", f'unable to parse requirement: <nil>: Invalid value: "*bar": name part {_KEY_REGEX}'),
    (
        "a/b/c",
        f'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name {_KEY_REGEX} '
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    ("/a", 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'),
    (
        "app.kubernetes_io/name=x",
        f'unable to parse requirement: <nil>: Invalid value: "app.kubernetes_io/name": prefix part {_SUBDOMAIN}',
    ),
    (
        "k" * 64,
        f'unable to parse requirement: <nil>: Invalid value: "{"k" * 64}": name part must be no more than 63 characters',
    ),
    ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("!a=b", "found '=', expected: ',' or 'end of string'"),
    ("a=b=c", "found '=', expected: ',' or 'end of string'"),
    ("a,", "found '', expected: identifier after ','"),
    ("a,,b", "found ',', expected: identifier after ','"),
    (",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("=a", "found '=', expected: !, identifier, or 'end of string'"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("a=(", "unable to parse requirement: found '(', expected: identifier"),
    ("a in b", "unable to parse requirement: found 'b' expected: '('"),
    ("a in", "unable to parse requirement: found '' expected: '('"),
    ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
    ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
    ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
    ("a<-5", f'unable to parse requirement: values[0][a]: Invalid value: "-5": {_VALUE_REGEX}'),
    ("a>x", 'unable to parse requirement: values[0]: Invalid value: "x": for \'Gt\', \'Lt\' operators, the value must be an integer'),
    ("a=b_", f'unable to parse requirement: values[0][a]: Invalid value: "b_": {_VALUE_REGEX}'),
    (
        "a in (-x,ok,y-)",
        f'unable to parse requirement: [values[0][a]: Invalid value: "-x": {_VALUE_REGEX}, '
        f'values[2][a]: Invalid value: "y-": {_VALUE_REGEX}]',
    ),
    ("a=" + "v" * 64, f'unable to parse requirement: values[0][a]: Invalid value: "{"v" * 64}": must be no more than 63 characters'),
]


@pytest.mark.parametrize(("text", "message"), REJECTS)
def test_label_selector_rejects_bad_syntax_with_apimachinery_wording(text, message):
    with pytest.raises(errors.StatusError) as caught:
        LabelSelector.parse(text)
    assert (caught.value.code, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == message


# -- label selector matching --------------------------------------------------------------------

MATCHES = [
    ("", None, True),
    ("", {"a": "1"}, True),
    ("a", {"a": ""}, True),
    ("a", {}, False),
    ("!a", {}, True),
    ("!a", {"a": "x"}, False),
    ("a=b", {"a": "b"}, True),
    ("a=b", {"a": "c"}, False),
    ("a=b", {}, False),
    ("a=", {"a": ""}, True),
    ("a=", {}, False),
    ("a!=b", {}, True),  # != matches objects without the key
    ("a!=b", {"a": "b"}, False),
    ("a!=b", {"a": "c"}, True),
    ("a in (x,y)", {"a": "y"}, True),
    ("a in (x,y)", {"a": "z"}, False),
    ("a in (x,y)", {}, False),
    ("a notin (x,y)", {}, True),  # notin matches objects without the key
    ("a notin (x,y)", {"a": "x"}, False),
    ("a notin (x,y)", {"a": "z"}, True),
    ("a>1", {"a": "2"}, True),
    ("a>1", {"a": "1"}, False),
    ("a>1", {"a": "x"}, False),
    ("a>1", {}, False),
    ("a<1", {"a": "-3"}, True),
    ("a<1", {"a": "99999999999999999999"}, False),  # out of int64 range never matches
    ("a=b,c", {"a": "b", "c": "d"}, True),
    ("a=b,c", {"a": "b"}, False),
]


@pytest.mark.parametrize(("text", "labels", "expected"), MATCHES)
def test_label_selector_matches_like_apimachinery(text, labels, expected):
    assert LabelSelector.parse(text).matches(labels) is expected


def test_label_selector_empty_is_true_only_without_requirements():
    assert LabelSelector.parse("").empty
    assert not LabelSelector.parse("a").empty


_NAMES = st.from_regex(r"\A[A-Za-z0-9]([-A-Za-z0-9_.]{0,6}[A-Za-z0-9])?\Z")
_KEYS = st.one_of(_NAMES, st.builds("{}/{}".format, st.from_regex(r"\A[a-z0-9]{1,5}(\.[a-z0-9]{1,5})?\Z"), _NAMES))
_VALUES = st.one_of(st.just(""), _NAMES)


@st.composite
def requirements(draw):
    key = draw(_KEYS)
    operator = draw(st.sampled_from(["exists", "!", "=", "==", "!=", "in", "notin", "gt", "lt"]))
    if operator in ("exists", "!"):
        return Requirement(key, operator)
    if operator in ("gt", "lt"):
        return Requirement(key, operator, (str(draw(st.integers(0, 2**63 - 1))),))
    if operator in ("in", "notin"):
        return Requirement(key, operator, tuple(sorted(draw(st.sets(_VALUES, min_size=1, max_size=3)))))
    return Requirement(key, operator, (draw(_VALUES),))


def _reference(requirement: Requirement, labels: dict) -> bool:
    key, operator, values = requirement
    if operator == "exists":
        return key in labels
    if operator == "!":
        return key not in labels
    if operator in ("gt", "lt"):
        if key not in labels or not labels[key].lstrip("+-").isdigit():
            return False
        return int(labels[key]) > int(values[0]) if operator == "gt" else int(labels[key]) < int(values[0])
    if operator in ("!=", "notin"):
        return labels.get(key) not in values
    return key in labels and labels[key] in values


@settings(max_examples=50)
@given(st.lists(requirements(), max_size=4))
def test_label_selector_string_round_trips(reqs):
    selector = LabelSelector(reqs)
    assert LabelSelector.parse(str(selector)) == selector


@settings(max_examples=50)
@given(st.lists(requirements(), max_size=4), st.dictionaries(_KEYS, st.one_of(_VALUES, st.integers().map(str)), max_size=4))
def test_label_selector_matches_agrees_with_a_plain_reference(reqs, labels):
    selector = LabelSelector(reqs)
    for requirement in reqs:  # also probe the keys the selector talks about
        labels.setdefault(requirement.key, requirement.values[0] if requirement.values else "")
    assert selector.matches(labels) == all(_reference(r, labels) for r in reqs)


@settings(max_examples=50)
@given(st.text(alphabet="ab =!(),<>in1", max_size=12))
def test_label_selector_parse_either_succeeds_stably_or_raises_bad_request(text):
    try:
        selector = LabelSelector.parse(text)
    except errors.StatusError as exc:
        assert exc.code == 400
    else:
        assert LabelSelector.parse(str(selector)) == selector


# -- field selector ----------------------------------------------------------------------------

FIELD_PARSES = [
    ("", "", frozenset()),
    ("metadata.name=x", "metadata.name=x", {"metadata.name"}),
    ("metadata.name==x", "metadata.name=x", {"metadata.name"}),
    ("spec.nodeName!=", "spec.nodeName!=", {"spec.nodeName"}),
    ("b=1,a=2", "a=2,b=1", {"a", "b"}),  # terms are sorted
    ("a=x\\,y", "a=x\\,y", {"a"}),
    ("a=x\\=y", "a=x\\=y", {"a"}),
    ("a=x\\\\y", "a=x\\\\y", {"a"}),
    (",,a=b,", "a=b", {"a"}),
    ("=", "", frozenset()),  # a term with no field and no value is dropped
]


@pytest.mark.parametrize(("text", "canonical", "fields"), FIELD_PARSES)
def test_field_selector_parses_and_prints_canonically(text, canonical, fields):
    selector = FieldSelector.parse(text)
    assert str(selector) == canonical
    assert selector.fields == frozenset(fields)
    assert FieldSelector.parse(canonical) == selector


FIELD_REJECTS = [
    ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
    ("a=b=c", "invalid field selector: unescaped character in value: 61"),
    ("a!==b", "invalid field selector: unescaped character in value: 61"),
    ("a=b\\!c", "invalid field selector: invalid escape sequence: \\!"),
    ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
]


@pytest.mark.parametrize(("text", "message"), FIELD_REJECTS)
def test_field_selector_rejects_bad_syntax_with_apimachinery_wording(text, message):
    with pytest.raises(errors.StatusError) as caught:
        FieldSelector.parse(text)
    assert (caught.value.code, caught.value.message) == (400, message)


FIELD_MATCHES = [
    ("", {}, True),
    ("metadata.name=x", {"metadata.name": "x"}, True),
    ("metadata.name=x", {"metadata.name": "y"}, False),
    ("metadata.name!=x", {"metadata.name": "y"}, True),
    ("involvedObject.namespace=", {"involvedObject.namespace": ""}, True),
    ("involvedObject.namespace=", {}, True),  # unset fields read as ""
    ("spec.nodeName!=", {}, False),
    ("a=x\\,y", {"a": "x,y"}, True),
    ("a=1,b!=2", {"a": "1", "b": "3"}, True),
    ("a=1,b!=2", {"a": "1", "b": "2"}, False),
]


@pytest.mark.parametrize(("text", "fields", "expected"), FIELD_MATCHES)
def test_field_selector_matches_like_apimachinery(text, fields, expected):
    assert FieldSelector.parse(text).matches(fields) is expected


def test_field_selector_exact_name_is_the_required_metadata_name():
    assert FieldSelector.parse("metadata.namespace=ns,metadata.name=web").exact_name() == "web"
    assert FieldSelector.parse("metadata.name!=web").exact_name() is None
    assert FieldSelector.parse("spec.nodeName=n").exact_name() is None
    assert FieldSelector.parse("metadata.name=").exact_name() == ""


def test_field_selector_empty_is_true_only_without_terms():
    assert FieldSelector.parse("").empty
    assert not FieldSelector.parse("a=").empty


@settings(max_examples=50)
@given(st.from_regex(r"\A[a-zA-Z][a-zA-Z.]{0,12}\Z"), st.text(max_size=10), st.booleans())
def test_field_selector_escapes_any_value_round_trip(field, value, negated):
    selector = FieldSelector([(field, value, negated)])
    parsed = FieldSelector.parse(str(selector))
    assert parsed == selector
    assert parsed.matches({field: value}) is not negated


def test_an_objects_selector_renders_as_kubes_label_selector_as_selector_string():
    render = LabelSelector.render
    selector = {"matchLabels": {"tier": "web", "app": "x"}, "matchExpressions": [
        {"key": "zone", "operator": "NotIn", "values": ["b", "a", "a"]}, {"key": "gpu", "operator": "Exists"},
        {"key": "legacy", "operator": "DoesNotExist"}, {"key": "app", "operator": "In", "values": ["y", "x"]},
    ]}  # fmt: skip
    # sorted by key (a stable sort: app=x before app in (...)), values sorted and unique
    assert render(selector) == "app=x,app in (x,y),gpu,!legacy,tier=web,zone notin (a,b)"
    assert render(None) == "" and render({}) == ""
    assert render({"matchExpressions": [{"key": "a", "operator": "Near"}]}) is None  # kube's conversion fails
    assert render({"matchExpressions": ["a"]}) is None
