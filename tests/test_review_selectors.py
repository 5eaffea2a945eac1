"""Access reviews with ``resourceAttributes.fieldSelector`` / ``labelSelector`` (kube 1.31+,
AuthorizeWithSelectors): validated as kube's pkg/apis/authorization/validation, parsed as
``ResourceAttributesFrom``, parse problems in ``status.evaluationError``; RBAC decides without them."""

from __future__ import annotations

import pytest

from mockapi.auth import reviews
from mockapi.auth.user import UserInfo
from mockapi.registry.reviews import selector_errors
from mockapi.selectors import Requirement

BOB = UserInfo("bob")


def attrs(**resource):
    return reviews.attributes_and_problems(BOB, {"resourceAttributes": {"verb": "list", "resource": "pods", **resource}})


def test_a_raw_field_selector_and_label_requirements_are_parsed():
    found, problems = attrs(fieldSelector={"rawSelector": "spec.nodeName=n1,status.phase!=Running"}, labelSelector={"requirements": [{"key": "app", "operator": "In", "values": ["web", "api"]}]})
    assert problems == []
    assert found.field_selector == (("spec.nodeName", "=", "n1"), ("status.phase", "!=", "Running"))
    assert found.label_selector == (Requirement("app", "in", ("api", "web")),)
    assert attrs(labelSelector={"rawSelector": "tier notin (db),!legacy"})[0].label_selector == (Requirement("legacy", "!"), Requirement("tier", "notin", ("db",)))


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        ({"fieldSelector": {"rawSelector": "key in value"}, "labelSelector": {"rawSelector": "&"}},
         ["spec.resourceAttributes.fieldSelector ignored due to parse error", "spec.resourceAttributes.labelSelector ignored due to parse error"]),
        ({"fieldSelector": {"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["n1"]}, {"key": "x", "operator": "Exists"}]}},
         ["spec.resourceAttributes.fieldSelector partially ignored due to parse error"]),
        ({"fieldSelector": {"requirements": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}}, ["spec.resourceAttributes.fieldSelector ignored due to parse error"]),
        ({"labelSelector": {"requirements": [{"key": "a", "operator": "Gt", "values": ["1"]}]}}, ["spec.resourceAttributes.labelSelector ignored due to parse error"]),
    ],
)  # fmt: skip
def test_what_cannot_be_parsed_is_dropped_and_named(resource, expected):
    assert attrs(**resource)[1] == expected


def test_field_requirements_convert_as_kube_does():
    found, _ = attrs(fieldSelector={"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["n1"]}, {"key": "metadata.name", "operator": "NotIn", "values": ["x"]}]})
    assert found.field_selector == (("spec.nodeName", "=", "n1"), ("metadata.name", "!=", "x"))


def test_validation_messages_are_kubes():
    messages = [str(e) for e in selector_errors({
        "fieldSelector": {},
        "labelSelector": {"rawSelector": "a", "requirements": [{"key": "-bad", "operator": "In"}, {"key": "ok", "operator": "Exists", "values": ["v"]}, {"key": "ok", "operator": "Whatever"}]},
    })]  # fmt: skip
    assert messages[:4] == [
        "spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required",
        'spec.resourceAttributes.labelSelector.rawSelector: Invalid value: "a": may not specified at the same time as requirements',
        "spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        'spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: "-bad": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')',
    ]
    assert messages[4] == "spec.resourceAttributes.labelSelector.requirements[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
    assert len(messages) == 5  # an unknown operator is allowed (a newer client's)
    assert [str(e) for e in selector_errors({"fieldSelector": {"requirements": [{"operator": "In", "values": ["v"]}]}})] == [
        "spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified"
    ]
