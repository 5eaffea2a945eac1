"""schemas/rbac/: the roles our controllers would run under on a real cluster. Each file loads
(kube's validation), and each controller's ServiceAccount may make every call its code makes
through the Client (the table below, from grepping their ``client.`` uses) and no more than needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockapi import app, loader
from mockapi.auth.authz import Attributes
from mockapi.auth.rbac import RBACAuthorizer
from mockapi.auth.user import UserInfo

RBAC_DIR = Path(__file__).resolve().parent.parent / "schemas" / "rbac"
DEV = "devmgmtproto.k8s.io"
READ = ("get", "list", "watch")

CALLS = {
    # controller: [(verbs, group, resource, subresource)]
    "allocator": [
        (READ + ("patch",), DEV, "deviceclaims", ""), (READ + ("patch",), DEV, "deviceprivilegedclaims", ""),
        (("update", "patch"), DEV, "deviceclaims", "status"), (("update",), DEV, "deviceprivilegedclaims", "status"),
        (READ, DEV, "devicepools", ""), (("patch",), DEV, "devicepools", "status"), (READ, DEV, "deviceclasses", ""),
        (READ, "", "nodes", ""), (("get",), "", "namespaces", ""), (("get",), "", "configmaps", ""),
        (READ, "apiextensions.k8s.io", "customresourcedefinitions", ""), (("create",), "", "events", ""),
    ],
    "scheduler": [
        (READ + ("delete",), "", "pods", ""), (("create",), "", "pods", "binding"), (("patch",), "", "pods", "status"),
        (READ, "", "nodes", ""), (("create",), "", "events", ""),
    ],
    "pod-claims-controller": [
        (READ, "", "pods", ""), (("patch",), "", "pods", "status"), (READ + ("create",), DEV, "deviceclaims", ""),
        (("patch",), DEV, "deviceclaims", "status"), (READ, DEV, "deviceclaimtemplates", ""), (("create",), "", "events", ""),
    ],
    "kubelet": [
        (READ, "", "nodes", ""), (("patch",), "", "nodes", "status"), (READ + ("delete",), "", "pods", ""),
        (("patch",), "", "pods", "status"), (READ, DEV, "deviceclaims", ""), (("create",), "", "events", ""),
    ],
    "garbage-collector": [
        (READ + ("patch", "delete"), "", "pods", ""), (READ + ("patch", "delete"), DEV, "deviceclaims", ""), (READ, "apps", "replicasets", ""),
    ],
}


@pytest.fixture(scope="module")
def rbac():
    registry = app.build().registry
    authorizer = RBACAuthorizer(registry)
    loader.load_paths(registry, [RBAC_DIR])
    return authorizer


def identity(name):
    return UserInfo(f"system:serviceaccount:devmgmtproto-system:{name}", groups=("system:serviceaccounts", "system:serviceaccounts:devmgmtproto-system", "system:authenticated"))


@pytest.mark.parametrize("controller", sorted(CALLS))
def test_each_controller_may_make_the_calls_its_code_makes(rbac, controller):
    who = identity(controller)
    for verbs, group, resource, subresource in CALLS[controller]:
        for verb in verbs:
            attrs = Attributes(who, verb, api_group=group, resource=resource, subresource=subresource, namespace="" if resource in ("nodes", "namespaces") else "team")
            assert rbac.authorize(attrs).allowed, f"{controller} may not {verb} {resource}/{subresource} in {group!r}"


def test_the_controllers_hold_no_more_than_they_need(rbac):
    def may(name, verb, group, resource, subresource=""):
        return rbac.authorize(Attributes(identity(name), verb, api_group=group, resource=resource, subresource=subresource, namespace="team")).allowed

    assert not may("scheduler", "update", DEV, "deviceclaims", "status")
    assert not may("allocator", "create", "", "pods", "binding")
    assert not may("allocator", "delete", DEV, "deviceclaims")
    assert not may("kubelet", "create", "", "pods", "binding")
    assert not may("pod-claims-controller", "delete", "", "pods")
    assert not may("garbage-collector", "create", "", "pods")
    assert not may("allocator", "get", "", "secrets")
