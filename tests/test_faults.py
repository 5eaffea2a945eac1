"""Fault rules (mockapi/faults.py): parsing, matching, kube's error bodies, and the dispatcher
consulting them (mockapi/http/injection.py), in process through the ASGI app."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import orjson
import pytest

from mockapi import app as app_
from mockapi import errors, faults
from mockapi.http import injection, requestinfo
from mockapi.settings import Settings
from mockapi.store import Store

CM = errors.GroupResource("", "configmaps")


def rule(**body) -> faults.Rule:
    return faults.parse(body, default_id="fault-1")


def info(method: str, path: str, query: str = "") -> requestinfo.RequestInfo:
    return requestinfo.parse(method, path, query)


def bad(body) -> str:
    with pytest.raises(errors.StatusError) as caught:
        faults.parse(body, default_id="fault-1")
    assert caught.value.code == 400 and caught.value.reason == "BadRequest"
    return caught.value.message


# ------------------------------------------------------------------ parsing
def test_a_rule_round_trips_through_its_json_form():
    body = {
        "id": "conflicts",
        "match": {"verb": "update", "resource": "pods/status", "namespace": "ns", "name": "p", "userAgent": "ctl/1"},
        "action": {"error": {"code": 429, "message": "slow down", "retryAfterSeconds": 3}, "latencySeconds": 0.25},
        "count": 2,
    }
    assert rule(**body).to_dict() == {**body, "remaining": 2, "hits": 0}


def test_an_error_may_be_given_as_its_code_alone_and_a_rule_without_count_holds_until_removed():
    parsed = rule(action={"error": 409})
    assert parsed.to_dict() == {"id": "fault-1", "match": {}, "action": {"error": {"code": 409}}, "count": None, "remaining": None, "hits": 0}


def test_a_bad_rule_is_a_400_naming_each_field():
    message = bad({"match": {"verb": "gett", "resource": "pods/"}, "action": {"error": 418, "dropConnection": "yes"}, "count": 0, "extra": 1})
    assert message.startswith("invalid fault rule: [")
    assert 'unknown field "extra"' in message
    assert 'match.verb: Unsupported value: "gett": supported values: "get", "list", "watch", "create"' in message
    assert 'match.resource: Invalid value: "pods/": must be plural[.group][/subresource]' in message
    assert "action.error.code: Unsupported value: 418: supported values: 409, 429, 500, 503, 504" in message
    assert 'action.dropConnection: Invalid value: "yes": must be a boolean' in message
    assert "count: Invalid value: 0: must be a positive whole number" in message


@pytest.mark.parametrize(
    "body, expected",
    [
        ({}, "invalid fault rule: action: Required value: one of error, latencySeconds (above 0) or dropConnection"),
        ({"action": {"latencySeconds": -1}}, "invalid fault rule: action.latencySeconds: Invalid value: -1: must be a number of seconds from 0 to 3600"),
        ({"action": {"error": {"code": 409}, "dropConnection": True}}, "invalid fault rule: action: Forbidden: error and dropConnection cannot be combined"),
        ({"action": {"error": {}}}, "invalid fault rule: action.error.code: Required value: one of 409, 429, 500, 503, 504"),
        ({"action": {"error": {"code": 500, "retryAfterSeconds": 1.5}}}, "invalid fault rule: action.error.retryAfterSeconds: Invalid value: 1.5: must be a whole number of seconds from 0 to 86400"),
        ({"id": "Not_OK", "action": {"error": 500}}, 'invalid fault rule: id: Invalid value: "Not_OK": must be a lowercase RFC 1123 label (a-z, 0-9 and \'-\', at most 63 characters)'),
        ({"match": {"name": 3}, "action": {"error": 500}}, "invalid fault rule: match.name: Invalid value: 3: must be a string"),
        ({"match": {"nmae": "x"}, "action": {"error": 500}}, 'invalid fault rule: unknown field "match.nmae" (known: verb, resource, namespace, name, userAgent)'),
    ],
)
def test_each_bad_field_has_its_own_message(body, expected):
    assert bad(body) == expected


def test_a_rule_that_is_not_an_object_is_a_400():
    assert bad([1]) == "a fault rule must be a JSON object"


# ------------------------------------------------------------------ matching
@pytest.mark.parametrize(
    "match, request_line, matched",
    [
        ({}, ("DELETE", "/api/v1/namespaces/a/pods/p"), True),
        ({"verb": "create"}, ("POST", "/api/v1/namespaces/a/pods"), True),
        ({"verb": "create"}, ("PUT", "/api/v1/namespaces/a/pods/p"), False),
        ({"verb": ["update", "patch"]}, ("PATCH", "/api/v1/namespaces/a/pods/p"), True),
        ({"verb": "list"}, ("GET", "/api/v1/pods", "watch=1"), False),
        ({"verb": "watch"}, ("GET", "/api/v1/pods", "watch=1"), True),
        ({"resource": "pods"}, ("PUT", "/api/v1/namespaces/a/pods/p"), True),
        ({"resource": "pods"}, ("PUT", "/api/v1/namespaces/a/pods/p/status"), False),
        ({"resource": "pods/status"}, ("PUT", "/api/v1/namespaces/a/pods/p/status"), True),
        ({"resource": "pods/status"}, ("PUT", "/api/v1/namespaces/a/pods/p"), False),
        ({"resource": "pods/*"}, ("PUT", "/api/v1/namespaces/a/pods/p/status"), True),
        ({"resource": "pods/*"}, ("PUT", "/api/v1/namespaces/a/pods/p"), True),
        ({"resource": "*"}, ("GET", "/apis/apps/v1/deployments"), True),
        ({"resource": "deployments.apps"}, ("GET", "/apis/apps/v1/deployments"), True),
        ({"resource": "deployments.extensions"}, ("GET", "/apis/apps/v1/deployments"), False),
        ({"resource": "deployments"}, ("GET", "/apis/apps/v1/deployments"), True),
        ({"namespace": "a"}, ("GET", "/api/v1/namespaces/b/pods"), False),
        ({"namespace": "a", "name": "p"}, ("GET", "/api/v1/namespaces/a/pods/p"), True),
        ({"name": "p"}, ("GET", "/api/v1/namespaces/a/pods/q"), False),
    ],
)
def test_a_rule_matches_on_every_field_it_gives(match, request_line, matched):
    assert rule(match=match, action={"error": 500}).matches(info(*request_line), "") is matched


def test_user_agent_matches_as_a_substring():
    parsed = rule(match={"userAgent": "my-controller"}, action={"error": 500})
    assert parsed.matches(info("GET", "/api/v1/pods"), "my-controller/1.0 (linux)")
    assert not parsed.matches(info("GET", "/api/v1/pods"), "kubectl/v1.30")


def test_count_limits_a_rule_to_the_next_n_matching_requests_and_the_oldest_live_rule_acts():
    fault_set = faults.FaultSet()
    first = fault_set.add({"match": {"verb": "update"}, "action": {"error": 409}, "count": 2})
    second = fault_set.add({"match": {"verb": "update"}, "action": {"error": 500}})
    update, get = info("PUT", "/api/v1/namespaces/a/pods/p"), info("GET", "/api/v1/namespaces/a/pods/p")
    assert fault_set.match(get, {}) is None
    assert [fault_set.match(update, {}) for _ in range(3)] == [first, first, second]
    assert (first.hits, first.remaining, second.hits, second.remaining) == (2, 0, 1, None)
    assert list(fault_set.rules) == ["fault-1", "fault-2"] and fault_set.active == [second]  # exhausted: listed, inert


def test_rules_are_removed_one_by_one_or_all_at_once():
    fault_set = faults.FaultSet()
    fault_set.add({"id": "a", "action": {"error": 500}})
    fault_set.add({"action": {"latencySeconds": 1}})
    with pytest.raises(errors.StatusError) as taken:
        fault_set.add({"id": "a", "action": {"error": 500}})
    assert (taken.value.code, taken.value.message) == (409, 'fault rule "a" already exists')
    assert fault_set.remove("a").id == "a" and list(fault_set.rules) == ["fault-2"]
    with pytest.raises(errors.StatusError) as missing:
        fault_set.remove("a")
    assert (missing.value.code, missing.value.message) == (404, 'fault rule "a" not found')
    assert fault_set.clear() == 1 and not fault_set.rules and not fault_set.active


# ------------------------------------------------------------------ kube's error bodies
def status_of(action: dict, name: str = "x") -> dict:
    exc = rule(action=action).status_error(CM, name)
    return {**exc.status(), "headers": exc.headers}


def test_a_409_is_kubes_optimistic_concurrency_conflict():
    assert status_of({"error": 409}) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Operation cannot be fulfilled on configmaps "x": the object has been modified; please apply your changes to the latest version and try again',
        "reason": "Conflict", "code": 409, "details": {"name": "x", "kind": "configmaps"}, "headers": {},
    }  # fmt: skip


def test_500_503_and_504_are_worded_as_kube_apiserver_words_them():
    internal = status_of({"error": 500})
    assert (internal["reason"], internal["message"]) == ("InternalError", "Internal error occurred: fault injected by mockapi (rule fault-1)")
    assert internal["details"] == {"causes": [{"message": "fault injected by mockapi (rule fault-1)"}]}
    unavailable = status_of({"error": 503})
    assert (unavailable["reason"], unavailable["message"]) == ("ServiceUnavailable", "the server is currently unable to handle the request")
    timeout = status_of({"error": 504})
    assert (timeout["reason"], timeout["message"]) == ("Timeout", "Timeout: request did not complete within requested timeout - context deadline exceeded")
    assert "details" not in timeout and timeout["headers"] == {}


def test_reason_message_and_retry_after_override_the_defaults():
    status = status_of({"error": {"code": 500, "reason": "StorageError", "message": "etcdserver: leader changed", "retryAfterSeconds": 2}})
    assert (status["reason"], status["message"]) == ("StorageError", "etcdserver: leader changed")
    assert status["details"] == {"retryAfterSeconds": 2} and status["headers"] == {"Retry-After": "2"}
    throttled = status_of({"error": {"code": 429, "message": "slow down", "retryAfterSeconds": 5}})
    assert (throttled["reason"], throttled["details"], throttled["headers"]) == ("TooManyRequests", {"retryAfterSeconds": 5}, {"Retry-After": "5"})


def test_only_a_bare_429_is_the_in_flight_limiters_plain_text():
    assert rule(action={"error": 429}).plain_limiter
    assert not rule(action={"error": {"code": 429, "message": "slow down"}}).plain_limiter
    assert not rule(action={"error": 500}).plain_limiter


# ------------------------------------------------------------------ the store's one-shot faults
def test_compaction_sends_older_resource_versions_to_410_and_keeps_the_current_one():
    store = Store()
    for name in ("a", "b", "c"):
        store.create(CM, {"metadata": {"name": name, "namespace": "ns"}})
    assert store.compact() == 3 == store.oldest_resource_version
    with pytest.raises(errors.StatusError) as expired:
        store.events_since(CM, 2)
    assert (expired.value.code, expired.value.message) == (410, "too old resource version: 2 (3)")
    assert list(store.events_since(CM, 3)) == []
    store.create(CM, {"metadata": {"name": "d", "namespace": "ns"}})
    assert [e.obj.name for e in store.events_since(CM, 3)] == ["d"]


def test_closing_all_watchers_wakes_and_deregisters_each():
    store = Store()
    watchers = [store.watch(CM), store.watch(errors.GroupResource("", "pods"))]
    assert store.close_all_watchers() == 2
    assert all(w.closed and w.wakeup.is_set() for w in watchers) and store.watcher_count() == 0


# ------------------------------------------------------------------ through the dispatcher
@pytest.fixture
def server():
    return app_.build(Settings())


def call(server, method: str, path: str, **kwargs) -> httpx.Response:
    async def go():
        transport = httpx.ASGITransport(app=server.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://mockapi") as client:
            return await client.request(method, path, **kwargs)

    return asyncio.run(go())


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def test_without_rules_the_dispatcher_never_asks_for_a_match(server, monkeypatch):
    def fail(*args):
        raise AssertionError("consulted")

    monkeypatch.setattr(faults.FaultSet, "match", fail)
    assert call(server, "GET", CONFIGMAPS).status_code == 200


def test_an_error_rule_answers_before_the_handler_and_counts_in_metrics(server):
    added = call(server, "POST", "/mockapi/v1/faults", json={"match": {"verb": "create", "resource": "configmaps"}, "action": {"error": 409}, "count": 1})
    assert added.status_code == 201 and added.json()["id"] == "fault-1"
    refused = call(server, "POST", CONFIGMAPS, json={"metadata": {"name": "made"}})
    assert refused.status_code == 409
    assert refused.json()["message"].startswith('Operation cannot be fulfilled on configmaps "made": the object has been modified')
    assert call(server, "GET", f"{CONFIGMAPS}/made").status_code == 404  # not served
    assert call(server, "POST", CONFIGMAPS, json={"metadata": {"name": "made"}}).status_code == 201  # count 1: spent
    assert call(server, "GET", "/mockapi/v1/faults/fault-1").json()["hits"] == 1
    assert 'mockapi_faults_injected_total{action="error",rule="fault-1"} 1.0' in call(server, "GET", "/metrics").text


def test_a_bare_429_is_the_limiters_plain_text_with_retry_after(server):
    call(server, "POST", "/mockapi/v1/faults", json={"action": {"error": 429}})
    throttled = call(server, "GET", CONFIGMAPS)
    assert (throttled.status_code, throttled.text) == (429, "Too many requests, please try again later.\n")
    assert throttled.headers["retry-after"] == "1" and throttled.headers["content-type"] == "text/plain; charset=utf-8"


def test_latency_delays_the_request_then_serves_it(server):
    call(server, "POST", "/mockapi/v1/faults", json={"match": {"verb": "list"}, "action": {"latencySeconds": 0.2}})
    started = time.monotonic()
    assert call(server, "GET", CONFIGMAPS).status_code == 200
    assert time.monotonic() - started >= 0.2
    assert 'mockapi_faults_injected_total{action="latency",rule="fault-1"} 1.0' in call(server, "GET", "/metrics").text


def test_the_control_api_lists_removes_and_reset_clears_rules(server):
    for body in ({"id": "one", "action": {"error": 500}}, {"id": "two", "action": {"dropConnection": True}}):
        call(server, "POST", "/mockapi/v1/faults", json=body)
    assert [r["id"] for r in call(server, "GET", "/mockapi/v1/faults").json()["items"]] == ["one", "two"]
    assert call(server, "DELETE", "/mockapi/v1/faults/one").json()["id"] == "one"
    missing = call(server, "DELETE", "/mockapi/v1/faults/one")
    assert (missing.status_code, missing.json()["message"]) == (404, 'fault rule "one" not found')
    assert call(server, "POST", "/mockapi/v1/reset").status_code == 200
    assert call(server, "GET", "/mockapi/v1/faults").json()["items"] == []
    bad_rule = call(server, "POST", "/mockapi/v1/faults", json={"action": {"error": 418}})
    assert bad_rule.status_code == 400 and bad_rule.json()["details"]["causes"][0]["field"] == "action.error.code"
    assert call(server, "DELETE", "/mockapi/v1/faults").json() == {"deleted": 0}


def test_compact_through_the_control_api_expires_an_older_list(server):
    rv = call(server, "GET", CONFIGMAPS).json()["metadata"]["resourceVersion"]
    call(server, "POST", CONFIGMAPS, json={"metadata": {"name": "after"}})
    compacted = call(server, "POST", "/mockapi/v1/faults/compact").json()["oldestResourceVersion"]
    assert int(compacted) == int(rv) + 1
    expired = call(server, "GET", CONFIGMAPS, params={"resourceVersion": rv, "resourceVersionMatch": "Exact"})
    assert expired.status_code == 410 and orjson.loads(expired.content)["reason"] == "Expired"


def test_uvicorns_abandoned_response_line_is_kept_out_only_for_dropped_requests():
    quiet = injection._QuietDrops()
    record = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, injection._ABANDONED, (), None)
    assert quiet.filter(record)
    token = injection._DROPPED.set(True)
    try:
        assert not quiet.filter(record)
        other = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application\n", (), None)
        assert quiet.filter(other)
    finally:
        injection._DROPPED.reset(token)
