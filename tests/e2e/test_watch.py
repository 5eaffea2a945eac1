"""Watch through the Python client's watch.Watch().stream and raw HTTP."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from kubernetes import watch
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import GROUP, VERSION, device_claim

pytestmark = pytest.mark.e2e


def stream(custom, **kwargs):
    return watch.Watch().stream(custom.list_namespaced_custom_object, GROUP, VERSION, "default", "deviceclaims", **kwargs)


def test_watch_without_resource_version_starts_with_synthetic_added_events(custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("a"))
    events = [(e["type"], e["object"]["metadata"]["name"]) for e in stream(custom, timeout_seconds=1)]
    assert events == [("ADDED", "a")]


def test_watch_from_a_resource_version_replays_changes_without_duplicates(custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("a"))
    rv = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims")["metadata"]["resourceVersion"]
    custom.patch_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "a", {"metadata": {"labels": {"x": "1"}}})
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("b"))
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "a")
    events = [(e["type"], e["object"]["metadata"]["name"]) for e in stream(custom, resource_version=rv, timeout_seconds=1)]
    assert events == [("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]


def test_live_events_arrive_while_watching(custom):
    received = []
    w = watch.Watch()

    def consume():
        for event in w.stream(custom.list_namespaced_custom_object, GROUP, VERSION, "default", "deviceclaims", timeout_seconds=5):
            received.append((event["type"], event["object"]["metadata"]["name"]))
            if len(received) == 2:
                w.stop()

    thread = threading.Thread(target=consume)
    thread.start()
    time.sleep(0.3)
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("live"))
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "live")
    thread.join(10)
    assert received == [("ADDED", "live"), ("DELETED", "live")]


def test_watch_from_an_expired_resource_version_raises_410_in_the_client(make_live):
    from kubernetes import client, config

    live = make_live(history_size=3)
    custom = client.CustomObjectsApi(config.new_client_from_config(config_file=str(live.kubeconfig)))
    for i in range(6):
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim(f"c{i}"))
    with pytest.raises(ApiException) as caught:
        list(stream(custom, resource_version="1", timeout_seconds=1))
    assert caught.value.status == 410


def test_expired_resource_version_is_a_200_with_one_error_event(make_live):
    live = make_live(history_size=2)
    with httpx.Client(base_url=live.url) as http:
        for i in range(4):
            http.post(f"/apis/{GROUP}/{VERSION}/namespaces/default/deviceclaims", json=device_claim(f"c{i}"))
        response = http.get(f"/apis/{GROUP}/{VERSION}/deviceclaims", params={"watch": "true", "resourceVersion": "1"})
    assert response.status_code == 200
    events = [json.loads(line) for line in response.text.splitlines()]
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410 and events[0]["object"]["reason"] == "Expired"
    assert events[0]["object"]["message"].startswith("too old resource version: 1 (")


def test_label_selector_watch_sends_deleted_when_an_object_stops_matching(custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("a", tier="gold"))
    rv = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims")["metadata"]["resourceVersion"]
    custom.patch_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "a", {"metadata": {"labels": {"tier": "silver"}}})
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("b", tier="silver"))
    events = [(e["type"], e["object"]["metadata"]["name"]) for e in stream(custom, resource_version=rv, label_selector="tier=gold", timeout_seconds=1)]
    assert events == [("DELETED", "a")]


def test_field_selector_watch_sees_only_the_named_object(custom):
    for name in ("a", "b"):
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim(name))
    events = [e["object"]["metadata"]["name"] for e in stream(custom, field_selector="metadata.name=b", timeout_seconds=1)]
    assert events == ["b"]


def test_all_namespaces_watch_covers_every_namespace(custom, core):
    core.create_namespace({"metadata": {"name": "team-b"}})
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device_claim("a"))
    custom.create_namespaced_custom_object(GROUP, VERSION, "team-b", "deviceclaims", device_claim("b", "team-b"))
    w = watch.Watch().stream(custom.list_cluster_custom_object, GROUP, VERSION, "deviceclaims", timeout_seconds=1)
    assert sorted((e["object"]["metadata"]["namespace"], e["object"]["metadata"]["name"]) for e in w) == [("default", "a"), ("team-b", "b")]


def test_bookmarks_only_when_asked_and_send_initial_events_ends_with_the_marker(make_live):
    live = make_live(bookmark_interval=0.2)
    with httpx.Client(base_url=live.url, timeout=10) as http:
        http.post(f"/apis/{GROUP}/{VERSION}/namespaces/default/deviceclaims", json=device_claim("a"))
        plain = http.get(f"/apis/{GROUP}/{VERSION}/deviceclaims", params={"watch": "1", "timeoutSeconds": "1"})
        assert [json.loads(l)["type"] for l in plain.text.splitlines()] == ["ADDED"]
        with_bookmarks = http.get(f"/apis/{GROUP}/{VERSION}/deviceclaims", params={"watch": "1", "timeoutSeconds": "1", "allowWatchBookmarks": "true"})
        types = [json.loads(l)["type"] for l in with_bookmarks.text.splitlines()]
        assert types[0] == "ADDED" and "BOOKMARK" in types[1:]
        initial = http.get(
            f"/apis/{GROUP}/{VERSION}/deviceclaims",
            params={"watch": "1", "timeoutSeconds": "1", "allowWatchBookmarks": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"},
        )
        events = [json.loads(l) for l in initial.text.splitlines()]
        assert events[0]["type"] == "ADDED" and events[1]["type"] == "BOOKMARK"
        assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        assert events[1]["object"]["kind"] == "DeviceClaim"


def test_send_initial_events_requires_not_older_than(http):
    response = http.get(f"/apis/{GROUP}/{VERSION}/deviceclaims", params={"watch": "1", "sendInitialEvents": "true", "allowWatchBookmarks": "true"})
    assert response.status_code == 400


def test_timeout_seconds_ends_the_stream(http):
    started = time.monotonic()
    response = http.get(f"/apis/{GROUP}/{VERSION}/deviceclaims", params={"watch": "true", "timeoutSeconds": "1", "resourceVersion": "1"})
    assert response.status_code == 200 and 0.9 < time.monotonic() - started < 8  # ended by its timeout (not by the client's 10 s)


def test_closed_watches_are_deregistered(live):
    store = live.server.store
    with httpx.Client(base_url=live.url, timeout=10) as http:
        for _ in range(50):
            with http.stream("GET", f"/apis/{GROUP}/{VERSION}/deviceclaims", params={"watch": "true"}) as response:
                assert response.status_code == 200
    deadline = time.monotonic() + 2
    while store.watcher_count() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store.watcher_count() == 0
