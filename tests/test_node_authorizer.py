"""kube's Node authorizer (mockapi.auth.node), in process: who is a node, the per-resource rules and
their reasons, the static node rules, and the union with RBAC."""

from __future__ import annotations

import orjson
import pytest

from mockapi import errors
from mockapi.auth import node
from mockapi.auth.authz import Attributes, Decision
from mockapi.auth.user import UserInfo
from mockapi.store.watch import Stored

N1 = UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))


class Store:
    def __init__(self, objects) -> None:
        self.objects = {(gr, ns, name): obj for gr, ns, name, obj in objects}

    def get(self, resource, namespace, name):
        obj = self.objects.get((resource, namespace, name))
        return None if obj is None else Stored(orjson.dumps(obj), 1, namespace, name, None, None)

    def iterate(self, resource, namespace=None, **_):
        for (gr, ns, name), obj in sorted(self.objects.items(), key=lambda item: (item[0][1], item[0][2])):
            if gr == resource and (namespace is None or ns == namespace):
                yield Stored(orjson.dumps(obj), 1, ns, name, None, None)


PODS, SLICES, CLAIMS = errors.GroupResource("", "pods"), errors.GroupResource("resource.k8s.io", "resourceslices"), errors.GroupResource("", "persistentvolumeclaims")
STORE = Store([
    (PODS, "default", "mine", {"metadata": {"name": "mine", "namespace": "default"}, "spec": {
        "nodeName": "n1", "serviceAccountName": "web", "imagePullSecrets": [{"name": "pull"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}, {"name": "tmp", "ephemeral": {}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
        "containers": [{"name": "c", "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "token", "key": "k"}}}]}]}}),
    (PODS, "default", "theirs", {"metadata": {"name": "theirs", "namespace": "default"}, "spec": {"nodeName": "n2", "imagePullSecrets": [{"name": "other"}]}}),
    (SLICES, "", "n1-gpus", {"spec": {"nodeName": "n1"}}),
    (CLAIMS, "default", "data", {"spec": {"volumeName": "pv-1"}}),
])  # fmt: skip
AUTH = node.NodeAuthorizer(STORE)


def decide(verb, resource, *, name="", namespace="", subresource="", group="", user=N1, fields=()) -> Decision:
    return AUTH.authorize(Attributes(user, verb, api_group=group, resource=resource, subresource=subresource, namespace=namespace, name=name, field_selector=fields))


def test_who_is_a_node():
    assert node.node_name(N1) == "n1"
    assert node.node_name(UserInfo("system:node:n1")) is None  # not in system:nodes
    assert node.node_name(UserInfo("kubelet", groups=("system:nodes",))) is None
    assert decide("get", "nodes", name="", user=UserInfo("system:node:", groups=("system:nodes",))) == Decision(False, 'unknown node for user "system:node:"')
    assert decide("get", "pods", user=UserInfo("alice")) == Decision(False)


@pytest.mark.parametrize(
    ("call", "allowed", "reason"),
    [
        (dict(verb="get", resource="nodes", name="n1"), True, ""),
        (dict(verb="watch", resource="nodes", name="n2"), False, "node 'n1' cannot read 'n2', only its own Node object"),
        (dict(verb="create", resource="nodes"), True, ""),
        (dict(verb="delete", resource="nodes", name="n1"), False, ""),
        (dict(verb="patch", resource="nodes", subresource="status", name="n2"), False, 'node "n1" is not allowed to modify node "n2"'),
        (dict(verb="watch", resource="pods", fields=(("spec.nodeName", "=", "n1"),)), True, ""),
        (dict(verb="list", resource="pods", fields=(("spec.nodeName", "!=", "n1"),)), False, "can only list/watch pods with spec.nodeName field selector"),
        (dict(verb="get", resource="pods", namespace="default", name="mine"), True, ""),
        (dict(verb="create", resource="pods", subresource="eviction", namespace="default", name="theirs"), False, 'node "n1" can only evict pods with spec.nodeName set to itself'),
        (dict(verb="update", resource="pods", subresource="status", namespace="default", name="mine"), True, ""),
        (dict(verb="get", resource="secrets", namespace="default", name="pull"), True, ""),
        (dict(verb="get", resource="secrets", namespace="default", name="token"), True, ""),
        (dict(verb="get", resource="secrets", namespace="default", name="other"), False, "no relationship found between node 'n1' and this object"),
        (dict(verb="get", resource="persistentvolumeclaims", namespace="default", name="mine-tmp"), True, ""),
        (dict(verb="get", resource="persistentvolumes", name="pv-1"), True, ""),
        (dict(verb="get", resource="resourceclaims", group="resource.k8s.io", namespace="default", name="gpu-claim"), True, ""),
        (dict(verb="create", resource="serviceaccounts", subresource="token", namespace="default", name="web"), True, ""),
        (dict(verb="get", resource="serviceaccounts", namespace="default", name="web"), False, "can only create tokens for individual service accounts"),
        (dict(verb="list", resource="persistentvolumes"), False, "can only get individual resources of this type"),
        (dict(verb="update", resource="leases", group="coordination.k8s.io", namespace="kube-node-lease", name="n1"), True, ""),
        (dict(verb="update", resource="leases", group="coordination.k8s.io", namespace="default", name="n1"), False, 'can only access leases in the "kube-node-lease" system namespace'),
        (dict(verb="get", resource="csinodes", group="storage.k8s.io", name="n2"), False, "can only access CSINode with the same name as the requesting node"),
        (dict(verb="delete", resource="resourceslices", group="resource.k8s.io", name="n1-gpus"), True, ""),
        (dict(verb="list", resource="resourceslices", group="resource.k8s.io"), False, "can only list/watch/deletecollection resourceslices with nodeName field selector"),
        (dict(verb="create", resource="events", namespace="default"), True, ""),
        (dict(verb="list", resource="services"), True, ""),
        (dict(verb="delete", resource="services", namespace="default", name="x"), False, ""),
    ],
)  # fmt: skip
def test_kubes_rules_and_reasons(call, allowed, reason):
    assert decide(**call) == Decision(allowed, reason)


class Deny:
    def __init__(self, reason: str) -> None:
        self.reason = reason

    def authorize(self, attrs):
        return Decision(False, self.reason)


def test_the_union_joins_the_reasons_of_those_without_an_opinion():
    class Registry:
        access = None

    union = node.Union(Registry(), [AUTH, Deny("RBAC: clusterrole.rbac.authorization.k8s.io \"x\" not found")], rbac=None)
    assert union.authorize(Attributes(N1, "get", resource="nodes", name="n1")).allowed
    assert union.authorize(Attributes(N1, "list", resource="nodes")) == Decision(False, "node 'n1' cannot read all nodes, only its own Node object\nRBAC: clusterrole.rbac.authorization.k8s.io \"x\" not found")
