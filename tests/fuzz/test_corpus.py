"""The hostile-input corpus (tests/fuzz/corpus/*.yaml): every entry is one request, sent as raw
HTTP to the fuzz server, with the same assertions as the fuzzing (no 5xx, no hang, a live server,
every error a v1 Status, a refused write changes nothing) plus the status it names, if any.

An entry (docs/fuzzing.md):

    - name: a generateName that is a list          # the test's id
      method: POST                                 # default GET
      path: /api/v1/namespaces/default/configmaps  # sent as written (query included)
      headers: [[Content-Type, application/json]]  # a list of pairs: duplicates are kept
      json: {metadata: {generateName: [x]}}        # or body: "raw text", or expr: a Python expression
      expect: 400                                  # optional: the status it must get
      reason: BadRequest                           # optional: the Status reason
      message: cannot unmarshal                    # optional: a part of the Status message
      setup: [...]                                 # optional: entries sent first (their answers unchecked)
      protocol: true                               # refused below HTTP: no Status required
      may_change: true                             # a refusal that may follow a partial success

``expr`` (a body), ``path_expr`` and ``headers_expr`` (a list of pairs) are Python expressions,
evaluated with a few builtins only (``'[' * 30000``, ``b'\\xff'``, ``range``), for inputs too big or
too binary to write out.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml

from tests.fuzz.harness import WRITES, FuzzServer, problems

pytestmark = pytest.mark.fuzz

CORPUS = Path(__file__).resolve().parent / "corpus"
_BUILTINS = {"range": range, "hex": hex, "chr": chr, "str": str, "len": len}


def _entries() -> list:
    found = []
    for path in sorted(CORPUS.glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text()):
            found.append(pytest.param(entry, id=f"{path.stem}: {entry['name']}"))
    return found


def _body(entry: dict) -> bytes | None:
    if "json" in entry:
        return orjson.dumps(entry["json"])
    if "expr" in entry:
        value = _eval(entry["expr"])
        return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    if "body" in entry:
        return entry["body"].encode("utf-8", "surrogatepass")
    return None


def _eval(expression: str):
    return eval(expression, {"__builtins__": _BUILTINS})  # noqa: S307 - the repository's own test data


def _send(server: FuzzServer, entry: dict):
    method = entry.get("method", "GET")
    headers = [tuple(pair) for pair in (_eval(entry["headers_expr"]) if "headers_expr" in entry else entry.get("headers", []))]
    path = _eval(entry["path_expr"]) if "path_expr" in entry else entry["path"]
    return method, server.send(method, path, _body(entry), headers, stream=True)


@pytest.mark.parametrize("entry", _entries())
def test_a_hostile_input_is_refused_cleanly(server, entry):
    for step in entry.get("setup", []):
        _send(server, step)
    before = server.resource_version()
    method, answer = _send(server, entry)
    found = problems(server, method, answer, protocol=entry.get("protocol", False))
    assert not found, f"{found}\n--- server log ---\n{server.log()}"
    if "expect" in entry:
        assert answer.status == entry["expect"], answer
    if "reason" in entry or "message" in entry:
        status = orjson.loads(answer.body)
        assert status.get("reason") == entry.get("reason", status.get("reason")), status
        assert entry.get("message", "") in status.get("message", ""), status
    if method in WRITES and 400 <= answer.status < 500 and not entry.get("may_change"):
        assert server.resource_version() == before, "a refused write changed the store"
