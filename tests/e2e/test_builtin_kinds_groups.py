"""policy/v1, networking.k8s.io/v1, storage.k8s.io/v1 and discovery.k8s.io/v1 end to end, on one
server for the module: kubectl create poddisruptionbudget|ingress (protobuf bodies), apply, get
with kube's columns, describe, apply --server-side, and the kubernetes client; kube's defaults
and refusals. No controller runs them (docs/builtin-kinds.md)."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.conftest import running

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def live():
    with running() as server:
        yield server


def invalid(call) -> str:
    with pytest.raises(ApiException) as caught:
        call()
    assert caught.value.status == 422, caught.value.body
    return caught.value.body


def rows(kubectl, *args) -> list[list[str]]:
    return [line.split() for line in kubectl("get", *args).stdout.splitlines()]


def test_pod_disruption_budgets(kubectl, api):
    policy = client.PolicyV1Api(api)
    kubectl("create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=50%")
    web = policy.read_namespaced_pod_disruption_budget("web", "default")
    assert (web.spec.min_available, web.spec.selector.match_labels, web.metadata.generation) == ("50%", {"app": "web"}, 1)
    assert (web.status.disruptions_allowed, web.status.current_healthy, web.status.desired_healthy, web.status.expected_pods) == (0, 0, 0, 0)
    manifest = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\nspec:\n  maxUnavailable: 1\n  selector: {matchLabels: {app: db}}\n"
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=manifest).stdout
    kubectl("apply", "--server-side", "-f", "-", stdin=manifest.replace("maxUnavailable: 1", "maxUnavailable: 2"))
    assert policy.read_namespaced_pod_disruption_budget("db", "default").metadata.generation == 2
    table = rows(kubectl, "pdb")
    assert table[0] == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert {row[0]: row[1:4] for row in table[1:]} == {"web": ["50%", "N/A", "0"], "db": ["N/A", "2", "0"]}
    assert "Min available:  50%" in kubectl("describe", "pdb", "web").stdout
    both = {"metadata": {"name": "bad"}, "spec": {"minAvailable": 1, "maxUnavailable": "120%"}}
    body = invalid(lambda: policy.create_namespaced_pod_disruption_budget("default", both))
    assert "minAvailable and maxUnavailable cannot be both set" in body and 'spec.maxUnavailable: Invalid value: \\"120%\\": must not be greater than 100%' in body


def test_ingresses_and_ingress_classes(kubectl, api):
    networking = client.NetworkingV1Api(api)
    default = {"metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
               "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"kind": "IngressParameters", "apiGroup": "k8s.example.com", "name": "p"}}}  # fmt: skip
    assert networking.create_ingress_class(default).spec.parameters.scope == "Cluster"
    assert rows(kubectl, "ingressclasses") [1][:3] == ["nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/p"]
    body = invalid(lambda: networking.patch_ingress_class("nginx", {"spec": {"controller": "other.io/x"}}))
    assert "spec.controller: Invalid value: \\\"other.io/x\\\": field is immutable" in body
    kubectl("create", "ingress", "simple", "--rule=foo.com/bar=svc1:8080,tls=my-cert")
    simple = networking.read_namespaced_ingress("simple", "default")
    path = simple.spec.rules[0].http.paths[0]
    assert (simple.spec.rules[0].host, path.path, path.path_type, path.backend.service.name, path.backend.service.port.number) == ("foo.com", "/bar", "Exact", "svc1", 8080)
    assert simple.spec.tls[0].secret_name == "my-cert" and simple.spec.ingress_class_name == "nginx"  # the DefaultIngressClass plugin
    manifest = ("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec:\n  ingressClassName: other\n  rules:\n"
                "  - http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}\n")  # fmt: skip
    kubectl("apply", "-f", "-", stdin=manifest)
    assert "serverside-applied" in kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=manifest.replace("pathType: Prefix", "pathType: Exact")).stdout
    table = {row[0]: row[1:] for row in rows(kubectl, "ingress")[1:]}
    assert table["simple"][:3] == ["nginx", "foo.com", "80,"] and table["web"][:3] == ["other", "*", "80"]
    assert "foo.com" in kubectl("describe", "ingress", "simple").stdout
    bad = {"metadata": {"name": "bad"}, "spec": {"rules": [{"http": {"paths": [{"path": "x", "pathType": "Prefix", "backend": {"service": {"name": "s"}}}]}}]}}
    body = invalid(lambda: networking.create_namespaced_ingress("default", bad))
    assert "spec.rules[0].http.paths[0].path: Invalid value: \\\"x\\\": must be an absolute path" in body
    assert "spec.rules[0].http.paths[0].backend: Required value: port name or number is required" in body
    assert "either `defaultBackend` or `rules` must be specified" in invalid(lambda: networking.create_namespaced_ingress("default", {"metadata": {"name": "empty"}, "spec": {}}))


def test_network_policies(kubectl, api):
    networking = client.NetworkingV1Api(api)
    manifest = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: db}\nspec:\n  podSelector: {matchLabels: {app: db}}\n"
                "  ingress:\n  - from: [{podSelector: {matchLabels: {app: web}}}]\n    ports: [{port: 5432}]\n")  # fmt: skip
    kubectl("apply", "-f", "-", stdin=manifest)
    db = networking.read_namespaced_network_policy("db", "default")
    assert (db.spec.policy_types, db.spec.ingress[0].ports[0].protocol) == (["Ingress"], "TCP")
    egress = {"metadata": {"name": "out"}, "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53, "protocol": "UDP"}]}]}}
    assert networking.create_namespaced_network_policy("default", egress).spec.policy_types == ["Ingress", "Egress"]
    assert "serverside-applied" in kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=manifest.replace("5432", "5433")).stdout
    assert {row[0]: row[1] for row in rows(kubectl, "netpol")[1:]} == {"db": "app=db", "out": "<none>"}
    assert "PodSelector:     app=db" in kubectl("describe", "netpol", "db").stdout
    bad = {"metadata": {"name": "bad"}, "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 90, "endPort": 80, "protocol": "ICMP"}]}]}}
    body = invalid(lambda: networking.create_namespaced_network_policy("default", bad))
    assert "spec.ingress[0].ports[0].protocol: Unsupported value: \\\"ICMP\\\"" in body and "spec.ingress[0].ports[0].endPort" in body


def test_storage_classes(kubectl, api):
    storage = client.StorageV1Api(api)
    manifest = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n  annotations: {storageclass.kubernetes.io/is-default-class: 'true'}\n"
                "provisioner: rancher.io/local-path\nparameters: {type: ssd}\n")  # fmt: skip
    kubectl("apply", "-f", "-", stdin=manifest)
    standard = storage.read_storage_class("standard")
    assert (standard.reclaim_policy, standard.volume_binding_mode) == ("Delete", "Immediate")
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=manifest.replace("standard", "fast")).stdout
    table = rows(kubectl, "sc")
    assert table[0] == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
    assert ["standard", "(default)", "rancher.io/local-path", "Delete", "Immediate", "false"] == table[2][:6]
    assert "IsDefaultClass:  Yes" in kubectl("describe", "sc", "standard").stdout
    body = invalid(lambda: storage.patch_storage_class("standard", {"parameters": {"type": "hdd"}}))
    assert "parameters: Forbidden: updates to parameters are forbidden." in body


def test_endpoint_slices(kubectl, api):
    discovery = client.DiscoveryV1Api(api)
    manifest = ("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: web-abc\n  labels: {kubernetes.io/service-name: web}\n"
                "addressType: IPv4\nports: [{port: 80}]\nendpoints:\n- addresses: [10.0.0.1]\n- addresses: [10.0.0.2]\n")  # fmt: skip
    kubectl("apply", "-f", "-", stdin=manifest)
    web = discovery.read_namespaced_endpoint_slice("web-abc", "default")
    assert (web.ports[0].protocol, web.ports[0].name, web.metadata.generation) == ("TCP", "", 1)
    assert "serverside-applied" in kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=manifest.replace("10.0.0.2", "10.0.0.3")).stdout
    assert rows(kubectl, "endpointslices", "-l", "kubernetes.io/service-name=web")[1][:4] == ["web-abc", "IPv4", "80", "10.0.0.1,10.0.0.3"]
    assert "AddressType:  IPv4" in kubectl("describe", "endpointslice", "web-abc").stdout
    body = invalid(lambda: discovery.patch_namespaced_endpoint_slice("web-abc", "default", {"addressType": "IPv6"}))
    assert "addressType: Invalid value: \\\"IPv6\\\": field is immutable" in body and "must be a valid IPv6 address" in body


HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  maxReplicas: 7
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}
"""


