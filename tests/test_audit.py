"""The audit log: an audit.k8s.io/v1 Policy decides what is written; Events as kube-apiserver writes them."""

from __future__ import annotations

import orjson
import pytest
import yaml

from mockapi import app as app_
from mockapi.auth import audit
from mockapi.auth.authz import Attributes
from mockapi.auth.user import UserInfo
from mockapi.settings import Settings
from tests.test_authn import AsgiClient

POLICY = """
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
  namespaces: ["audited"]
- level: Request
  verbs: ["create", "update", "patch"]
  resources: [{group: "apps", resources: ["deployments"]}]
- level: None
  resources: [{group: "", resources: ["secrets"], resourceNames: ["quiet"]}]
- level: Metadata
  userGroups: ["system:authenticated"]
"""


@pytest.fixture
def logged(tmp_path):
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('admintoken,admin,1,"system:masters"\nproxytoken,system:kube-proxy,2\n')
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    log = tmp_path / "audit.log"
    server = app_.build(Settings(token_auth_file=tokens, audit_policy_file=policy, audit_log_path=str(log)))

    def lines() -> list[dict]:
        return [orjson.loads(line) for line in log.read_bytes().splitlines()]

    yield AsgiClient(server.app), lines, server
    server.audit.close()


def call(client, method, path, token="admintoken", **kwargs):
    return client.request(method, path, headers={"Authorization": f"Bearer {token}", "User-Agent": "auditor/1.0", **kwargs.pop("headers", {})}, **kwargs)


