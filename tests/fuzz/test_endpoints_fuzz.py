"""Property-based fuzzing of the endpoints no OpenAPI document describes: discovery, the OpenAPI
documents themselves, health, metrics, and the control API (/mockapi/v1/*). Random methods, query
strings, Accept and Content-Type headers and bodies; the same assertions as every fuzz test."""

from __future__ import annotations

import urllib.parse

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from tests.fuzz.harness import WRITES, problems

pytestmark = pytest.mark.fuzz

PATHS = [
    "/version", "/api", "/apis", "/apis/apps", "/api/v1", "/apis/devmgmtproto.k8s.io/v1alpha1",
    "/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1", "/openapi/v3/apis/fuzz.example.com/v1",
    "/healthz", "/livez", "/readyz", "/readyz/ping", "/metrics",
    "/mockapi/v1", "/mockapi/v1/reset", "/mockapi/v1/load", "/mockapi/v1/snapshot", "/mockapi/v1/requests", "/mockapi/v1/kubeconfig",
    "/mockapi/v1/allocation", "/mockapi/v1/allocation/step", "/mockapi/v1/explain/default/x", "/mockapi/v1/scheduling/default/x",
]  # fmt: skip
MEDIA_TYPES = [
    "application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "*/*", "text/plain",
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "application/merge-patch+json",
]  # fmt: skip
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20)
JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | TEXT, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)
HEADER_VALUE = st.sampled_from(MEDIA_TYPES) | st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
BODY = st.none() | JSON.map(orjson.dumps) | st.binary(max_size=200) | st.sampled_from([b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n", b"[" * 200])


REQUESTS = st.fixed_dictionaries({
    "path": st.sampled_from(PATHS),
    "method": st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]),
    "query": st.dictionaries(st.sampled_from(["timeout", "hash", "verbose", "exclude", "namespace", "keepCRDs", "source", "verb", "kind", "watch"]) | TEXT, TEXT, max_size=3),
    "accept": st.none() | HEADER_VALUE,
    "content_type": st.none() | HEADER_VALUE,
    "body": BODY,
})  # fmt: skip


def test_no_request_to_the_other_endpoints_breaks_the_server(server, fuzz_examples):
    @settings(max_examples=fuzz_examples * 40, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(request=REQUESTS)
    def run(request):
        path, method = request["path"], request["method"]
        target = path + ("?" + urllib.parse.urlencode(request["query"]) if request["query"] else "")
        headers = [(name, request[key]) for name, key in (("Accept", "accept"), ("Content-Type", "content_type")) if request[key] is not None]
        note(f"{method} {target} {headers} {request['body']!r}")
        checked = method in WRITES and not path.endswith(("/load", "/requests"))  # these two write on purpose
        before = server.resource_version() if checked else None
        answer = server.send(method, target, request["body"], headers, stream=True)
        found = problems(server, method, answer)
        if checked and 400 <= answer.status < 500 and server.resource_version() != before:
            found.append(f"a refused {method} changed the store")
        assert not found, "; ".join(found)

    run()
