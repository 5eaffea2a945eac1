"""Property-based fuzzing of every path and method of every group-version the server serves, from
its own OpenAPI v3 documents (schemathesis draws the requests; both schema-valid and schema-invalid
data). Each response must pass :func:`tests.fuzz.harness.problems` (no 5xx, no hang, a live
server, every error a v1 Status) and a refused write must leave the store's resourceVersion as it was.

Each operation gets 2 × ``--fuzz-examples`` requests (default 3); from 10 on, also a sample of
schemathesis' coverage cases (at most 20 × ``--fuzz-examples``).
"""

from __future__ import annotations

import json
import urllib.parse

import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.fuzz.harness import WRITES, FuzzServer, problems

pytestmark = pytest.mark.fuzz

# Every group-version the fuzz server serves (a test checks this against its /openapi/v3 index).
GROUP_VERSIONS = [
    "api/v1",
    "apis/apiextensions.k8s.io/v1",
    "apis/apiregistration.k8s.io/v1",
    "apis/apps/v1",
    "apis/authorization.k8s.io/v1",
    "apis/autoscaling/v1",
    "apis/autoscaling/v2",
    "apis/batch/v1",
    "apis/coordination.k8s.io/v1",
    "apis/devmgmtproto.k8s.io/v1alpha1",
    "apis/discovery.k8s.io/v1",
    "apis/fuzz.example.com/v1",  # the CRD the harness registers at run time
    "apis/networking.k8s.io/v1",
    "apis/policy/v1",
    "apis/rbac.authorization.k8s.io/v1",
    "apis/scheduling.k8s.io/v1",
    "apis/storage.k8s.io/v1",
]
COVERAGE_FROM = 10  # --fuzz-examples from which schemathesis' coverage cases are sent too
# Names that exist, besides the random ones: requests on them reach past "not found".
KNOWN = {"namespace": "default", "name": "default"}


def test_every_served_group_version_is_fuzzed(server):
    index = orjson.loads(server.send("GET", "/openapi/v3").body)
    assert sorted(index["paths"]) == GROUP_VERSIONS


@pytest.mark.parametrize("group_version", GROUP_VERSIONS)
def test_no_request_from_the_openapi_document_breaks_the_server(server, fuzz_examples, group_version):
    answer = server.send("GET", f"/openapi/v3/{group_version}")
    assert answer.status == 200, answer
    schema = schemathesis.openapi.from_dict(orjson.loads(answer.body))
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        try:
            _fuzz(server, operation, fuzz_examples)
            if fuzz_examples >= COVERAGE_FROM:
                _cover(server, schema, operation, fuzz_examples * 20)
        except AssertionError as failure:
            failures.append(f"{operation.method.upper()} {operation.path}: {failure}")
    assert not failures, "\n".join(failures) + "\n--- server log ---\n" + server.log()


def _cover(server: FuzzServer, schema, operation, most: int) -> None:
    """schemathesis' coverage cases (each keyword of the schema at its edges: nulls, wrong types,
    bounds, missing required fields), evenly sampled down to ``most``; too slow to draw for CI."""
    modes = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    cases = list(schema.iter_coverage_cases(operation, generation_modes=modes, generation_config=schema.config.generation_for(operation=operation)))
    for case in cases[:: max(1, len(cases) // most)]:
        found = _check(server, *_request(server, case))
        assert not found, f"{'; '.join(found)}: {case.as_curl_command()}"


def _check(server: FuzzServer, method: str, target: str, body: bytes | None, headers: list[tuple[str, str]]) -> list[str]:
    """Send one request: what is wrong with its answer, and whether a refused write changed the store."""
    before = server.resource_version() if method in WRITES else None
    answer = server.send(method, target, body, headers, stream=True)
    found = problems(server, method, answer)
    if before is not None and 400 <= answer.status < 500 and server.alive():
        after = server.resource_version()
        if after != before:
            found.append(f"a refused {method} ({answer.status}) changed the store: resourceVersion {before} → {after}")
    return found


def _fuzz(server: FuzzServer, operation, examples: int) -> None:
    known = {key: value for key, value in KNOWN.items() if "{" + key + "}" in operation.path}
    cases = st.one_of(
        *(operation.as_strategy(mode) for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)),
        *(operation.as_strategy(mode, path_parameters=known) for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if known),
    )

    @settings(max_examples=examples * 2, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=cases)
    def run(case):
        method, target, body, headers = _request(server, case)
        note(f"{method} {target} {headers} {body[:500] if body else body!r}")
        found = _check(server, method, target, body, headers)
        assert not found, "; ".join(found)

    run()


def _request(server: FuzzServer, case) -> tuple[str, str, bytes | None, list[tuple[str, str]]]:
    """The case as raw HTTP: method, target (path and query), body, headers."""
    sent = case.as_transport_kwargs(base_url=server.url)
    url = urllib.parse.urlsplit(sent["url"])
    query = urllib.parse.urlencode(sent.get("params") or {}, doseq=True)
    target = url.path + (f"?{query}" if query else "")
    headers = [(name, str(value)) for name, value in (sent.get("headers") or {}).items() if name.lower() not in ("connection", "accept-encoding")]
    body = None
    if "json" in sent:
        body = json.dumps(sent["json"]).encode()
    elif sent.get("data") is not None:
        data = sent["data"]
        body = data if isinstance(data, bytes) else str(data).encode("utf-8", "surrogatepass")
    return sent["method"], target, body, [(name, value) for name, value in headers if _latin1(name + value)]


def _latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return "\n" not in text and "\r" not in text
