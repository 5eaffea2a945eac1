"""PriorityClass, ServiceAccount and Service end to end: kubectl (create, expose, apply, apply
--server-side, get, describe) and the kubernetes client, with the defaults, allocations and refusals
a real kube-apiserver 1.32 gives."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.e2e


@pytest.fixture
def scheduling(api):
    return client.SchedulingV1Api(api)


def pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}  # fmt: skip


def forbidden(call) -> str:
    with pytest.raises(ApiException) as caught:
        call()
    assert caught.value.status == 403, caught.value.body
    return caught.value.body


def invalid(call) -> str:
    with pytest.raises(ApiException) as caught:
        call()
    assert caught.value.status == 422, caught.value.body
    return caught.value.body


# ------------------------------------------------------------------------------ PriorityClass
def test_the_system_priority_classes_exist_and_cannot_be_deleted(kubectl):
    out = kubectl("get", "priorityclasses").stdout.splitlines()
    assert out[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    rows = {line.split()[0]: line.split() for line in out[1:]}
    assert rows["system-node-critical"][1:3] == ["2000001000", "false"]
    assert rows["system-cluster-critical"][1:3] == ["2000000000", "false"]
    assert rows["system-cluster-critical"][-1] == "PreemptLowerPriority"
    refused = kubectl("delete", "pc", "system-node-critical", check=False)
    assert refused.returncode == 1
    assert 'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted' in refused.stderr


def test_kubectl_create_priorityclass_gets_kubes_default_preemption_policy(kubectl, scheduling):
    kubectl("create", "priorityclass", "high", "--value=1000", "--description=important")
    pc = scheduling.read_priority_class("high")
    assert (pc.value, pc.description, pc.preemption_policy, pc.global_default) == (1000, "important", "PreemptLowerPriority", None)


def test_priority_class_validation_and_the_one_default_rule(scheduling):
    def make(name, value, **fields):
        return lambda: scheduling.create_priority_class({"metadata": {"name": name}, "value": value, **fields})

    assert "value: Forbidden: maximum allowed value of a user defined priority is 1000000000" in invalid(make("huge", 1_000_000_001))
    assert ("metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            "error: name system-mine is not a known system priority class") in invalid(make("system-mine", 5))  # fmt: skip
    assert 'preemptionPolicy: Unsupported value: \\"Sometimes\\"' in invalid(make("odd", 5, preemptionPolicy="Sometimes"))
    make("first", 10, globalDefault=True)()
    body = forbidden(make("second", 20, globalDefault=True))
    assert 'priorityclasses.scheduling.k8s.io \\"second\\" is forbidden: PriorityClass first is already marked as default. Only one default can exist' in body
    assert "value: Forbidden: may not be changed in an update." in invalid(lambda: scheduling.patch_priority_class("first", {"value": 11}))


def test_a_pods_priority_class_resolves_to_its_priority_and_preemption_policy(core, scheduling):
    scheduling.create_priority_class({"metadata": {"name": "batch"}, "value": 50, "preemptionPolicy": "Never"})
    created = core.create_namespaced_pod("default", pod("a", priorityClassName="batch"))
    assert (created.spec.priority, created.spec.preemption_policy, created.spec.priority_class_name) == (50, "Never", "batch")
    critical = core.create_namespaced_pod("default", pod("b", priorityClassName="system-node-critical"))
    assert critical.spec.priority == 2000001000


def test_a_pod_without_a_class_gets_priority_zero_or_the_global_defaults(core, scheduling):
    plain = core.create_namespaced_pod("default", pod("plain"))
    assert (plain.spec.priority, plain.spec.preemption_policy, plain.spec.priority_class_name) == (0, "PreemptLowerPriority", None)
    scheduling.create_priority_class({"metadata": {"name": "usual"}, "value": 7, "globalDefault": True})
    defaulted = core.create_namespaced_pod("default", pod("defaulted"))
    assert (defaulted.spec.priority, defaulted.spec.priority_class_name) == (7, "usual")


def test_an_unknown_class_or_a_priority_given_by_hand_is_refused_as_the_priority_plugin_does(core):
    body = forbidden(lambda: core.create_namespaced_pod("default", pod("lost", priorityClassName="nope")))
    assert 'pods \\"lost\\" is forbidden: no PriorityClass with name nope was found' in body
    body = forbidden(lambda: core.create_namespaced_pod("default", pod("eager", priority=5)))
    assert "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name" in body


def test_an_update_that_leaves_out_the_priority_keeps_it(core, scheduling, http):
    scheduling.create_priority_class({"metadata": {"name": "mid"}, "value": 30})
    stored = core.create_namespaced_pod("default", pod("kept", priorityClassName="mid")).to_dict()
    body = http.get("/api/v1/namespaces/default/pods/kept").json()
    del body["spec"]["priority"], body["spec"]["preemptionPolicy"]
    body["metadata"]["labels"] = {"app": "kept", "more": "yes"}
    answer = http.put("/api/v1/namespaces/default/pods/kept", json=body)
    assert answer.status_code == 200, answer.text
    assert (answer.json()["spec"]["priority"], answer.json()["spec"]["preemptionPolicy"]) == (30, "PreemptLowerPriority")
    assert stored["spec"]["priority"] == 30


# ----------------------------------------------------------------------------- ServiceAccount
def test_every_namespace_has_a_default_service_account_made_again_when_deleted(kubectl, core):
    listed = kubectl("get", "serviceaccounts", "-A").stdout.splitlines()
    assert listed[0].split() == ["NAMESPACE", "NAME", "SECRETS", "AGE"]
    assert sorted(line.split()[0] for line in listed[1:] if line.split()[1] == "default") == ["default", "kube-public", "kube-system"]
    core.create_namespace({"metadata": {"name": "team"}})
    first = core.read_namespaced_service_account("default", "team")
    core.delete_namespaced_service_account("default", "team")
    again = core.read_namespaced_service_account("default", "team")
    assert again.metadata.uid != first.metadata.uid
    core.delete_namespace("team")
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_service_account("default", "team")
    assert caught.value.status == 404


def test_kubectl_create_serviceaccount_and_describe(kubectl, core):
    kubectl("create", "serviceaccount", "bot")
    assert core.read_namespaced_service_account("bot", "default").metadata.name == "bot"
    assert "Name:" in kubectl("describe", "sa", "bot").stdout


# ------------------------------------------------------------------------------------ Service
def test_kubectl_create_service_gets_kubes_defaults_and_a_cluster_ip(kubectl, core):
    kubectl("create", "service", "clusterip", "web", "--tcp=80:8080")
    svc = core.read_namespaced_service("web", "default").to_dict()
    spec = svc["spec"]
    assert spec["cluster_ip"] == "10.96.1.1" and spec["cluster_ips"] == ["10.96.1.1"]
    assert (spec["type"], spec["session_affinity"], spec["ip_families"], spec["ip_family_policy"], spec["internal_traffic_policy"]) == (
        "ClusterIP", "None", ["IPv4"], "SingleStack", "Cluster")
    assert spec["ports"] == [{"name": "80-8080", "port": 80, "protocol": "TCP", "target_port": 8080, "node_port": None, "app_protocol": None}]
    assert spec["external_traffic_policy"] is None
    assert svc["status"] == {"conditions": None, "load_balancer": {"ingress": None}}


def test_target_port_defaults_to_the_port_and_node_ports_come_from_the_range(core):
    svc = core.create_namespaced_service("default", {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "selector": {"app": "x"}, "ports": [{"port": 443}]}})
    (port,) = svc.spec.ports
    assert (port.target_port, port.protocol, port.node_port) == (443, "TCP", 30128)
    assert svc.spec.external_traffic_policy == "Cluster"


def test_kubectl_get_and_expose_show_kubes_columns(kubectl, core):
    core.create_namespaced_pod("default", pod("server"))
    kubectl("expose", "pod", "server", "--port=81", "--target-port=8081", "--type=NodePort", "--name=exposed")
    kubectl("create", "service", "externalname", "outside", "--external-name=example.com")
    lines = kubectl("get", "services", "-o", "wide").stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["exposed"][1:5] == ["NodePort", "10.96.1.1", "<none>", "81:30128/TCP"]
    assert rows["exposed"][-1] == "app=server"
    assert rows["outside"][1:5] == ["ExternalName", "<none>", "example.com", "<none>"]
    described = kubectl("describe", "service", "exposed").stdout
    assert "IP Family Policy:         SingleStack" in described and "NodePort:                 <unset>  30128/TCP" in described


def test_a_taken_or_out_of_range_address_or_node_port_is_refused(core):
    def make(name, **spec):
        return lambda: core.create_namespaced_service("default", {"metadata": {"name": name}, "spec": {"ports": [{"port": 80}], **spec}})

    make("first", clusterIP="10.96.0.10", type="NodePort", ports=[{"port": 80, "nodePort": 30080}])()
    assert "spec.clusterIPs: Invalid value: [\\\"10.96.0.10\\\"]: failed to allocate IP 10.96.0.10: provided IP is already allocated" in invalid(make("same-ip", clusterIP="10.96.0.10"))
    assert ("failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the valid range. "
            "The range of valid IPs is 10.96.0.0/12") in invalid(make("far-ip", clusterIP="192.168.0.1"))  # fmt: skip
    assert "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated" in invalid(make("same-port", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert ("spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. "
            "The range of valid ports is 30000-32767") in invalid(make("low-port", type="NodePort", ports=[{"port": 80, "nodePort": 80}]))  # fmt: skip


def test_validation_a_client_meets(core):
    def make(**spec):
        return lambda: core.create_namespaced_service("default", {"metadata": {"name": "bad"}, "spec": spec})

    assert "spec.ports: Required value" in invalid(make(selector={"a": "b"}))
    assert "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive" in invalid(make(ports=[{"port": 70000}]))
    assert "spec.ports[1].name: Required value" in invalid(make(ports=[{"port": 80, "name": "a"}, {"port": 81}]))
    assert "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'" in invalid(make(ports=[{"port": 80, "nodePort": 30001}]))


def test_the_cluster_ip_is_immutable_but_an_update_without_it_keeps_it(core, kubectl, tmp_path):
    manifest = tmp_path / "svc.yaml"
    manifest.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: kept}\nspec:\n  selector: {app: kept}\n  ports: [{name: http, port: 80}]\n")
    kubectl("apply", "-f", str(manifest))
    first = core.read_namespaced_service("kept", "default").spec
    manifest.write_text(manifest.read_text() + "  type: NodePort\n")
    kubectl("apply", "-f", str(manifest))
    kubectl("replace", "-f", str(manifest))
    after = core.read_namespaced_service("kept", "default").spec
    assert after.cluster_ip == first.cluster_ip and after.ports[0].node_port == 30128
    body = invalid(lambda: core.patch_namespaced_service("kept", "default", {"spec": {"clusterIP": "10.96.7.7"}}))
    assert 'spec.clusterIP: Invalid value: \\"10.96.7.7\\": field is immutable' in body


def test_server_side_apply_creates_and_updates_a_service_keyed_by_port(kubectl, core, tmp_path):
    manifest = tmp_path / "svc.yaml"
    manifest.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: ssa}\nspec:\n  selector: {app: x}\n"
                        "  ports: [{name: a, port: 80}, {name: b, port: 443, targetPort: https}]\n")  # fmt: skip
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", str(manifest)).stdout
    kubectl("apply", "--server-side", "-f", str(manifest))
    ports = core.read_namespaced_service("ssa", "default").spec.ports
    assert [(p.name, p.port, p.target_port) for p in ports] == [("a", 80, 80), ("b", 443, "https")]


def test_a_configured_cluster_ip_range(make_live):
    server = make_live(service_cluster_ip_range="10.0.0.0/24", service_node_port_range="31000-31100")
    with server.mockapi.api_client() as api:
        svc = client.CoreV1Api(api).create_namespaced_service(
            "default", {"metadata": {"name": "x"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}})  # fmt: skip
    assert svc.spec.cluster_ip == "10.0.0.17" and svc.spec.ports[0].node_port == 31016


def test_a_reset_keeps_what_the_cluster_made_for_itself(live, core, scheduling):
    core.create_namespaced_service("default", {"metadata": {"name": "gone"}, "spec": {"ports": [{"port": 80}]}})
    live.mockapi.reset()
    assert [s.metadata.name for s in core.list_namespaced_service_account("default").items] == ["default"]
    assert {pc.metadata.name for pc in scheduling.list_priority_class().items} == {"system-node-critical", "system-cluster-critical"}
    assert core.list_namespaced_service("default").items == []


# -------------------------------------------------------------------------------------- Lease
def test_a_lease_for_leader_election_with_kubectls_holder_column(api, kubectl):
    coordination = client.CoordinationV1Api(api)
    body = {"metadata": {"name": "my-controller"}, "spec": {"holderIdentity": "pod-a_1234", "leaseDurationSeconds": 15,
            "acquireTime": "2024-01-01T00:00:00.000000Z", "renewTime": "2024-01-01T00:00:05.123456Z", "leaseTransitions": 0}}  # fmt: skip
    created = coordination.create_namespaced_lease("kube-system", body)
    assert created.spec.renew_time.microsecond == 123456
    renewed = coordination.patch_namespaced_lease("my-controller", "kube-system", {"spec": {"holderIdentity": "pod-b_5678", "leaseTransitions": 1}})
    assert (renewed.spec.holder_identity, renewed.spec.lease_transitions) == ("pod-b_5678", 1)
    lines = kubectl("get", "leases", "-n", "kube-system").stdout.splitlines()
    assert lines[0].split() == ["NAME", "HOLDER", "AGE"] and lines[1].split()[:2] == ["my-controller", "pod-b_5678"]
    body["metadata"]["name"] = "bad"
    body["spec"]["leaseDurationSeconds"] = 0
    assert "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0" in invalid(lambda: coordination.create_namespaced_lease("default", body))
