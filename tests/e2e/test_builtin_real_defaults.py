"""The recorded `kubectl apply` exchanges of ``tests/manifests/real-responses/`` replayed end to
end: the real kubectl applies what was sent to a running mockapi, ``kubectl get -o json`` reads it
back, and the result is compared with what the real server returned, with the unit test's rules
(``tests/test_builtin_real_defaults.py``). Three kubectl calls for all samples on one server."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from tests.conftest import running
from tests.test_builtin_real_defaults import SAMPLES, SERVED_AS, differences

pytestmark = pytest.mark.e2e
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# What `kubectl apply` sent (its last-applied annotation on the sent object), compared whole.
APPLIED = [(name, sample) for name, sample in SAMPLES if LAST_APPLIED in (sample["sent"]["metadata"].get("annotations") or {}) and not sample.get("compared")]


@pytest.fixture(scope="module")
def live():
    with running() as server:
        yield server


def _without_last_applied(obj: dict) -> dict:
    """kubectl writes its own last-applied annotation (today's kubectl, the served apiVersion);
    the unit test compares the recorded one."""
    obj = copy.deepcopy(obj)
    annotations = obj["metadata"].get("annotations") or {}
    annotations.pop(LAST_APPLIED, None)
    if not annotations:
        obj["metadata"].pop("annotations", None)
    return obj


def test_kubectl_apply_of_what_was_sent_gives_what_the_real_server_returned(kubectl):
    assert len(APPLIED) >= 8
    documents = []
    for _, sample in APPLIED:
        sent = _without_last_applied(sample["sent"])
        sent["apiVersion"] = SERVED_AS.get(sent["apiVersion"], sent["apiVersion"])
        documents.append(sent)
    for namespace in sorted({doc["metadata"]["namespace"] for doc in documents if doc["metadata"].get("namespace", "default") != "default"}):
        kubectl("create", "namespace", namespace)
    manifest = yaml.safe_dump_all(documents, sort_keys=False)
    kubectl("apply", "-f", "-", stdin=manifest)
    items = json.loads(kubectl("get", "-f", "-", "-o", "json", stdin=manifest).stdout)["items"]
    found = {}
    for (name, sample), item in zip(APPLIED, items, strict=True):
        assert item["metadata"]["annotations"][LAST_APPLIED]  # kubectl's three-way merge has its record
        problems = differences(name, _without_last_applied(sample["returned"]), _without_last_applied(item))
        if problems:
            found[name] = problems
    assert not found, json.dumps(found, indent=1)
