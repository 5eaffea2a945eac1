"""The built-in kinds (core v1 and CustomResourceDefinition) as CRD-shaped manifests."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from mockapi import gvk
from mockapi.registry import builtin

# Pods written in the prototype's shapes (containers[].devices, deviceClaims[] three ways).
PROTOTYPE_PODS = Path(__file__).resolve().parent / "manifests" / "prototype-pods.yaml"
QUANTITY_PATTERN = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
# The prototype's embedded-claim pods embed a claim *detail* (deviceClass) where DeviceClaimSpec
# has claims[]; that is the one shape outside the schema we accept from its testdata.
PROTOTYPE_CLAIM_SHAPE = {"spec.deviceClaims[].claim.deviceClass"}

EXPECTED = {
    # kind: (group, plural, namespaced, short names, categories, subresources)
    "Namespace": ("", "namespaces", False, ("ns",), (), {"status"}),
    "ConfigMap": ("", "configmaps", True, ("cm",), (), set()),
    "Secret": ("", "secrets", True, (), (), set()),
    "Pod": ("", "pods", True, ("po",), ("all",), {"status"}),
    "Node": ("", "nodes", False, ("no",), (), {"status"}),
    "Event": ("", "events", True, ("ev",), (), set()),
    "Service": ("", "services", True, ("svc",), ("all",), {"status"}),
    "ServiceAccount": ("", "serviceaccounts", True, ("sa",), (), set()),
    "PriorityClass": ("scheduling.k8s.io", "priorityclasses", False, ("pc",), (), set()),
    "Lease": ("coordination.k8s.io", "leases", True, (), (), set()),
    "Deployment": ("apps", "deployments", True, ("deploy",), ("all",), {"status", "scale"}),
    "ReplicaSet": ("apps", "replicasets", True, ("rs",), ("all",), {"status", "scale"}),
    "StatefulSet": ("apps", "statefulsets", True, ("sts",), ("all",), {"status", "scale"}),
    "DaemonSet": ("apps", "daemonsets", True, ("ds",), ("all",), {"status"}),
    "Job": ("batch", "jobs", True, (), ("all",), {"status"}),
    "CronJob": ("batch", "cronjobs", True, ("cj",), ("all",), {"status"}),
    "CustomResourceDefinition": (
        "apiextensions.k8s.io", "customresourcedefinitions", False, ("crd", "crds"), ("api-extensions",), {"status"},
    ),
    "Role": ("rbac.authorization.k8s.io", "roles", True, (), (), set()),
    "ClusterRole": ("rbac.authorization.k8s.io", "clusterroles", False, (), (), set()),
    "RoleBinding": ("rbac.authorization.k8s.io", "rolebindings", True, (), (), set()),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io", "clusterrolebindings", False, (), (), set()),
    "SubjectAccessReview": ("authorization.k8s.io", "subjectaccessreviews", False, (), (), set()),
    "SelfSubjectAccessReview": ("authorization.k8s.io", "selfsubjectaccessreviews", False, (), (), set()),
    "LocalSubjectAccessReview": ("authorization.k8s.io", "localsubjectaccessreviews", True, (), (), set()),
    "SelfSubjectRulesReview": ("authorization.k8s.io", "selfsubjectrulesreviews", False, (), (), set()),
    # issue 12's second slice: policy, networking, storage, discovery
    "PodDisruptionBudget": ("policy", "poddisruptionbudgets", True, ("pdb",), (), {"status"}),
    "Ingress": ("networking.k8s.io", "ingresses", True, ("ing",), (), {"status"}),
    "IngressClass": ("networking.k8s.io", "ingressclasses", False, (), (), set()),
    "NetworkPolicy": ("networking.k8s.io", "networkpolicies", True, ("netpol",), (), set()),
    "StorageClass": ("storage.k8s.io", "storageclasses", False, ("sc",), (), set()),
    "EndpointSlice": ("discovery.k8s.io", "endpointslices", True, (), (), set()),
    "HorizontalPodAutoscaler": ("autoscaling", "horizontalpodautoscalers", True, ("hpa",), ("all",), {"status"}),
    "APIService": ("apiregistration.k8s.io", "apiservices", False, (), ("api-extensions",), {"status"}),
    # issue 12: core/v1 storage, endpoints, replication and policy kinds; apps/v1 ControllerRevision
    "PersistentVolumeClaim": ("", "persistentvolumeclaims", True, ("pvc",), (), {"status"}),
    "PersistentVolume": ("", "persistentvolumes", False, ("pv",), (), {"status"}),
    "Endpoints": ("", "endpoints", True, ("ep",), (), set()),
    "ReplicationController": ("", "replicationcontrollers", True, ("rc",), ("all",), {"status", "scale"}),
    "PodTemplate": ("", "podtemplates", True, (), (), set()),
    "LimitRange": ("", "limitranges", True, ("limits",), (), set()),
    "ResourceQuota": ("", "resourcequotas", True, ("quota",), (), {"status"}),
    "ControllerRevision": ("apps", "controllerrevisions", True, (), (), set()),
}
# Kinds served in more than one version: the stored one first.
VERSIONS = {"HorizontalPodAutoscaler": ("v2", "v1")}

SELECTABLE = {
    "Namespace": ("status.phase",),
    "ConfigMap": (),
    "Secret": ("type",),
    "Pod": (
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName",
    ),
    "Node": ("spec.unschedulable",),
    "Event": (
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
        "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
        "reason", "reportingComponent", "source", "type",
    ),
    "CustomResourceDefinition": (),
    "Service": ("spec.clusterIP", "spec.type"),
    "ServiceAccount": (),
    "PriorityClass": (),
    "Lease": (),
    "Deployment": (),
    "ReplicaSet": (),
    "StatefulSet": (),
    "DaemonSet": (),
    "Job": (),
    "CronJob": (),
    **{kind: () for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    **{kind: () for kind in ("SubjectAccessReview", "SelfSubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectRulesReview")},
    **{kind: () for kind in ("PodDisruptionBudget", "Ingress", "IngressClass", "NetworkPolicy", "StorageClass", "EndpointSlice", "HorizontalPodAutoscaler", "APIService")},
    **{kind: () for kind in ("PersistentVolumeClaim", "PersistentVolume", "Endpoints", "PodTemplate", "LimitRange", "ResourceQuota", "ControllerRevision")},
    "ReplicationController": ("status.replicas",),
}
# Field selectors kube-apiserver computes rather than reads from one scalar field.
COMPUTED_SELECTABLE = {("Event", "source")}

# ----------------------------------------------------------------------------------- helpers


def by_kind() -> dict[str, dict]:
    return {m["spec"]["names"]["kind"]: m for m in builtin.manifests()}


def schema_of(kind: str) -> dict:
    return by_kind()[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def resource_type(kind: str) -> gvk.ResourceType:
    """The kind in its stored (first) version."""
    return gvk.from_crd(by_kind()[kind], builtin=True)[0]


def structural_nodes(node: dict, path: str = "") -> Iterator[tuple[str, dict]]:
    """Every node of the structural part of a schema (not inside anyOf/oneOf/allOf/not)."""
    yield path, node
    for name, child in (node.get("properties") or {}).items():
        yield from structural_nodes(child, f"{path}.{name}" if path else name)
    if isinstance(node.get("items"), dict):
        yield from structural_nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from structural_nodes(node["additionalProperties"], f"{path}{{}}")


def node_at(schema: dict, dotted: str) -> dict | None:
    node = schema
    for part in dotted.split("."):
        node = (node.get("properties") or {}).get(part)
        if node is None:
            return None
    return node


def undeclared_fields(schema: dict, value: Any, path: str = "") -> Iterator[str]:
    """Field paths of ``value`` that ``schema`` does not declare.

    Stricter than pruning: a preserve-unknown node that declares properties still counts its
    undeclared fields; only an opaque node (preserve-unknown, no properties) accepts anything.
    The root ``metadata`` is the server's business and is skipped.
    """
    if isinstance(value, list):
        for item in value:
            yield from undeclared_fields(schema.get("items") or {}, item, f"{path}[]")
        return
    if not isinstance(value, dict):
        return
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    opaque = schema.get("x-kubernetes-preserve-unknown-fields") and not properties and not isinstance(extra, dict)
    for name, child_value in value.items():
        child_path = f"{path}.{name}" if path else name
        if child_path == "metadata":
            continue
        child = properties.get(name) or (extra if isinstance(extra, dict) else None)
        if child is None:
            if not opaque:
                yield child_path
            continue
        yield from undeclared_fields(child, child_value, child_path)


def prototype_pods() -> list[dict]:
    return [doc for doc in yaml.safe_load_all(PROTOTYPE_PODS.read_text()) if doc and doc.get("kind") == "Pod"]


# ------------------------------------------------------------------------ manifests and types


def test_every_builtin_kind_has_exactly_one_manifest():
    kinds = [m["spec"]["names"]["kind"] for m in builtin.manifests()]
    assert sorted(kinds) == sorted(EXPECTED)


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_manifest_becomes_exactly_one_builtin_resource_type(kind):
    group, plural, namespaced, short_names, categories, subresources = EXPECTED[kind]
    rts = gvk.from_crd(by_kind()[kind], builtin=True)
    assert [rt.version for rt in rts] == list(VERSIONS.get(kind, ("v1",)))
    rt = rts[0]
    assert (rt.group, rt.kind, rt.plural) == (group, kind, plural)
    assert rt.namespaced is namespaced
    assert rt.short_names == short_names
    assert rt.categories == categories
    assert set(rt.subresources) == subresources
    assert rt.singular == kind.lower()
    assert rt.list_kind == f"{kind}List"
    assert rt.builtin is True
    assert rt.schema == schema_of(kind)


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_manifest_is_named_plural_dot_group_with_core_for_the_core_group(kind):
    manifest = by_kind()[kind]
    spec = manifest["spec"]
    assert manifest["apiVersion"] == "apiextensions.k8s.io/v1"
    assert manifest["kind"] == "CustomResourceDefinition"
    assert manifest["metadata"]["name"] == f"{spec['names']['plural']}.{spec['group'] or 'core'}"


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_selectable_fields_are_the_ones_kube_apiserver_accepts(kind):
    assert resource_type(kind).selectable_fields == SELECTABLE[kind]


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_selectable_fields_point_at_declared_scalar_fields(kind):
    schema = schema_of(kind)
    for path in resource_type(kind).selectable_fields:
        node = node_at(schema, path)
        assert node is not None, path
        if (kind, path) not in COMPUTED_SELECTABLE:
            assert node["type"] in ("string", "boolean", "integer"), path


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_printer_columns_read_declared_fields(kind):
    schema = schema_of(kind)
    for column in resource_type(kind).printer_columns:
        path = column.json_path.lstrip(".")
        assert path == "metadata.creationTimestamp" or node_at(schema, path) is not None, column
        assert column.type in ("string", "integer", "number", "boolean", "date")


def test_printer_columns_match_kube_apiserver_where_a_json_path_can():
    columns = {kind: [(c.name, c.json_path, c.priority) for c in resource_type(kind).printer_columns] for kind in EXPECTED}
    age = ("Age", ".metadata.creationTimestamp", 0)
    assert columns["ConfigMap"] == []  # the default Age column is served
    assert columns["Secret"] == [("Type", ".type", 0), age]
    assert columns["Namespace"] == [("Status", ".status.phase", 0), age]
    assert columns["CustomResourceDefinition"] == [("Created At", ".metadata.creationTimestamp", 0)]
    assert [name for name, _, priority in columns["Event"] if priority == 0] == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert ("Node", ".spec.nodeName", 1) in columns["Pod"]
    assert ("Version", ".status.nodeInfo.kubeletVersion", 0) in columns["Node"]


def test_crd_created_at_is_a_timestamp_not_an_age():
    (column,) = resource_type("CustomResourceDefinition").printer_columns
    assert column.type == "string"


def test_manifests_returns_fresh_objects_each_call():
    first = builtin.manifests()
    first[0]["spec"]["names"]["kind"] = "Changed"
    schema_of("Pod")["properties"]["spec"]["properties"].clear()
    assert "Changed" not in [m["spec"]["names"]["kind"] for m in builtin.manifests()]
    assert "containers" in schema_of("Pod")["properties"]["spec"]["properties"]


def test_schema_nodes_written_once_in_yaml_are_not_shared_objects():
    spec = schema_of("Pod")["properties"]["spec"]["properties"]
    assert spec["containers"]["items"] == spec["initContainers"]["items"]
    assert spec["containers"]["items"] is not spec["initContainers"]["items"]


# ------------------------------------------------------------------------- structural schemas


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_every_schema_node_has_a_type_or_is_int_or_string(kind):
    for path, node in structural_nodes(schema_of(kind)):
        if node.get("x-kubernetes-int-or-string"):
            assert "type" not in node, path
        else:
            assert node.get("type") in ("object", "array", "string", "integer", "number", "boolean"), path
        if node.get("type") == "array":
            assert isinstance(node.get("items"), dict), path


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_schemas_use_no_references_and_no_types_inside_logical_junctors(kind):
    def check(value: Any, path: str) -> None:
        if isinstance(value, dict):
            assert "$ref" not in value, path
            for junctor in ("anyOf", "oneOf", "allOf"):
                for branch in value.get(junctor) or ():
                    allowed = value.get("x-kubernetes-int-or-string") and junctor == "anyOf"
                    assert allowed or not {"type", "description", "default", "nullable", "additionalProperties"} & set(branch), path
            for key, child in value.items():
                check(child, f"{path}/{key}")
        elif isinstance(value, list):
            for index, child in enumerate(value):
                check(child, f"{path}/{index}")

    check(schema_of(kind), "")


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_root_declares_api_version_kind_and_bare_metadata(kind):
    schema = schema_of(kind)
    assert schema["type"] == "object"
    assert schema["description"]
    assert schema["properties"]["apiVersion"]["type"] == "string"
    assert schema["properties"]["kind"]["type"] == "string"
    assert schema["properties"]["metadata"] == {"type": "object"}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_every_named_field_has_a_description_for_kubectl_explain(kind):
    for path, node in structural_nodes(schema_of(kind)):
        if path and path != "metadata" and not path.endswith(("[]", "{}")):
            assert node.get("description"), path


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_defaults_are_valid_for_their_node(kind):
    for path, node in structural_nodes(schema_of(kind)):
        if "default" in node:
            python_type = {"string": str, "boolean": bool, "integer": int, "object": dict, "array": list}[node["type"]]
            assert isinstance(node["default"], python_type), path
            assert node["default"] in node.get("enum", [node["default"]]), path


def quantity_nodes() -> Iterator[tuple[str, dict]]:
    for kind in EXPECTED:
        for path, node in structural_nodes(schema_of(kind)):
            # generated kinds' IntOrString fields (ports, maxSurge) are int-or-string without a pattern
            if node.get("x-kubernetes-int-or-string") and ("pattern" in node or kind in ("Pod", "Node")):
                yield f"{kind}:{path}", node


def test_int_or_string_ports_have_no_pattern():
    node = node_at(schema_of("Service"), "spec.ports")["items"]["properties"]["targetPort"]
    assert node == {"description": node["description"], "anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}


def test_quantities_are_int_or_string_with_the_kubernetes_quantity_pattern():
    found = dict(quantity_nodes())
    assert {"Pod:spec.containers[].resources.requests{}", "Pod:spec.containers[].resources.limits{}",
            "Node:status.capacity{}", "Node:status.allocatable{}"} <= set(found)
    for path, node in found.items():
        assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}], path
        assert node["pattern"] == QUANTITY_PATTERN, path


_digits = st.text("0123456789", min_size=1, max_size=6)
_number = st.one_of(_digits, st.builds("{}.{}".format, _digits, st.text("0123456789", max_size=3)), st.builds(".{}".format, _digits))
_suffix = st.one_of(
    st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"]),
    st.builds("{}{}{}".format, st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), _number),
)


@given(sign=st.sampled_from(["", "+", "-"]), number=_number, suffix=_suffix)
def test_the_quantity_pattern_accepts_every_kubernetes_quantity(sign, number, suffix):
    assert re.search(QUANTITY_PATTERN, f"{sign}{number}{suffix}")


@given(number=_number, junk=st.sampled_from(["B", "GB", "gi", "K", "x", " ", "Gi1", ".5.5", "ii"]))
def test_the_quantity_pattern_rejects_malformed_suffixes(number, junk):
    assert not re.search(QUANTITY_PATTERN, f"{number}{junk}")


@pytest.mark.parametrize("bad", ["", "abc", "1 Gi", "--1", "1.2.3", "Gi", "1e", "1Ki2"])
def test_the_quantity_pattern_rejects_non_quantities(bad):
    assert not re.search(QUANTITY_PATTERN, bad)


# ------------------------------------------------------------------- core kinds' field shapes


def test_pod_declares_the_prototype_device_claims_and_container_devices():
    spec = schema_of("Pod")["properties"]["spec"]
    claims = spec["properties"]["deviceClaims"]
    assert claims["type"] == "array"
    assert claims["x-kubernetes-patch-merge-key"] == "name"
    assert claims["x-kubernetes-patch-strategy"] == "merge"
    item = claims["items"]
    assert item["required"] == ["name"]
    assert set(item["properties"]) == {"name", "claim", "claimName", "claimTemplateName"}
    assert "oneOf" not in item  # one source per entry: the Pod strategy checks it, with DRA's wording
    assert item["properties"]["claim"]["type"] == "object"
    assert item["properties"]["claim"]["x-kubernetes-preserve-unknown-fields"] is True

    devices = spec["properties"]["containers"]["items"]["properties"]["devices"]
    assert devices["x-kubernetes-patch-merge-key"] == "name"
    assert devices["x-kubernetes-patch-strategy"] == "merge"
    assert devices["items"]["required"] == ["name"]
    assert set(devices["items"]["properties"]) == {"name"}


@pytest.mark.parametrize(
    ("kind", "path", "strategy", "merge_key"),
    [
        ("Pod", "spec.containers", "merge", "name"),
        ("Pod", "spec.initContainers", "merge", "name"),
        ("Pod", "spec.ephemeralContainers", "merge", "name"),
        ("Pod", "spec.volumes", "merge,retainKeys", "name"),
        ("Pod", "spec.resourceClaims", "merge,retainKeys", "name"),
        ("Pod", "spec.imagePullSecrets", "merge", "name"),
        ("Pod", "spec.hostAliases", "merge", "ip"),
        ("Pod", "spec.topologySpreadConstraints", "merge", "topologyKey"),
        ("Pod", "spec.schedulingGates", "merge", "name"),
        ("Pod", "status.conditions", "merge", "type"),
        ("Pod", "status.podIPs", "merge", "ip"),
        ("Pod", "status.hostIPs", "merge", "ip"),
        ("Node", "status.conditions", "merge", "type"),
        ("Node", "status.addresses", "merge", "type"),
        ("Node", "spec.podCIDRs", "merge", None),
        ("Namespace", "status.conditions", "merge", "type"),
    ],
)
def test_lists_carry_the_patch_strategy_kube_apiserver_publishes(kind, path, strategy, merge_key):
    node = node_at(schema_of(kind), path)
    assert node["x-kubernetes-patch-strategy"] == strategy
    assert node.get("x-kubernetes-patch-merge-key") == merge_key


@pytest.mark.parametrize(
    ("field", "merge_key"), [("env", "name"), ("ports", "containerPort"), ("volumeMounts", "mountPath"), ("volumeDevices", "devicePath")]
)
def test_container_lists_carry_their_upstream_merge_keys(field, merge_key):
    node = schema_of("Pod")["properties"]["spec"]["properties"]["containers"]["items"]["properties"][field]
    assert (node["x-kubernetes-patch-strategy"], node["x-kubernetes-patch-merge-key"]) == ("merge", merge_key)


@pytest.mark.parametrize(("kind", "path"), [("Pod", "spec.tolerations"), ("Node", "spec.taints"), ("Namespace", "spec.finalizers")])
def test_atomic_lists_have_no_patch_strategy(kind, path):
    assert "x-kubernetes-patch-strategy" not in node_at(schema_of(kind), path)


def test_pod_keeps_unmodelled_core_fields_but_types_the_modelled_ones():
    schema = schema_of("Pod")
    spec = schema["properties"]["spec"]
    container = spec["properties"]["containers"]["items"]
    for node in (spec, container, spec["properties"]["volumes"]["items"], schema["properties"]["status"]):
        assert node["x-kubernetes-preserve-unknown-fields"] is True
    assert container["required"] == ["name"]
    assert spec["required"] == ["containers"]
    requests = container["properties"]["resources"]["properties"]["requests"]
    assert requests["additionalProperties"]["x-kubernetes-int-or-string"] is True


def test_namespace_phase_is_active_or_terminating():
    assert node_at(schema_of("Namespace"), "status.phase")["enum"] == ["Active", "Terminating"]


def test_config_map_and_secret_data_are_string_maps_with_base64_where_binary():
    config_map, secret = schema_of("ConfigMap")["properties"], schema_of("Secret")["properties"]
    assert config_map["data"]["additionalProperties"] == {"type": "string"}
    assert config_map["binaryData"]["additionalProperties"] == {"type": "string", "format": "byte"}
    assert secret["data"]["additionalProperties"] == {"type": "string", "format": "byte"}
    assert secret["stringData"]["additionalProperties"] == {"type": "string"}
    assert config_map["immutable"]["type"] == secret["immutable"]["type"] == "boolean"


def test_event_requires_involved_object_and_declares_its_reference_fields():
    schema = schema_of("Event")
    assert schema["required"] == ["involvedObject"]
    assert set(schema["properties"]["involvedObject"]["properties"]) == {
        "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath",
    }


def test_crd_schema_requires_what_kube_requires():
    schema = schema_of("CustomResourceDefinition")
    spec = schema["properties"]["spec"]
    assert schema["required"] == ["spec"]
    assert spec["required"] == ["group", "names", "scope", "versions"]
    assert spec["properties"]["names"]["required"] == ["plural", "kind"]
    assert spec["properties"]["versions"]["items"]["required"] == ["name", "served", "storage"]
    embedded = node_at(schema, "spec.versions")["items"]["properties"]["schema"]["properties"]["openAPIV3Schema"]
    assert embedded == {**embedded, "type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert node_at(schema, "status.acceptedNames")["required"] == ["plural", "kind"]


# --------------------------------------------------------------------- the prototype's pods


def test_the_prototype_pods_are_found():
    assert len(prototype_pods()) == 3


@pytest.mark.parametrize("pod", prototype_pods(), ids=lambda pod: pod["metadata"]["name"])
def test_the_prototype_pods_use_no_field_outside_the_pod_schema(pod):
    assert set(undeclared_fields(schema_of("Pod"), pod)) <= PROTOTYPE_CLAIM_SHAPE


def test_the_undeclared_field_walk_notices_a_typo_under_a_preserve_unknown_node():
    pod = {"spec": {"containers": [{"name": "c", "devicez": []}], "deviceClaims": [{"name": "d", "claimNme": "x"}]}}
    assert set(undeclared_fields(schema_of("Pod"), pod)) == {"spec.containers[].devicez", "spec.deviceClaims[].claimNme"}


# ------------------------------------------------ against the structural schema implementation

REALISTIC = {
    "Pod": {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.27",
                    "command": ["nginx"],
                    "args": ["-g", "daemon off;"],
                    "env": [{"name": "MODE", "value": "fast"}, {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": 1, "memory": "128Mi"}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
                    "devices": [{"name": "gpu"}],
                }
            ],
            "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "deviceClaims": [{"name": "gpu", "claimName": "shared-gpu"}],
            "nodeName": "node-1",
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "restartPolicy": "Always",
            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
            "affinity": {"nodeAffinity": {}},
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2024-05-01T10:00:00Z"}],
            "podIP": "10.0.0.5",
            "podIPs": [{"ip": "10.0.0.5"}],
            "hostIP": "192.168.1.10",
            "startTime": "2024-05-01T10:00:00Z",
            "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0, "image": "nginx:1.27", "imageID": "", "state": {"running": {}}}],
            "qosClass": "Burstable",
        },
    },
    "ConfigMap": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default"},
        "data": {"mode": "fast", "config.yaml": "a: 1\n"},
        "binaryData": {"blob": "AAEC"},
        "immutable": False,
    },
    "Secret": {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "token", "namespace": "default"},
        "type": "Opaque",
        "data": {"password": "c2VjcmV0"},
        "stringData": {"user": "admin"},
    },
    "Event": {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "claim-a.17c1", "namespace": "default"},
        "involvedObject": {
            "apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaim", "namespace": "default",
            "name": "claim-a", "uid": "6f1c0d3e-4a2b-4c8d-9e10-2b7f5a6c1d84", "resourceVersion": "42",
        },
        "reason": "Allocated",
        "message": "allocated 1 device on node-1",
        "source": {"component": "devmgmtproto-allocator"},
        "firstTimestamp": "2024-05-01T10:00:00Z",
        "lastTimestamp": "2024-05-01T10:00:00Z",
        "count": 1,
        "type": "Normal",
        "eventTime": None,
        "reportingComponent": "devmgmtproto-allocator",
        "reportingInstance": "",
    },
    "Node": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}},
        "spec": {"podCIDR": "10.0.0.0/24", "unschedulable": False, "taints": [{"key": "gpu", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": 110},
            "allocatable": {"cpu": "7500m", "memory": "30Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-05-01T10:00:00Z", "reason": "KubeletReady"}],
            "addresses": [{"type": "InternalIP", "address": "192.168.1.10"}, {"type": "Hostname", "address": "node-1"}],
            "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian GNU/Linux 12", "architecture": "amd64"},
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        },
    },
    "Namespace": {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a"},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    },
    "CustomResourceDefinition": {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "foozerconfigs.foozer.example.com"},
        "spec": {
            "group": "foozer.example.com",
            "scope": "Namespaced",
            "names": {"plural": "foozerconfigs", "singular": "foozerconfig", "kind": "FoozerConfig", "shortNames": ["fc"]},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                    "selectableFields": [{"jsonPath": ".spec.mode"}],
                }
            ],
            "conversion": {"strategy": "None"},
        },
    },
}


@pytest.mark.parametrize("kind", sorted(REALISTIC))
def test_realistic_objects_use_only_declared_fields(kind):
    assert set(undeclared_fields(schema_of(kind), REALISTIC[kind])) == set()


@pytest.mark.parametrize("kind", sorted(REALISTIC))
def test_realistic_objects_pass_the_structural_schema_with_no_unknown_fields(kind):
    structural = pytest.importorskip("mockapi.schema.structural")
    outcome = structural.apply_schema(schema_of(kind), copy.deepcopy(REALISTIC[kind]))
    assert not outcome.errors
    assert not outcome.unknown_fields


@pytest.mark.parametrize("pod", prototype_pods(), ids=lambda pod: pod["metadata"]["name"])
def test_the_prototype_pods_pass_the_structural_schema(pod):
    structural = pytest.importorskip("mockapi.schema.structural")
    outcome = structural.apply_schema(schema_of("Pod"), copy.deepcopy(pod))
    assert not outcome.errors
    assert not outcome.unknown_fields
