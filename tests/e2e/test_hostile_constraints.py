"""No claim or class can stall the API (issue 8, item 2): a constraint over DRA's cost limit is
refused at admission (422 Forbidden naming the field), and one that passes admission but is slow
is evaluated off the event loop — ``/readyz`` keeps answering while the allocator retries it."""

from __future__ import annotations

import concurrent.futures
import time

import httpx
import pytest

from tests.e2e.conftest import GROUP, VERSION

pytestmark = pytest.mark.e2e
BASE = f"/apis/{GROUP}/{VERSION}"
RANGE = "[" + ",".join(str(i) for i in range(99)) + "]"
OVER_LIMIT = f"{RANGE}.all(i, {RANGE}.all(j, !'{'a' * 4000}'.contains(device.s)))"  # estimated ~27.5 M
SLOW = f"{RANGE}.all(i, {RANGE}.all(j, " + " && ".join(f"device.n + {k} > 0" for k in range(20)) + "))"  # ~815 k: ~60 ms a device


def _object(kind: str, name: str, spec: dict, namespace: str | None = None) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": meta, "spec": spec}


def _refusal(response: httpx.Response) -> list[dict]:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["reason"] == "Invalid"
    return body["details"]["causes"]


def test_constraints_over_the_cost_limit_are_refused_with_422_naming_the_field(http):
    claim = _object("DeviceClaim", "too-complex", {"claims": [{"oneOf": [{"deviceClass": "gpu"}, {"deviceClass": "gpu", "constraints": OVER_LIMIT}]}]}, "default")
    causes = _refusal(http.post(f"{BASE}/namespaces/default/deviceclaims", json=claim))
    assert causes == [{"reason": "FieldValueForbidden", "message": "Forbidden: too complex, exceeds cost limit", "field": "spec.claims[0].oneOf[1].constraints"}]
    device_class = _object("DeviceClass", "too-complex", {"driver": "example.com-foozer", "deviceType": "gpu", "constraints": OVER_LIMIT})
    causes = _refusal(http.post(f"{BASE}/deviceclasses", json=device_class))
    assert [c["field"] for c in causes] == ["spec.constraints"]
    assert http.get(f"{BASE}/namespaces/default/deviceclaims/too-complex").status_code == 404  # nothing changed


def test_a_constraint_within_the_limit_is_accepted_and_a_stored_one_stays_writable(http):
    claim = _object("DeviceClaim", "slow", {"claims": [{"deviceClass": "gpu", "constraints": SLOW}]}, "default")
    assert http.post(f"{BASE}/namespaces/default/deviceclaims", json=claim).status_code == 201
    patch = {"metadata": {"labels": {"touched": "yes"}}}
    response = http.patch(f"{BASE}/namespaces/default/deviceclaims/slow", json=patch, headers={"Content-Type": "application/merge-patch+json"})
    assert response.status_code == 200, response.text


def test_a_slow_claim_that_passes_admission_cannot_stall_readyz_while_it_is_retried(make_live):
    live = make_live(allocator=True, allocation_budget_seconds=1.0)  # a long budget: inline, it would hold the loop ~1 s
    with httpx.Client(base_url=live.url, timeout=30) as http:
        spec = {"driver": "slow.example.com", "deviceType": "gpu"}
        assert http.post(f"{BASE}/deviceclasses", json=_object("DeviceClass", "slow", spec)).status_code == 201
        attributes = [{"name": "n", "intValue": 1}]
        devices = [{"name": f"dev-{i:02d}", "attributes": attributes} for i in range(48)]
        pool = _object("DevicePool", "slow", {"driver": "slow.example.com", "nodeName": "node-a", "devices": devices})
        assert http.post(f"{BASE}/devicepools", json=pool).status_code == 201
        claim = _object("DeviceClaim", "slow", {"claims": [{"deviceClass": "slow", "constraints": SLOW}]}, "default")
        assert http.post(f"{BASE}/namespaces/default/deviceclaims", json=claim).status_code == 201
        slowest, condition, deadline = 0.0, None, time.monotonic() + 20
        while condition is None and time.monotonic() < deadline:
            for _ in range(20):
                started = time.perf_counter()
                assert http.get("/readyz").status_code == 200
                slowest = max(slowest, time.perf_counter() - started)
            status = http.get(f"{BASE}/namespaces/default/deviceclaims/slow").json().get("status") or {}
            condition = next((c for c in status.get("conditions") or [] if c["type"] == "Allocated"), None)
        with concurrent.futures.ThreadPoolExecutor(1) as other:  # explain plans off the loop too
            explained = other.submit(httpx.get, f"{live.url}/mockapi/v1/explain/default/slow", timeout=30)
            while not explained.done():
                started = time.perf_counter()
                assert http.get("/readyz").status_code == 200
                slowest = max(slowest, time.perf_counter() - started)
    assert slowest < 0.2, f"/readyz took {slowest:.3f}s while the claim was tried or explained"
    assert condition is not None and condition["reason"] == "AllocationTimeout", condition
    assert "did not finish on device slow/dev-" in condition["message"]
    assert explained.result().json()["result"]["reason"] == "AllocationTimeout"
