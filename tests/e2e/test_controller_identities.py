"""The built-in controllers under their own identities (mockapi/auth/identities.py), end to end: a
server with ``--authorization-mode=RBAC``, generated certificates and authentication (and the audit
log), driven by the official kubernetes client as the admin. The allocator allocates a claim and the
scheduler binds a pod with only the roles of schemas/rbac; a verb taken out of a controller's
ClusterRole makes that controller's call a 403 its usual error path shows; the audit log names the
controllers' users."""

from __future__ import annotations

import gc
import time

import pytest
from kubernetes import client, watch

from mockapi.auth import identities
from mockapi.testing import MockAPIServer
from tests.e2e.conftest import GROUP, VERSION

pytestmark = pytest.mark.e2e
RBAC = "rbac.authorization.k8s.io"
DEV = f"{GROUP}/{VERSION}"
NODE = "identities-node"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    audit_log = tmp_path_factory.mktemp("audit") / "audit.log"
    with MockAPIServer(rbac=True, audit_log_path=str(audit_log), audit_log_size=5000) as running:
        api = running.api_client()
        core = client.CoreV1Api(api)
        core.create_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}})
        custom = client.CustomObjectsApi(api)
        custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", {"apiVersion": DEV, "kind": "DeviceClass", "metadata": {"name": "one"}, "spec": {"driver": "example.com-foozer", "deviceType": "gpu"}})
        pool = {"driver": "example.com-foozer", "nodeName": NODE, "devices": [{"name": f"dev-{i}"} for i in range(4)]}
        custom.create_cluster_custom_object(GROUP, VERSION, "devicepools", {"apiVersion": DEV, "kind": "DevicePool", "metadata": {"name": f"{NODE}-pool"}, "spec": pool})
        yield running, api
        gc.collect()  # a refused call's ApiException holds its connection until collected
        api.rest_client.pool_manager.clear()
        api.close()


def wait(list_call, name: str, predicate, *args, timeout: int = 20) -> dict:
    """Watch objects named ``name`` until ``predicate(obj)`` (the current state first)."""
    stream = watch.Watch()
    for event in stream.stream(list_call, *args, field_selector=f"metadata.name={name}", timeout_seconds=timeout):
        obj = event["object"]
        obj = obj if isinstance(obj, dict) else client.ApiClient().sanitize_for_serialization(obj)
        if predicate(obj):
            stream.stop()
            return obj
    raise AssertionError(f"{name} did not get there in {timeout}s")


def allocated(claim: dict) -> dict | None:
    return next((c for c in (claim.get("status") or {}).get("conditions") or [] if c["type"] == "Allocated"), None)


def pod(name: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}


def audited(running, user: str, verb: str, resource: str, subresource: str = "") -> list[dict]:
    return [
        e for e in running.audit_events()
        if e["stage"] == "ResponseComplete" and e["user"].get("username") == user and e["verb"] == verb
        and e.get("objectRef", {}).get("resource") == resource and e.get("objectRef", {}).get("subresource", "") == subresource
    ]  # fmt: skip


def test_the_controller_roles_are_bootstrapped(server):
    running, api = server
    rbac = client.RbacAuthorizationV1Api(api)
    names = {r.metadata.name for r in rbac.list_cluster_role().items}
    assert {"devmgmtproto:allocator", "devmgmtproto:scheduler", "devmgmtproto:pod-claims-controller", "devmgmtproto:kubelet", "devmgmtproto:garbage-collector"} <= names
    accounts = {a.metadata.name for a in client.CoreV1Api(api).list_namespaced_service_account(identities.NAMESPACE).items}
    assert {"allocator", "scheduler", "pod-claims-controller", "kubelet", "garbage-collector"} <= accounts


