"""Every URL shape the dispatcher understands, as one table (kube's requestinfo_test.go style)."""

import pytest

from mockapi.http.requestinfo import parse

CASES = [
    # method, path, query, (verb, group, version, namespace, resource, name, subresource)
    ("GET", "/api/v1/namespaces", "", ("list", "", "v1", "", "namespaces", "", "")),
    ("GET", "/api/v1/namespaces/team-a", "", ("get", "", "v1", "team-a", "namespaces", "team-a", "")),
    ("PUT", "/api/v1/namespaces/team-a/status", "", ("update", "", "v1", "team-a", "namespaces", "team-a", "status")),
    ("PUT", "/api/v1/namespaces/team-a/finalize", "", ("update", "", "v1", "team-a", "namespaces", "team-a", "finalize")),
    ("GET", "/api/v1/namespaces/team-a/pods", "", ("list", "", "v1", "team-a", "pods", "", "")),
    ("POST", "/api/v1/namespaces/team-a/pods", "", ("create", "", "v1", "team-a", "pods", "", "")),
    ("GET", "/api/v1/namespaces/team-a/pods/p1", "", ("get", "", "v1", "team-a", "pods", "p1", "")),
    ("GET", "/api/v1/namespaces/team-a/pods/p1/status", "", ("get", "", "v1", "team-a", "pods", "p1", "status")),
    ("GET", "/api/v1/pods", "", ("list", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "watch=true", ("watch", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "watch=True", ("watch", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "watch=1", ("watch", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "watch=false", ("list", "", "v1", "", "pods", "", "")),
    # kube's query booleans: only 0 and false (any case) are false; anything else is a watch
    ("GET", "/api/v1/pods", "watch=FALSE", ("list", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "watch=0", ("list", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "watch=maybe", ("watch", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "watch=f", ("watch", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/x/pods", "", ("watch", "", "v1", "x", "pods", "", "")),
    ("GET", "/api/v1/nodes/node-1", "", ("get", "", "v1", "", "nodes", "node-1", "")),
    ("DELETE", "/api/v1/namespaces/x/configmaps", "", ("deletecollection", "", "v1", "x", "configmaps", "", "")),
    ("DELETE", "/api/v1/namespaces/x/configmaps/c", "", ("delete", "", "v1", "x", "configmaps", "c", "")),
    ("PATCH", "/apis/devmgmtproto.k8s.io/v1alpha1/devicepools/pool-1", "", ("patch", "devmgmtproto.k8s.io", "v1alpha1", "", "devicepools", "pool-1", "")),
    ("GET", "/apis/devmgmtproto.k8s.io/v1alpha1/deviceclaims", "", ("list", "devmgmtproto.k8s.io", "v1alpha1", "", "deviceclaims", "", "")),
    (
        "PATCH",
        "/apis/devmgmtproto.k8s.io/v1alpha1/namespaces/default/deviceclaims/c.1/status",
        "",
        ("patch", "devmgmtproto.k8s.io", "v1alpha1", "default", "deviceclaims", "c.1", "status"),
    ),
    ("GET", "/apis/g.io/v1/namespaces/x/things/A.b", "watch=true", ("watch", "g.io", "v1", "x", "things", "A.b", "")),
]


@pytest.mark.parametrize("method, path, query, expected", CASES)
def test_each_url_shape_parses_to_its_verb_and_coordinates(method, path, query, expected):
    info = parse(method, path, query.encode())
    assert info.is_resource_request
    assert (info.verb, info.group, info.version, info.namespace, info.resource, info.name, info.subresource) == expected


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/devmgmtproto.k8s.io", "/apis/devmgmtproto.k8s.io/v1alpha1", "/version", "/healthz"])
def test_discovery_and_other_paths_are_not_resource_requests(path):
    assert not parse("GET", path, b"").is_resource_request


def test_query_parameters_are_parsed_once_first_value_wins():
    info = parse("GET", "/api/v1/pods", b"labelSelector=a%3Db&limit=5&limit=7&continue=")
    assert info.query == {"labelSelector": "a=b", "limit": "5", "continue": ""}


def test_too_many_segments_is_not_a_resource_request():
    assert not parse("GET", "/api/v1/namespaces/x/pods/p/status/extra", b"").is_resource_request
