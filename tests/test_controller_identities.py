"""The built-in controllers' identities in-process (mockapi/auth/identities.py): the packaged roles
are schemas/rbac's; in RBAC mode each LocalClient call is authorized as its HTTP request would be
and bootstrapped roles suffice; with the audit log its writes are audited under the controller's
user; in the default mode the client has no guard at all."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mockapi import app, errors
from mockapi.auth import identities
from mockapi.auth.audit import AuditLog, parse_policy
from mockapi.client import PODS, Kind, LocalClient
from mockapi.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
RBAC_DIR = ROOT / "schemas" / "rbac"
SECRETS = Kind("v1", "Secret")
CLAIMS = Kind("devmgmtproto.k8s.io/v1alpha1", "DeviceClaim")


def run(coroutine):
    return asyncio.run(coroutine)


def test_the_packaged_roles_are_schemas_rbac_byte_for_byte():
    packaged = {p.name: p.read_bytes() for p in identities.ROLES_DIR.glob("*.yaml")}
    source = {p.name: p.read_bytes() for p in RBAC_DIR.glob("*.yaml")}
    assert packaged == source, "copy schemas/rbac/*.yaml to mockapi/auth/controller_roles/"


def test_each_identity_is_a_service_account_of_schemas_rbac():
    accounts = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in identities.manifests() if o["kind"] == "ServiceAccount"}
    assert {(identities.NAMESPACE, i.user.name.rsplit(":", 1)[1]) for i in identities.ALL} == accounts
    for identity in identities.ALL:
        assert identity.user.groups == ("system:serviceaccounts", "system:serviceaccounts:devmgmtproto-system", "system:authenticated")
        assert identity.user_agent == "mockapi-" + identity.user.name.rsplit(":", 1)[1]


@pytest.fixture(scope="module")
def rbac_server():
    return app.build(Settings(authorization_mode="RBAC", allocator=False, scheduler=False))


def test_rbac_mode_bootstraps_the_controller_roles_once(rbac_server):
    registry = rbac_server.registry
    roles = registry.types.by_kind("rbac.authorization.k8s.io", "v1", "ClusterRole")
    assert registry.store.get(roles.group_resource, "", "devmgmtproto:scheduler") is not None
    assert identities.bootstrap(registry) == 0  # what is there is kept (an admin's edits too)


def test_a_controller_may_what_its_role_allows_and_gets_kubes_403_otherwise(rbac_server):
    client = app.local_client(rbac_server, identities.SCHEDULER)
    assert run(client.list(PODS, "default"))[0] == []
    with pytest.raises(errors.StatusError) as caught:
        run(client.list(SECRETS, "default"))
    assert (caught.value.code, caught.value.reason) == (403, "Forbidden")
    assert caught.value.message == 'secrets is forbidden: User "system:serviceaccount:devmgmtproto-system:scheduler" cannot list resource "secrets" in API group "" in the namespace "default"'
    with pytest.raises(errors.StatusError) as caught:
        run(client.bind("default", "web", "", "node-1"))  # the pod does not exist: authorized first
    assert caught.value.code == 404
    claims = app.local_client(rbac_server, identities.KUBELET)
    with pytest.raises(errors.StatusError) as caught:
        run(claims.patch(CLAIMS, "default", "c", {"metadata": {"labels": {"a": "b"}}}))
    assert caught.value.message == 'deviceclaims.devmgmtproto.k8s.io "c" is forbidden: User "system:serviceaccount:devmgmtproto-system:kubelet" cannot patch resource "deviceclaims" in API group "devmgmtproto.k8s.io" in the namespace "default"'


def test_a_refused_watch_lists_nothing(rbac_server):
    client = app.local_client(rbac_server, identities.ALLOCATOR)

    async def first():
        async for event in client.watch(SECRETS):
            return event

    with pytest.raises(errors.StatusError) as caught:
        run(first())
    assert "cannot list resource \"secrets\" in API group \"\" at the cluster scope" in caught.value.message


def test_writes_are_audited_under_the_controllers_user_and_reads_are_not():
    server = app.build(Settings(allocator=False, scheduler=False))
    log = AuditLog(parse_policy({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "RequestResponse"}]}))
    client = LocalClient(server.registry, identities.KUBELET, audit=log)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    run(client.create(Kind("v1", "Node"), node))
    run(client.get(Kind("v1", "Node"), "", "n1"))
    with pytest.raises(errors.StatusError):
        run(client.delete(PODS, "default", "absent"))
    events = log.events()
    assert [(e["stage"], e["verb"], e["responseStatus"]["code"] if "responseStatus" in e else None) for e in events] == [
        ("RequestReceived", "create", None), ("ResponseComplete", "create", 201),
        ("RequestReceived", "delete", None), ("ResponseComplete", "delete", 404),
    ]  # fmt: skip
    created = events[1]
    assert created["user"]["username"] == "system:serviceaccount:devmgmtproto-system:kubelet"
    assert (created["userAgent"], created["requestURI"], created["objectRef"]) == ("mockapi-kubelet", "/api/v1/nodes", {"resource": "nodes", "apiVersion": "v1"})
    assert created["requestObject"] == node and created["responseObject"]["metadata"]["name"] == "n1"
    assert created["annotations"] == {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
    assert events[3]["responseStatus"]["reason"] == "NotFound" and events[3]["requestURI"] == "/api/v1/namespaces/default/pods/absent"


def test_a_policy_can_leave_the_controllers_out():
    server = app.build(Settings(allocator=False, scheduler=False))
    policy = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "None", "userGroups": ["system:serviceaccounts"]}, {"level": "Metadata"}]}
    log = AuditLog(parse_policy(policy))
    run(LocalClient(server.registry, identities.KUBELET, audit=log).create(Kind("v1", "Node"), {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}))
    assert log.events() == []


def test_the_default_mode_builds_no_guard():
    server = app.build(Settings(allocator=False, scheduler=False))
    client = app.local_client(server, identities.ALLOCATOR)
    assert client._guard is None and client.identity is identities.ALLOCATOR
    authenticated = app.build(Settings(allocator=False, scheduler=False, authentication=True))
    assert app.local_client(authenticated, identities.ALLOCATOR)._guard is None  # AlwaysAllow, no audit log: nothing to check


def test_an_unread_patch_is_audited_as_its_http_twin_with_the_answer():
    server = app.build(Settings(allocator=False, scheduler=False))
    log = AuditLog(parse_policy({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "RequestResponse"}]}))
    client = LocalClient(server.registry, identities.KUBELET, audit=log)
    run(client.create(Kind("v1", "Node"), {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))
    assert run(client.patch_unread(Kind("v1", "Node"), "", "n1", {"metadata": {"labels": {"a": "b"}}})) is None
    patched = log.events()[-1]
    assert (patched["stage"], patched["verb"], patched["requestURI"]) == ("ResponseComplete", "patch", "/api/v1/nodes/n1")
    assert patched["responseObject"]["metadata"]["labels"] == {"a": "b"}
