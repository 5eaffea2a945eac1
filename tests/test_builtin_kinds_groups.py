"""policy, networking.k8s.io, storage.k8s.io, discovery.k8s.io (and autoscaling, apiregistration)
in process: kube's defaults and the validation clients meet, with kube's messages."""

from __future__ import annotations

from datetime import datetime, timezone

import orjson
import pytest

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import printers
from mockapi.registry.options import WriteOptions


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def server(clock):
    return app_.build(clock=clock, uids=SequentialUIDs())


def create(server, api_version: str, kind: str, body: dict, namespace: str = "default") -> dict:
    group, _, version = api_version.rpartition("/")
    rt = server.types.by_kind(group, version, kind)
    return orjson.loads(server.registry.create(rt, namespace if rt.namespaced else "", body, WriteOptions()).raw)


def update(server, api_version: str, kind: str, body: dict, namespace: str = "default") -> dict:
    group, _, version = api_version.rpartition("/")
    rt = server.types.by_kind(group, version, kind)
    return orjson.loads(server.registry.update(rt, namespace if rt.namespaced else "", body["metadata"]["name"], body, WriteOptions()).raw)


def refused(call) -> str:
    with pytest.raises(errors.StatusError) as caught:
        call()
    assert caught.value.code == 422, caught.value
    return str(caught.value)


def cells(server, api_version: str, kind: str, obj: dict) -> list:
    group, _, version = api_version.rpartition("/")
    _, cell = printers.table_for(server.types.by_kind(group, version, kind))
    return cell(obj, datetime(2024, 1, 1, tzinfo=timezone.utc))