def test_each_rule_of_the_policy_decides_what_is_written(logged):
    client, lines, _ = logged
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": {"k": "v"}}
    call(client, "POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "audited"}})
    call(client, "POST", "/api/v1/namespaces/audited/configmaps", json=cm)  # RequestResponse
    call(client, "GET", "/api/v1/namespaces/default/configmaps")  # Metadata: not in "audited"
    call(client, "GET", "/api/v1/namespaces/default/pods", token="proxytoken")  # None: the user
    call(client, "GET", "/healthz")  # None: the URL
    call(client, "GET", "/api/v1/namespaces/default/secrets/quiet")  # None: the name
    written = lines()
    assert [(e["verb"], e["requestURI"], e["level"]) for e in written] == [
        ("create", "/api/v1/namespaces", "Metadata"),
        ("create", "/api/v1/namespaces/audited/configmaps", "RequestResponse"),
        ("list", "/api/v1/namespaces/default/configmaps", "Metadata"),
    ]
    assert {e["stage"] for e in written} == {"ResponseComplete"}  # RequestReceived is omitted
    full = written[1]
    assert full["requestObject"]["data"] == {"k": "v"} and full["responseObject"]["metadata"]["name"] == "c1"
    assert full["objectRef"] == {"resource": "configmaps", "namespace": "audited", "apiVersion": "v1"}
    assert full["responseStatus"] == {"metadata": {}, "code": 201}
    assert "requestObject" not in written[2] and "responseObject" not in written[2]


def test_an_event_has_kubes_fields(logged):
    client, lines, _ = logged
    call(client, "GET", "/api/v1/namespaces/default/configmaps/missing?timeout=5s", headers={"X-Forwarded-For": "10.0.0.9"})
    event = lines()[-1]
    assert list(event) == [
        "kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user", "sourceIPs", "userAgent",
        "objectRef", "responseStatus", "requestReceivedTimestamp", "stageTimestamp", "annotations",
    ]  # fmt: skip
    assert event["kind"] == "Event" and event["apiVersion"] == "audit.k8s.io/v1"
    assert event["requestURI"] == "/api/v1/namespaces/default/configmaps/missing?timeout=5s"
    assert event["user"] == {"username": "admin", "uid": "1", "groups": ["system:masters", "system:authenticated"]}
    assert event["sourceIPs"][0] == "10.0.0.9" and event["userAgent"] == "auditor/1.0"
    assert event["objectRef"] == {"resource": "configmaps", "namespace": "default", "name": "missing", "apiVersion": "v1"}
    assert event["responseStatus"]["code"] == 404 and event["responseStatus"]["reason"] == "NotFound"
    assert event["annotations"] == {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
    assert event["stageTimestamp"].endswith("Z") and len(event["stageTimestamp"]) == 27


def test_a_refused_request_is_logged_with_its_401(logged):
    client, lines, _ = logged
    call(client, "GET", "/api/v1/namespaces/default/configmaps", token="bad")
    # the policy's rule for system:authenticated does not match a request nobody authenticated
    assert lines() == []


def test_recent_events_are_readable_over_the_control_api(logged):
    client, _, server = logged
    call(client, "POST", "/apis/apps/v1/namespaces/default/deployments", json={"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}})
    events = call(client, "GET", "/mockapi/v1/audit").json()["items"]
    assert events[-1]["level"] == "Request" and events[-1]["requestObject"]["metadata"]["name"] == "d"
    assert "responseObject" not in events[-1]
    assert call(client, "DELETE", "/mockapi/v1/audit").json()["deleted"] >= 1
    assert [e["requestURI"] for e in call(client, "GET", "/mockapi/v1/audit").json()["items"]] == ["/mockapi/v1/audit"]


def test_without_a_policy_everything_is_logged_at_metadata_in_both_stages(tmp_path):
    log = tmp_path / "audit.log"
    server = app_.build(Settings(audit_log_path=str(log)))
    AsgiClient(server.app).get("/api/v1/namespaces")
    server.audit.close()
    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    assert [(e["stage"], e["level"]) for e in events] == [("RequestReceived", "Metadata"), ("ResponseComplete", "Metadata")]
    assert events[0]["auditID"] == events[1]["auditID"] and "responseStatus" not in events[0]
    assert events[1]["user"]["username"] == "system:admin"  # authentication is off


# ------------------------------------------------------------------ the policy alone
def attrs(user="alice", groups=(), verb="get", **kwargs) -> Attributes:
    return Attributes(UserInfo(user, groups=tuple(groups)), verb, **kwargs)


@pytest.mark.parametrize(
    "rule, request_attrs, matches",
    [
        ({"resources": [{"group": "", "resources": ["pods/*"]}]}, attrs(resource="pods", subresource="log"), True),
        ({"resources": [{"group": "", "resources": ["*/status"]}]}, attrs(resource="nodes", subresource="status"), True),
        ({"resources": [{"group": "", "resources": ["*/status"]}]}, attrs(resource="nodes"), False),
        ({"resources": [{"group": "apps"}]}, attrs(resource="deployments", api_group="apps"), True),
        ({"namespaces": [""]}, attrs(resource="nodes"), True),
        ({"namespaces": ["a"]}, attrs(resource="pods", namespace="b"), False),
        ({"nonResourceURLs": ["/metrics"]}, attrs(verb="get", resource_request=False, path="/metrics"), True),
        ({"nonResourceURLs": ["/metrics"]}, attrs(resource="pods"), False),
        ({"resources": [{"group": ""}]}, attrs(verb="get", resource_request=False, path="/api"), False),
        ({"userGroups": ["ops"]}, attrs(groups=["dev", "ops"]), True),
        ({"users": ["bob"]}, attrs(), False),
    ],
)
def test_policy_rules_match_as_kubes_checker(rule, request_attrs, matches):
    policy = audit.parse_policy({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "Request", **rule}]})
    assert policy.level(request_attrs)[0] == ("Request" if matches else "None")


def test_a_bad_policy_is_refused_with_the_field_that_is_wrong():
    with pytest.raises(audit.PolicyError, match=r"rules\[0\].level: Unsupported value: 'Everything'"):
        audit.parse_policy(yaml.safe_load("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]"))
    with pytest.raises(audit.PolicyError, match="expected an audit.k8s.io/v1 Policy"):
        audit.parse_policy({"kind": "Policy"})


def test_a_request_refused_at_authentication_is_logged_with_kubes_401_and_no_user(tmp_path):
    server = app_.build(Settings(authentication=True, audit_log_path=str(tmp_path / "audit.log")))
    AsgiClient(server.app).get("/api/v1/pods", headers={"Authorization": "Bearer wrong"})
    server.audit.close()
    event = server.audit.events()[-1]
    assert event["stage"] == "ResponseComplete" and event["user"] == {} and "annotations" not in event
    assert event["responseStatus"] == {"metadata": {}, "code": 401, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized"}
