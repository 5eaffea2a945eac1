"""set_label against mockapi, with faults injected: each retry path, tested without a real cluster.

Runs with the mockapi pytest plugin: ``mockapi`` is a server reset before each test (rules
included), ``kube_client`` a kubernetes ApiClient for it.
"""

from __future__ import annotations

import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from controller import set_label


@pytest.fixture
def core(kube_client):
    api = client.CoreV1Api(kube_client)
    api.create_namespaced_config_map("default", {"metadata": {"name": "settings"}})
    return api


def labels(core) -> dict:
    return core.read_namespaced_config_map("settings", "default").metadata.labels


def test_conflicts_are_retried_with_a_fresh_read(mockapi, core):
    with mockapi.faults.inject(verb="patch", resource="configmaps", error=409, count=2) as conflicts:
        assert set_label(core, "default", "settings", "tier", "gold") == 3
        assert conflicts.hits == 2
    assert labels(core) == {"tier": "gold"}


def test_throttling_waits_as_long_as_retry_after_says(mockapi, core):
    mockapi.faults.inject(verb="patch", resource="configmaps", error=429, retry_after=1, count=1)
    started = time.monotonic()
    assert set_label(core, "default", "settings", "tier", "gold") == 2
    assert time.monotonic() - started >= 1


def test_a_server_error_and_a_dropped_connection_are_retried(mockapi, core):
    mockapi.faults.inject(verb="get", resource="configmaps", name="settings", error=503, count=1)
    mockapi.faults.inject(verb="patch", resource="configmaps", drop_connection=True, count=1)
    assert set_label(core, "default", "settings", "tier", "gold") == 3
    # The dropped PATCH was applied before the connection broke; the retry patched again.
    assert [r["code"] for r in mockapi.requests(verb="patch")] == [200, 200]


def test_it_gives_up_after_five_attempts(mockapi, core):
    with mockapi.faults.inject(verb="patch", resource="configmaps", error=500) as failing:
        with pytest.raises(ApiException) as failed:
            set_label(core, "default", "settings", "tier", "gold")
        assert failed.value.status == 500 and failing.hits == 5


def test_an_invalid_label_is_an_answer_not_an_accident(mockapi, core):
    with pytest.raises(ApiException) as invalid:
        set_label(core, "default", "settings", "tier", "not gold!")
    assert invalid.value.status == 422
    assert len(mockapi.requests(verb="patch")) == 1
