"""Table cells: JSONPath as kube evaluates it, Go's HumanDuration, core kinds' computed columns."""

from datetime import datetime, timezone

import pytest

from mockapi import jsonpath
from mockapi.registry import printers

NOW = datetime(2024, 1, 1, tzinfo=timezone.utc)
CLAIM = {"status": {"conditions": [{"type": "Other", "status": "False"}, {"type": "Allocated", "status": "True", "reason": "Allocated"}]}, "items": [1, 2]}


@pytest.mark.parametrize(
    "path, expected",
    [
        ('.status.conditions[?(@.type=="Allocated")].status', ["True"]),
        ("{.status.conditions[*].type}", ["Other", "Allocated"]),
        (".status.conditions[-1].reason", ["Allocated"]),
        ("$.items[0]", [1]),
        ("..reason", ["Allocated"]),
        (".status['conditions'][0].status", ["False"]),
        (".missing.field", []),
        ('.status.conditions[?(@.reason)].type', ["Allocated"]),
    ],
)
def test_jsonpath_finds_what_kube_finds(path, expected):
    assert jsonpath.compile(path).find(CLAIM) == expected


def test_jsonpath_rejects_what_it_cannot_parse():
    with pytest.raises(jsonpath.JSONPathError):
        jsonpath.compile(".a[?(@.b ~ 1)]")


@pytest.mark.parametrize(
    "seconds, text",
    [(-5, "<invalid>"), (-1, "0s"), (59, "59s"), (119, "119s"), (120, "2m"), (150, "2m30s"), (600, "10m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (9 * 3600, "9h"), (50 * 3600, "2d2h"), (30 * 86400, "30d"), (3 * 365 * 86400 + 86400, "3y1d"), (9 * 365 * 86400, "9y")],
)
def test_human_duration_matches_go(seconds, text):
    assert printers.human_duration(seconds) == text


def test_pod_cells_count_ready_containers_and_restarts():
    from mockapi.registry.printers import _pod_cells

    pod = {
        "metadata": {"name": "p", "creationTimestamp": "2023-12-31T23:59:00Z"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
        "status": {"phase": "Running", "podIP": "10.0.0.1", "containerStatuses": [{"ready": True, "restartCount": 2}, {"ready": False, "restartCount": 1}]},
    }
    assert _pod_cells(pod, NOW)[:7] == ["p", "1/2", "Running", 3, "60s", "10.0.0.1", "n1"]
