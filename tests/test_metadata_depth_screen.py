"""The stored-depth bound's screen of a create's metadata (``rest._metadata_within``) walks the
metadata's values instead of encoding them. A screen only lets the bound skip its exact walk, so
it must be sound (True only when metadata without managedFields nests less than the limit), and
the bound's answer must be the one it gives with the encoding screen it replaces."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi import decoding, errors
from mockapi.registry import rest

LIMIT = decoding.MAX_DEPTH - rest._FIELD_SET_EXTRA


def _nested(levels: int, leaf, wrap: str):
    value = leaf
    for _ in range(levels):
        value = {"k": value} if wrap == "dict" else [value]
    return value


def _encoding_screen(obj: dict, limit: int) -> bool:
    """The screen as it was: the brackets of metadata's encoding without managedFields."""
    meta = obj.get("metadata")
    if type(meta) is not dict:
        return False
    try:
        encoded = orjson.dumps({k: v for k, v in meta.items() if k != "managedFields"})
    except orjson.JSONEncodeError:
        return False
    return encoded.count(b"{") + encoded.count(b"[") < limit


values = st.one_of(
    st.sampled_from(["x", "{[{[", 1, None, True, 2**70]),
    st.builds(_nested, st.integers(0, 110), st.sampled_from(["v", "{{{", 3]), st.sampled_from(["dict", "list"])),
    st.dictionaries(st.sampled_from(["a", "b"]), st.builds(_nested, st.integers(0, 100), st.just("v"), st.sampled_from(["dict", "list"])), max_size=2),
)
metas = st.dictionaries(st.sampled_from(["name", "labels", "annotations", "ownerReferences", "finalizers", "managedFields", "extra"]), values, max_size=5)


@settings(max_examples=300, deadline=None)
@given(metas)
def test_the_walking_screen_is_sound(meta):
    obj = {"metadata": meta}
    if rest._metadata_within(obj, LIMIT):
        rest_of_it = {k: v for k, v in meta.items() if k != "managedFields"}
        assert not decoding.depth_exceeds(rest_of_it, LIMIT - 1)


class _Type:
    kind, group = "Widget", "example.com"


def _answer(obj: dict, settled: int | None) -> str:
    try:
        rest._check_stored_depth(_Type(), obj, admitted=True, settled_brackets=settled)
    except errors.StatusError as exc:
        return str(exc)
    return "ok"


@settings(max_examples=300, deadline=None)
@given(metas, st.booleans(), st.integers(0, 100))
def test_the_stored_depth_bound_answers_as_with_the_encoding_screen(meta, verdict, spec_levels):
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", **meta}, "spec": _nested(spec_levels, "v", "dict")}
    fields = orjson.dumps({"spec": obj["spec"]})
    settled = fields.count(b"{") + fields.count(b"[") if verdict else None  # what a verdict on the spec holds
    walked = _answer(obj, settled)
    original = rest._metadata_within
    rest._metadata_within = _encoding_screen
    try:
        encoded = _answer(obj, settled)
    finally:
        rest._metadata_within = original
    assert walked == encoded


@pytest.mark.parametrize("levels, within", [(LIMIT - 1, True), (LIMIT, False)])
def test_the_screen_stops_exactly_at_the_bound(levels, within):
    assert rest._metadata_within({"metadata": {"labels": _nested(levels - 1, "v", "dict"), "managedFields": [_nested(150, 1, "list")]}}, LIMIT) is within