def test_horizontal_pod_autoscalers_in_v2_and_v1(kubectl, api):
    v2, v1 = client.AutoscalingV2Api(api), client.AutoscalingV1Api(api)
    kubectl("create", "deployment", "web", "--image=nginx")
    assert "autoscaled" in kubectl("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=70").stdout  # autoscaling/v1, protobuf
    web = v2.read_namespaced_horizontal_pod_autoscaler("web", "default")
    assert (web.spec.min_replicas, web.spec.max_replicas, web.spec.metrics[0].resource.target.average_utilization, web.status.desired_replicas) == (2, 5, 70, 0)
    as_v1 = v1.read_namespaced_horizontal_pod_autoscaler("web", "default")
    assert (as_v1.spec.target_cpu_utilization_percentage, as_v1.status.current_replicas) == (70, 0)
    kubectl("apply", "-f", "-", stdin=HPA)
    api_hpa = v2.read_namespaced_horizontal_pod_autoscaler("api", "default")
    assert api_hpa.spec.min_replicas == 1 and api_hpa.spec.behavior is None
    old = v1.read_namespaced_horizontal_pod_autoscaler("api", "default")
    assert old.spec.target_cpu_utilization_percentage == 60 and "memory" in old.metadata.annotations["autoscaling.alpha.kubernetes.io/metrics"]
    old.spec.max_replicas = 9
    v1.replace_namespaced_horizontal_pod_autoscaler("api", "default", old)  # the memory metric comes back from the annotation
    api_hpa = v2.read_namespaced_horizontal_pod_autoscaler("api", "default")
    assert (api_hpa.spec.max_replicas, [m.resource.name for m in api_hpa.spec.metrics]) == (9, ["memory", "cpu"])
    assert not any(key.startswith("autoscaling.alpha") for key in api_hpa.metadata.annotations)
    behavior = HPA.replace("  maxReplicas: 7\n", "  maxReplicas: 7\n  behavior:\n    scaleDown: {stabilizationWindowSeconds: 60}\n")
    assert "serverside-applied" in kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=behavior).stdout
    rules = v2.read_namespaced_horizontal_pod_autoscaler("api", "default").spec.behavior
    assert (rules.scale_down.stabilization_window_seconds, rules.scale_down.select_policy, rules.scale_up.policies[0].value) == (60, "Max", 4)
    table = rows(kubectl, "hpa")
    assert table[0] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert {row[0]: row[1:] for row in table[1:]}["web"][:6] == ["Deployment/web", "cpu:", "<unknown>/70%", "2", "5", "0"]
    assert "resource cpu on pods  (as a percentage of request):  <unknown> / 70%" in kubectl("describe", "hpa", "web").stdout
    bad = {"metadata": {"name": "bad"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"}, "minReplicas": 4, "maxReplicas": 2}}
    assert "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`" in invalid(lambda: v2.create_namespaced_horizontal_pod_autoscaler("default", bad))


METRICS = """apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {name: metrics-server, namespace: kube-system}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
"""
CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""


def test_api_services_list_the_served_group_versions_as_local(kubectl, api):
    registration = client.ApiregistrationV1Api(api)
    table = {row[0]: row[1:] for row in rows(kubectl, "apiservices")[1:]}
    for name in ("v1.", "v1.apps", "v2.autoscaling", "v1.policy", "v1.networking.k8s.io", "v1.apiregistration.k8s.io", "v1alpha1.devmgmtproto.k8s.io"):
        assert table[name][:2] == ["Local", "True"], name
    apps = registration.read_api_service("v1.apps")
    assert (apps.spec.group_priority_minimum, apps.spec.version_priority, apps.spec.service) == (17800, 15, None)
    assert apps.status.conditions[0].reason == "Local" and apps.metadata.labels == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    kubectl("apply", "-f", "-", stdin=CRD)
    assert registration.read_api_service("v1.example.com").metadata.labels == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    kubectl("delete", "crd", "widgets.example.com")
    assert "v1.example.com" not in {row[0] for row in rows(kubectl, "apiservices")}
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=METRICS).stdout
    assert {row[0]: row[1:] for row in rows(kubectl, "apiservices")[1:]}["v1beta1.metrics.k8s.io"][:3] == ["kube-system/metrics-server", "False", "(ServiceNotFound)"]
    assert 'service/metrics-server in "kube-system" is not present' in kubectl("describe", "apiservice", "v1beta1.metrics.k8s.io").stdout
    wrong = {"metadata": {"name": "v1.wrong"}, "spec": {"group": "example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 15}}
    assert 'metadata.name: Invalid value: \\"v1.wrong\\": must be `spec.version+\\".\\"+spec.group`' in invalid(lambda: registration.create_api_service(wrong))