def test_the_allocator_allocates_a_claim_as_itself(server):
    running, api = server
    custom = client.CustomObjectsApi(api)
    body = {"apiVersion": DEV, "kind": "DeviceClaim", "metadata": {"name": "mine", "namespace": "default"}, "spec": {"claims": [{"deviceClass": "one"}]}}
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", body)
    claim = wait(custom.list_namespaced_custom_object, "mine", lambda c: allocated(c) is not None, GROUP, VERSION, "default", "deviceclaims")
    assert (allocated(claim)["status"], allocated(claim)["reason"]) == ("True", "Allocated"), allocated(claim)
    writes = audited(running, identities.ALLOCATOR.user.name, "update", "deviceclaims", "status") + audited(running, identities.ALLOCATOR.user.name, "patch", "deviceclaims", "status")
    assert writes, "the allocator's status write is audited under its user"
    event = writes[-1]
    assert event["userAgent"] == "mockapi-allocator" and event["responseStatus"]["code"] == 200
    assert event["user"]["groups"] == ["system:serviceaccounts", f"system:serviceaccounts:{identities.NAMESPACE}", "system:authenticated"]
    assert event["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert 'ClusterRole "devmgmtproto:allocator"' in event["annotations"]["authorization.k8s.io/reason"]


def test_the_scheduler_binds_a_pod_as_itself(server):
    running, api = server
    core = client.CoreV1Api(api)
    core.create_namespaced_pod("default", pod("placed"))
    found = wait(core.list_namespaced_pod, "placed", lambda p: (p.get("spec") or {}).get("nodeName"), "default")
    assert found["spec"]["nodeName"] == NODE
    bindings = audited(running, identities.SCHEDULER.user.name, "create", "pods", "binding")
    assert [(e["objectRef"]["name"], e["userAgent"], e["responseStatus"]["code"]) for e in bindings] == [("placed", "mockapi-scheduler", 201)]
    assert bindings[0]["requestURI"] == "/api/v1/namespaces/default/pods/placed/binding"


def test_a_verb_taken_from_the_schedulers_role_is_a_403_it_reports(server):
    running, api = server
    rbac, core = client.RbacAuthorizationV1Api(api), client.CoreV1Api(api)
    role = rbac.read_cluster_role("devmgmtproto:scheduler")
    original = [r.to_dict() for r in role.rules]
    rules = [{"apiGroups": r["api_groups"], "resources": r["resources"], "verbs": r["verbs"]} for r in original if r["resources"] != ["pods/binding"]]
    assert len(rules) == len(original) - 1
    rbac.patch_cluster_role("devmgmtproto:scheduler", {"rules": rules})
    try:
        core.create_namespaced_pod("default", pod("refused"))
        message = (
            'pods "refused" is forbidden: User "system:serviceaccount:devmgmtproto-system:scheduler" '
            'cannot create resource "pods/binding" in API group "" in the namespace "default"'
        )
        found = wait(core.list_namespaced_pod, "refused", lambda p: any(message in (c.get("message") or "") for c in (p.get("status") or {}).get("conditions") or []), "default")
        assert not found["spec"].get("nodeName")
        condition = next(c for c in found["status"]["conditions"] if c["type"] == "PodScheduled")
        assert (condition["status"], condition["reason"]) == ("False", "SchedulerError")
        events = core.list_namespaced_event("default", field_selector="involvedObject.name=refused").items
        assert any(e.reason == "FailedScheduling" and message in e.message for e in events)
        refusals = audited(running, identities.SCHEDULER.user.name, "create", "pods", "binding")
        refused = [e for e in refusals if e["objectRef"]["name"] == "refused"]
        assert refused and refused[0]["responseStatus"]["code"] == 403 and refused[0]["responseStatus"]["reason"] == "Forbidden"
        assert refused[0]["annotations"]["authorization.k8s.io/decision"] == "forbid"
    finally:
        put_back = [{"apiGroups": r["api_groups"], "resources": r["resources"], "verbs": r["verbs"]} for r in original]
        rbac.patch_cluster_role("devmgmtproto:scheduler", {"rules": put_back})
    # the role back, the scheduler binds the pod on its next attempt (after its backoff)
    found = wait(core.list_namespaced_pod, "refused", lambda p: (p.get("spec") or {}).get("nodeName"), "default", timeout=30)
    assert found["spec"]["nodeName"] == NODE


def test_a_verb_taken_from_the_allocators_role_is_a_403_it_logs(server, caplog):
    running, api = server
    rbac, custom = client.RbacAuthorizationV1Api(api), client.CustomObjectsApi(api)
    role = rbac.read_cluster_role("devmgmtproto:allocator")
    original = [{"apiGroups": r.api_groups, "resources": r.resources, "verbs": r.verbs} for r in role.rules]
    # the allocator may no longer write claims' status: it sets its finalizer, is refused the status
    rules = [r for r in original if r["resources"] != ["deviceclaims/status", "deviceprivilegedclaims/status"]]
    assert len(rules) == len(original) - 1
    rbac.patch_cluster_role("devmgmtproto:allocator", {"rules": rules})
    message = (
        'deviceclaims.devmgmtproto.k8s.io "held" is forbidden: User "system:serviceaccount:devmgmtproto-system:allocator" '
        'cannot update resource "deviceclaims/status" in API group "devmgmtproto.k8s.io" in the namespace "default"'
    )
    try:
        body = {"apiVersion": DEV, "kind": "DeviceClaim", "metadata": {"name": "held", "namespace": "default"}, "spec": {"claims": [{"deviceClass": "one"}]}}
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", body)
        deadline = time.monotonic() + 10
        while not any("reconciling" in r.getMessage() and message in (r.exc_text or str(r.exc_info and r.exc_info[1])) for r in caplog.records):
            assert time.monotonic() < deadline, "the allocator did not log the refusal"
            time.sleep(0.05)
        refused = [e for e in audited(running, identities.ALLOCATOR.user.name, "update", "deviceclaims", "status") if e["objectRef"]["name"] == "held"]
        assert refused and refused[0]["responseStatus"]["code"] == 403 and refused[0]["responseStatus"]["message"] == message
        claim = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "held")
        assert allocated(claim) is None
    finally:
        rbac.patch_cluster_role("devmgmtproto:allocator", {"rules": original})
    # the role back, the allocator allocates the claim after its backoff
    claim = wait(custom.list_namespaced_custom_object, "held", lambda c: allocated(c) is not None, GROUP, VERSION, "default", "deviceclaims", timeout=30)
    assert allocated(claim)["reason"] == "Allocated"