# ------------------------------------------------------------------------- PodDisruptionBudget
def test_a_pdb_starts_with_kubes_zero_status_and_generation_one(server):
    pdb = create(server, "policy/v1", "PodDisruptionBudget", {"metadata": {"name": "p"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}})
    assert pdb["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    assert pdb["metadata"]["generation"] == 1
    pdb["spec"]["minAvailable"] = 2
    assert update(server, "policy/v1", "PodDisruptionBudget", pdb)["metadata"]["generation"] == 2
    assert cells(server, "policy/v1", "PodDisruptionBudget", pdb)[:4] == ["p", "2", "N/A", 0]


@pytest.mark.parametrize(("spec", "message"), [
    ({"minAvailable": 1, "maxUnavailable": 1}, "spec: Invalid value: "),
    ({"minAvailable": "101%"}, 'spec.minAvailable: Invalid value: "101%": must not be greater than 100%'),
    ({"maxUnavailable": "ten"}, "spec.maxUnavailable: Invalid value: \"ten\": a valid percent string must be a numeric string followed by an ending '%'"),
    ({"maxUnavailable": -1}, "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"),
    ({"unhealthyPodEvictionPolicy": "Never"}, 'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"'),
    ({"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}, "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
    # ValidateLabelSelector: keys are qualified names, values label values (matchLabels reported at matchLabels)
    ({"selector": {"matchLabels": {"bad key": "v"}}}, 'spec.selector.matchLabels: Invalid value: "bad key": name part must consist of alphanumeric characters'),
    ({"selector": {"matchLabels": {"a": "-v"}}}, 'spec.selector.matchLabels: Invalid value: "-v": a valid label must be an empty string or consist of alphanumeric'),
    ({"selector": {"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]}}, 'spec.selector.matchExpressions[0].key: Invalid value: "a/b/c": a qualified name must consist of'),
    ({"selector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["ok", "not ok"]}]}}, 'spec.selector.matchExpressions[0].values[1]: Invalid value: "not ok": a valid label must be'),
])  # fmt: skip
def test_pdb_refusals(server, spec, message):
    assert message in refused(lambda: create(server, "policy/v1", "PodDisruptionBudget", {"metadata": {"name": "p"}, "spec": spec}))


# ------------------------------------------------------------------------------------ networking
def test_the_default_ingress_class_fills_in_an_ingress_without_one(server, clock):
    rule = {"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}
    assert "ingressClassName" not in create(server, "networking.k8s.io/v1", "Ingress", {"metadata": {"name": "a"}, "spec": {"rules": [rule]}})["spec"]
    for name in ("old", "new"):
        clock.advance(1)
        create(server, "networking.k8s.io/v1", "IngressClass", {"metadata": {"name": name, "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}}, "spec": {"controller": "x.io/c"}})
    ingress = create(server, "networking.k8s.io/v1", "Ingress", {"metadata": {"name": "b"}, "spec": {"rules": [rule]}})
    assert ingress["spec"]["ingressClassName"] == "new" and ingress["status"] == {"loadBalancer": {}} and ingress["metadata"]["generation"] == 1
    legacy = {"metadata": {"name": "c", "annotations": {"kubernetes.io/ingress.class": "nginx"}}, "spec": {"rules": [rule]}}
    assert "ingressClassName" not in create(server, "networking.k8s.io/v1", "Ingress", legacy)["spec"]


def test_ingress_cells_follow_kubes_printer(server):
    rules = [{"host": h} for h in ("a", "b", "c", "d", "e")]
    ingress = {"metadata": {"name": "i"}, "spec": {"rules": rules, "tls": [{}]},
               "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.10"}, {"hostname": "lb.example.com"}]}}}  # fmt: skip
    assert cells(server, "networking.k8s.io/v1", "Ingress", ingress)[:5] == ["i", "<none>", "a,b,c + 2 more...", "203.0.113.10,...", "80, 443"]


@pytest.mark.parametrize(("backend", "message"), [
    ({}, "backend: Invalid value: \"\": resource or service backend is required"),
    ({"service": {"name": "s", "port": {"name": "http", "number": 80}}}, "cannot set both port name & port number"),
    ({"service": {"name": "s", "port": {"number": 80}}, "resource": {"kind": "K", "name": "n"}}, "cannot set both resource and service backends"),
    ({"service": {"name": "s", "port": {"number": 70000}}}, "backend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive"),
])  # fmt: skip
def test_ingress_backend_refusals(server, backend, message):
    body = {"metadata": {"name": "i"}, "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Exact", "backend": backend}]}}]}}
    assert message in refused(lambda: create(server, "networking.k8s.io/v1", "Ingress", body))


@pytest.mark.parametrize(("spec", "message"), [
    ({"rules": [{"host": "Foo.example.com"}]}, 'spec.rules[0].host: Invalid value: "Foo.example.com": a lowercase RFC 1123 subdomain must consist of'),
    ({"rules": [{"host": "10.0.0.1"}]}, 'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address'),
    ({"rules": [{"host": "foo.*.example.com"}]}, 'spec.rules[0].host: Invalid value: "foo.*.example.com": a wildcard DNS-1123 subdomain must start with \'*.\''),
    ({"rules": [{"host": "a.example.com"}], "tls": [{"hosts": ["ok.example.com", "bad_host"], "secretName": "tls"}]}, 'spec.tls[0].hosts[1]: Invalid value: "bad_host": a lowercase RFC 1123 subdomain'),
    ({"rules": [{"host": "a.example.com"}], "tls": [{"hosts": ["*.example.com"], "secretName": "Bad"}]}, 'spec.tls[0].secretName: Invalid value: "Bad": a lowercase RFC 1123 subdomain'),
])  # fmt: skip
def test_ingress_host_and_tls_refusals(server, spec, message):
    assert message in refused(lambda: create(server, "networking.k8s.io/v1", "Ingress", {"metadata": {"name": "i"}, "spec": spec}))


def test_ingress_hosts_kube_accepts(server):
    spec = {"rules": [{"host": "*.example.com"}, {"host": "a.b.example.com"}], "tls": [{"hosts": ["*.example.com", "a.b.example.com"], "secretName": "tls"}]}
    assert create(server, "networking.k8s.io/v1", "Ingress", {"metadata": {"name": "ok"}, "spec": spec})["spec"]["rules"][0]["host"] == "*.example.com"


@pytest.mark.parametrize(("peer", "message"), [
    ({"ipBlock": {"cidr": "10.0.0.0"}}, 'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0": not a valid CIDR'),
    ({"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}, 'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`'),
    ({"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.0.0.0/8"]}}, 'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`'),
    ({"ipBlock": {"cidr": "10.0.0.0/8", "except": ["nope"]}}, 'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "nope": not a valid CIDR'),
    ({"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}, "spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"),
    ({}, "spec.ingress[0].from[0]: Required value: must specify a peer"),
    ({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "bad value!"}}}, 'spec.ingress[0].from[0].namespaceSelector.matchLabels: Invalid value: "bad value!"'),
])  # fmt: skip
def test_network_policy_peer_refusals(server, peer, message):
    body = {"metadata": {"name": "np"}, "spec": {"podSelector": {}, "ingress": [{"from": [peer]}]}}
    assert message in refused(lambda: create(server, "networking.k8s.io/v1", "NetworkPolicy", body))


def test_network_policy_ip_blocks_kube_accepts(server):
    peers = [{"ipBlock": {"cidr": "10.0.0.1/8", "except": ["10.1.0.0/16", "10.2.3.4/32"]}}, {"ipBlock": {"cidr": "2001:db8::/32", "except": ["2001:db8:1::/48"]}},
             {"podSelector": {"matchLabels": {"app": "a"}}, "namespaceSelector": {}}]  # fmt: skip
    made = create(server, "networking.k8s.io/v1", "NetworkPolicy", {"metadata": {"name": "ok"}, "spec": {"podSelector": {}, "ingress": [{"from": peers}]}})
    assert made["spec"]["ingress"][0]["from"] == peers


def test_ingress_class_scope_default_and_refusals(server):
    made = create(server, "networking.k8s.io/v1", "IngressClass", {"metadata": {"name": "a"}, "spec": {"controller": "x.io/c", "parameters": {"kind": "K", "name": "n"}}})
    assert made["spec"]["parameters"]["scope"] == "Cluster" and made["metadata"]["generation"] == 1
    namespaced = {"metadata": {"name": "b"}, "spec": {"controller": "x.io/c", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}}}
    assert "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'" in refused(lambda: create(server, "networking.k8s.io/v1", "IngressClass", namespaced))
    assert "spec.controller: Required value" in refused(lambda: create(server, "networking.k8s.io/v1", "IngressClass", {"metadata": {"name": "c"}, "spec": {}}))
    made["spec"]["controller"] = "y.io/d"
    assert 'spec.controller: Invalid value: "y.io/d": field is immutable' in refused(lambda: update(server, "networking.k8s.io/v1", "IngressClass", made))


def test_network_policy_defaults(server):
    only_ingress = create(server, "networking.k8s.io/v1", "NetworkPolicy", {"metadata": {"name": "a"}, "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}})
    assert only_ingress["spec"]["policyTypes"] == ["Ingress"] and only_ingress["spec"]["ingress"][0]["ports"][0]["protocol"] == "TCP"
    both = create(server, "networking.k8s.io/v1", "NetworkPolicy", {"metadata": {"name": "b"}, "spec": {"podSelector": {}, "egress": [{}]}})
    assert both["spec"]["policyTypes"] == ["Ingress", "Egress"]
    chosen = create(server, "networking.k8s.io/v1", "NetworkPolicy", {"metadata": {"name": "c"}, "spec": {"podSelector": {}, "policyTypes": ["Egress"]}})
    assert chosen["spec"]["policyTypes"] == ["Egress"]
    bad = {"metadata": {"name": "d"}, "spec": {"podSelector": {}, "policyTypes": ["Sideways"], "egress": [{"ports": [{"endPort": 90}]}]}}
    message = refused(lambda: create(server, "networking.k8s.io/v1", "NetworkPolicy", bad))
    assert 'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Egress", "Ingress"' in message
    assert "spec.egress[0].ports[0].port: Required value: When endPort is specified, port must be specified" in message


# --------------------------------------------------------------------------------- StorageClass
def test_storage_class_defaults_and_what_may_not_change(server):
    sc = create(server, "storage.k8s.io/v1", "StorageClass", {"metadata": {"name": "s", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "p"})
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate") and "generation" not in sc["metadata"]
    assert cells(server, "storage.k8s.io/v1", "StorageClass", sc)[:5] == ["s (default)", "p", "Delete", "Immediate", False]
    changed = {**sc, "provisioner": "q", "parameters": {"a": "b"}, "volumeBindingMode": "WaitForFirstConsumer"}
    message = refused(lambda: update(server, "storage.k8s.io/v1", "StorageClass", changed))
    assert "provisioner: Forbidden: updates to provisioner are forbidden." in message and "parameters: Forbidden: updates to parameters are forbidden." in message
    assert 'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable' in message
    assert 'reclaimPolicy: Unsupported value: "Recycle"' in refused(lambda: create(server, "storage.k8s.io/v1", "StorageClass", {"metadata": {"name": "r"}, "provisioner": "p", "reclaimPolicy": "Recycle"}))


# -------------------------------------------------------------------------------- EndpointSlice
def test_endpoint_slice_defaults_cells_and_refusals(server):
    body = {"metadata": {"name": "e"}, "addressType": "IPv4", "endpoints": [{"addresses": [f"10.0.0.{i}"]} for i in range(5)], "ports": [{"port": 80}, {"name": "x"}]}
    slice_ = create(server, "discovery.k8s.io/v1", "EndpointSlice", body)
    assert slice_["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}, {"name": "x", "protocol": "TCP"}] and slice_["metadata"]["generation"] == 1
    assert cells(server, "discovery.k8s.io/v1", "EndpointSlice", slice_)[:4] == ["e", "IPv4", "80,x", "10.0.0.0,10.0.0.1,10.0.0.2 + 2 more..."]
    bad = {"metadata": {"name": "f"}, "addressType": "IP", "endpoints": [{"addresses": []}]}
    message = refused(lambda: create(server, "discovery.k8s.io/v1", "EndpointSlice", bad))
    assert 'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"' in message
    assert "endpoints[0].addresses: Required value: must contain at least 1 address" in message


# ------------------------------------------------------------------------ HorizontalPodAutoscaler
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def test_hpa_defaults(server):
    hpa = create(server, "autoscaling/v2", "HorizontalPodAutoscaler", {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 3, "behavior": {"scaleUp": {"selectPolicy": "Min"}}}})
    spec = hpa["spec"]
    assert spec["minReplicas"] == 1 and hpa["status"] == {"desiredReplicas": 0} and "generation" not in hpa["metadata"]
    assert spec["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert spec["behavior"]["scaleUp"] == {"selectPolicy": "Min", "stabilizationWindowSeconds": 0,
                                          "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}  # fmt: skip
    # GenerateHPAScaleDownRules leaves the window out: the controller's --horizontal-pod-autoscaler-downscale-stabilization (300 s) applies
    assert spec["behavior"]["scaleDown"] == {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    assert cells(server, "autoscaling/v2", "HorizontalPodAutoscaler", hpa)[:6] == ["h", "Deployment/web", "cpu: <unknown>/80%", 1, 3, 0]


def test_an_hpa_written_as_v1_is_stored_as_v2_and_read_back_as_v1(server):
    made = create(server, "autoscaling/v1", "HorizontalPodAutoscaler", {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}})
    assert made["apiVersion"] == "autoscaling/v1" and made["spec"]["minReplicas"] == 1 and made["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    stored = orjson.loads(server.registry.get(server.types.by_kind("autoscaling", "v2", "HorizontalPodAutoscaler"), "default", "h").raw)
    assert stored["apiVersion"] == "autoscaling/v2" and stored["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 50}
    assert cells(server, "autoscaling/v1", "HorizontalPodAutoscaler", made)[2] == "cpu: <unknown>/50%"


def test_hpa_conversion_keeps_what_v1_cannot_say_in_kubes_annotations():
    from mockapi.registry import autoscaling

    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
          "spec": {"scaleTargetRef": TARGET, "minReplicas": 1, "maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 10}},
                   "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
                               {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]},
          "status": {"desiredReplicas": 2, "currentReplicas": 1, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}],
                     "conditions": [{"type": "AbleToScale", "status": "True"}]}}  # fmt: skip
    v1 = autoscaling.convert(v2, "autoscaling/v1")
    assert v1["spec"] == {"scaleTargetRef": TARGET, "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}
    assert v1["status"] == {"currentReplicas": 1, "desiredReplicas": 2, "currentCPUUtilizationPercentage": 40}
    assert set(v1["metadata"]["annotations"]) == {"autoscaling.alpha.kubernetes.io/metrics", "autoscaling.alpha.kubernetes.io/behavior", "autoscaling.alpha.kubernetes.io/conditions"}
    back = autoscaling.convert(v1, "autoscaling/v2")
    assert back["spec"]["metrics"] == v2["spec"]["metrics"] and back["status"]["conditions"] == v2["status"]["conditions"]
    assert back["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 10 and "annotations" not in back["metadata"]


@pytest.mark.parametrize(("spec", "message"), [
    ({"minReplicas": 0, "maxReplicas": 1}, "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"),
    ({"maxReplicas": 0}, "spec.maxReplicas: Invalid value: 0: must be greater than 0"),
    ({"maxReplicas": 2, "metrics": [{"type": "Pods"}]}, "spec.metrics[0].pods: Required value: must populate information for the given metric source"),
    ({"maxReplicas": 2, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50, "averageValue": "1"}}}]},
     "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization"),
    ({"maxReplicas": 2, "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}}},
     "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800"),
])  # fmt: skip
def test_hpa_refusals(server, spec, message):
    body = {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": TARGET, **spec}}
    assert message in refused(lambda: create(server, "autoscaling/v2", "HorizontalPodAutoscaler", body))


# ----------------------------------------------------------------------------------- APIService
def test_every_served_group_version_has_a_local_api_service_and_a_reset_keeps_them(server):
    from mockapi.registry import reset
    from mockapi.registry.options import ListOptions

    rt = server.types.by_kind("apiregistration.k8s.io", "v1", "APIService")
    names = {s.name for s in server.registry.list(rt, "", ListOptions()).items}
    served = {f"{t.version}.{t.group}" for t in server.types.all()}
    assert names == served and "v1." in names and "v1.autoscaling" in names
    create(server, "apiregistration.k8s.io/v1", "APIService", {"metadata": {"name": "v1.x.io"}, "spec": {"group": "x.io", "version": "v1", "groupPriorityMinimum": 10, "versionPriority": 10}})
    reset.reset(server.registry)
    assert {s.name for s in server.registry.list(rt, "", ListOptions()).items} == served


def test_an_api_service_gets_the_availability_controllers_verdict(server):
    local = create(server, "apiregistration.k8s.io/v1", "APIService", {"metadata": {"name": "v1.x.io"}, "spec": {"group": "x.io", "version": "v1", "groupPriorityMinimum": 10, "versionPriority": 10},
                                                                        "status": {"conditions": [{"type": "Available", "status": "False"}]}})  # fmt: skip
    assert local["status"]["conditions"] == [{"type": "Available", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Local", "message": "Local APIServices are always available"}]
    remote = create(server, "apiregistration.k8s.io/v1", "APIService", {"metadata": {"name": "v1.y.io"}, "spec": {"group": "y.io", "version": "v1", "groupPriorityMinimum": 10, "versionPriority": 10,
                                                                         "service": {"namespace": "ns", "name": "svc"}}})  # fmt: skip
    assert cells(server, "apiregistration.k8s.io/v1", "APIService", remote)[:3] == ["v1.y.io", "ns/svc", "False (ServiceNotFound)"]


@pytest.mark.parametrize(("name", "spec", "message"), [
    ("v1.x.io", {"group": "x.io", "version": "v1", "groupPriorityMinimum": 0, "versionPriority": 10}, "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000"),
    ("v1.x.io", {"group": "x.io", "version": "v1", "groupPriorityMinimum": 10, "versionPriority": 1001}, "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000"),
    ("v1.x.io", {"group": "x.io", "version": "v1", "groupPriorityMinimum": 10, "versionPriority": 10, "caBundle": "QUJD"}, "spec.caBundle: Invalid value: \"QUJD\": local APIServices may not have a caBundle"),
    ("v1.x.io", {"group": "x.io", "version": "v1", "groupPriorityMinimum": 10, "versionPriority": 10, "service": {"name": "s"}}, "spec.service.namespace: Required value"),
    (".x.io", {"group": "x.io", "groupPriorityMinimum": 10, "versionPriority": 10}, "spec.version: Required value"),
])  # fmt: skip
def test_api_service_refusals(server, name, spec, message):
    assert message in refused(lambda: create(server, "apiregistration.k8s.io/v1", "APIService", {"metadata": {"name": name}, "spec": spec}))
