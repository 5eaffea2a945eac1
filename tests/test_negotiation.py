"""Content-Type and Accept as kube-apiserver negotiates them: 415 and 406 with kube's messages."""

from __future__ import annotations

import pytest

from mockapi import errors
from mockapi.http import bodies, table


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "application/json;", 'application/json; x="a b"', "application/yaml", "text"],
)
def test_content_types_go_can_parse(content_type):
    assert bodies.parses_as_media_type(content_type)


@pytest.mark.parametrize("content_type", [";;;===", " ", "a/b/c", "application/json;;charset=x", "application/json charset", "/json"])
def test_an_unparsable_content_type_is_415_not_json(content_type):
    with pytest.raises(errors.StatusError) as caught:
        bodies.decode(b'{"a":1}', content_type)
    assert caught.value.code == 415 and caught.value.reason == "UnsupportedMediaType"
    assert caught.value.message.startswith("the body of the request was in an unknown format - accepted media types include: application/json")


def test_no_content_type_is_json():
    assert bodies.decode(b'{"a":1}', None) == {"a": 1}
    assert bodies.decode(b'{"a":1}', "") == {"a": 1}


@pytest.mark.parametrize(
    "accept, rendering",
    [
        ("", None),
        ("application/json", None),
        ("*/*", None),
        ("application/vnd.kubernetes.protobuf, application/json", None),
        ("image/png, */*;q=0.1", None),
        ("application/json;as=Table;v=v1;g=meta.k8s.io, application/json", table.TABLE),
    ],
)
def test_acceptable_accepts(accept, rendering):
    assert table.negotiate(accept) == rendering


@pytest.mark.parametrize("accept", ["image/png", "text/plain, image/*", "application/json;as=Bogus;v=v1;g=meta.k8s.io"])
def test_an_accept_nothing_can_serve_is_406(accept):
    with pytest.raises(errors.StatusError) as caught:
        table.negotiate(accept)
    assert caught.value.code == 406 and caught.value.reason == "NotAcceptable"
    assert caught.value.message == "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
