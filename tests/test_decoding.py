"""Decoding untrusted bodies: every bomb is a 400, never a crash (the C YAML composer recurses)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockapi import decoding, errors

DEEP = 30_000
YAML_BOMBS = {
    "flow sequences": "[" * DEEP + "]" * DEEP,
    "flow mappings": "{a: " * DEEP + "x" + "}" * DEEP,
    "flow pairs": "[a: " * DEEP + "x" + "]" * DEEP,
    "compact sequences": "- " * DEEP + "x",
    "compact keys": "? " * DEEP + "x",
    "indented mappings": "".join(" " * i + "a:\n" for i in range(2500)) + " " * 2500 + "x\n",
    "CR line breaks": "".join(" " * i + "-\r" for i in range(2500)),
    "mapping then sequences": "a:\n" + "- " * DEEP + "x",
    "a List manifest": "kind: List\nitems:\n" + "- " * DEEP + "x\n",
}


_CHILD = """
import json, sys
from mockapi import decoding, errors
for name, body in json.load(sys.stdin).items():
    try:
        decoding.decode_yaml_or_json(body.encode())
        print(name + "=decoded")
    except errors.StatusError as exc:
        print(f"{name}={exc.code} {exc.message}")
"""


def test_deep_yaml_is_400_not_a_crash():
    """In a child: before the fix each of these killed the interpreter with SIGSEGV."""
    result = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(YAML_BOMBS), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr[-500:])
    lines = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert lines == {name: "400 error decoding YAML body: nesting deeper than 100 levels" for name in YAML_BOMBS}


@pytest.mark.parametrize(
    "body",
    [
        "[" * 101 + "]" * 101,  # just over the limit, on the fast path
        "a:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(101)) + " " * 103 + "x\n",
    ],
)
def test_just_over_the_limit_is_refused(body):
    with pytest.raises(errors.StatusError, match="nesting deeper than 100 levels"):
        decoding.decode_yaml_or_json(body.encode())


@pytest.mark.parametrize(
    "body, expected",
    [
        ("[" * 100 + "]" * 100, None),
        ("- - - x", [[["x"]]]),
        ("? a\n: b", {"a": "b"}),
        ("a:\n- 1\n- [2, {b: c}]", {"a": [1, [2, {"b": "c"}]]}),
        ("x: " + "-" * 300, {"x": "-" * 300}),
        ("s: |\n" + "\n".join("  " + "-" * 300 for _ in range(3)), {"s": "\n".join("-" * 300 for _ in range(3))}),
    ],
)
def test_ordinary_yaml_still_decodes(body, expected):
    value = decoding.decode_yaml_or_json(body.encode())
    if expected is not None:
        assert value == expected


def test_a_long_block_prefix_that_is_shallow_takes_the_slow_path_and_decodes():
    body = "a: |\n" + "  " + "- " * 300 + "\n"  # a literal scalar that looks like compact sequences
    assert not decoding._composing_is_safe(body)
    assert decoding.decode_yaml_or_json(body.encode()) == {"a": "- " * 300 + "\n"}


@pytest.mark.parametrize("body", [b"[" * 5000 + b"]" * 5000, b'{"a":' * 1000 + b"1" + b"}" * 1000, b"[" * 101 + b"]" * 101])
def test_deep_json_is_400(body):
    with pytest.raises(errors.StatusError) as caught:
        decoding.decode_json(body)
    assert caught.value.code == 400


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b'{"a":1,"a":2}', ["a"]),
        (b'{"metadata":{"labels":{"x":"1","y":"2","x":"3"}}}', ["metadata.labels.x"]),
        (b'{"spec":{"items":[{"n":1},{"n":1,"n":2}]}}', ["spec.items[1].n"]),
        (b'{"a" : 1 , "a" : 2}', ["a"]),  # whitespace around the colons
        (b'{"a":1,"\\u0061":2}', ["a"]),  # the same key spelled two ways
        (b'{"a":"\\u003a","a":"x"}', ["a"]),  # an escaped colon does not hide the repeat
        (b'{"a":"x:y:z","b":{"c":"::"}}', []),  # colons in strings are not keys
        (b'{"a":"\\u003a\\u003A"}', []),
        (b'[{"a":1},{"a":2}]', []),
        (b'"just:a:string"', []),
    ],
)
def test_duplicate_fields_are_found_exactly(raw, expected):
    assert decoding.duplicate_fields(raw, decoding.decode_json(raw)) == expected
