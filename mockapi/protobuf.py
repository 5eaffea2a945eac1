"""Decode the protobuf request bodies kubectl's typed client sends (PROTOCOL.md a.12, G23).

``kubectl create namespace|configmap|secret`` POSTs ``application/vnd.kubernetes.protobuf``
with no JSON fallback: ``k8s\\0`` + ``runtime.Unknown{1: TypeMeta{1: apiVersion, 2: kind},
2: raw}``, ``raw`` being the object in ``k8s.io/api/core/v1/generated.proto``. This decodes the
wire format for those kinds (Namespace, ConfigMap, Secret, and by table Service, ServiceAccount,
PriorityClass, ResourceQuota, ...) into the JSON-shaped dict the rest of
the server handles; proto3 zero values are dropped. The reply stays JSON, which kubectl accepts.
"""

from __future__ import annotations

import base64
from typing import Callable, Iterator

from mockapi import errors

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message (truncated, or an unsupported wire type)."""


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise WireError("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varints, bytes for length-delimited fields."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise WireError("truncated field")
            value, position = data[position : position + length], position + length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if position + width > len(data):
                raise WireError("truncated field")
            value, position = int.from_bytes(data[position : position + width], "little"), position + width
        else:  # 3/4 (groups, deprecated) included: nothing here is read recursively
            raise WireError(f"unsupported wire type {wire}")
        yield number, value


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _map_entry(value: bytes, *, as_bytes: bool = False) -> tuple[str, str]:
    key, item = "", b""
    for number, field in fields(value):
        if number == 1:
            key = _text(field)
        elif number == 2:
            item = field
    return key, base64.b64encode(item).decode() if as_bytes else _text(item)


def _quantity_entry(value: bytes) -> tuple[str, str]:
    """A map<string, resource.Quantity> entry; a Quantity is {1: its string form}."""
    key, quantity = "", "0"
    for number, field in fields(value):
        if number == 1:
            key = _text(field)
        elif number == 2 and isinstance(field, bytes):
            quantity = next((_text(v) for n, v in fields(field) if n == 1), "0")
    return key, quantity


def _object_meta(data: bytes) -> dict:
    meta: dict = {}
    scalar = {1: "name", 2: "generateName", 3: "namespace", 5: "uid", 6: "resourceVersion"}
    for number, value in fields(data):
        if number in scalar:
            meta[scalar[number]] = _text(value)
        elif number in (11, 12):
            key, item = _map_entry(value)
            meta.setdefault("labels" if number == 11 else "annotations", {})[key] = item
        elif number == 13:  # kubectl create job --from=cronjob/NAME: the Job is owned by the CronJob
            meta.setdefault("ownerReferences", []).append(_message("OwnerReference")(value))
        elif number == 14:
            meta.setdefault("finalizers", []).append(_text(value))
    return {k: v for k, v in meta.items() if v not in ("", None)}


def _namespace(data: bytes) -> dict:
    obj: dict = {}
    for number, value in fields(data):
        if number == 1:
            obj["metadata"] = _object_meta(value)
        elif number == 2:
            finalizers = [_text(v) for n, v in fields(value) if n == 1]
            if finalizers:
                obj["spec"] = {"finalizers": finalizers}
    return obj


def _config_map(data: bytes) -> dict:
    obj: dict = {}
    for number, value in fields(data):
        if number == 1:
            obj["metadata"] = _object_meta(value)
        elif number in (2, 3):
            key, item = _map_entry(value, as_bytes=number == 3)
            obj.setdefault("data" if number == 2 else "binaryData", {})[key] = item
        elif number == 4 and value:
            obj["immutable"] = True
    return obj


def _secret(data: bytes) -> dict:
    obj: dict = {}
    for number, value in fields(data):
        if number == 1:
            obj["metadata"] = _object_meta(value)
        elif number in (2, 4):
            key, item = _map_entry(value, as_bytes=number == 2)
            obj.setdefault("data" if number == 2 else "stringData", {})[key] = item
        elif number == 3 and value:
            obj["type"] = _text(value)
        elif number == 5 and value:
            obj["immutable"] = True
    return obj


# Messages as tables, field number → (JSON name, how to read it), after k8s.io/api's generated.proto
# (core/v1, scheduling/v1): "str", "int", "bool", "strs" (repeated string), "map" (map<string, string>),
# "intstr", "meta" (ObjectMeta), "msg:<Name>" and "msgs:<Name>" (one or repeated message), "inline:<Name>"
# (a message whose fields JSON puts in the parent's: `json:",inline"`). A zero
# value is dropped (Go's omitempty), but for "int!", a required number kept even when 0.
_MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "Service": {1: ("metadata", "meta"), 2: ("spec", "msg:ServiceSpec")},
    "ServiceSpec": {
        1: ("ports", "msgs:ServicePort"), 2: ("selector", "map"), 3: ("clusterIP", "str"), 4: ("type", "str"),
        5: ("externalIPs", "strs"), 7: ("sessionAffinity", "str"), 8: ("loadBalancerIP", "str"),
        9: ("loadBalancerSourceRanges", "strs"), 10: ("externalName", "str"), 11: ("externalTrafficPolicy", "str"),
        12: ("healthCheckNodePort", "int"), 13: ("publishNotReadyAddresses", "bool"),
        14: ("sessionAffinityConfig", "msg:SessionAffinityConfig"), 17: ("ipFamilyPolicy", "str"), 18: ("clusterIPs", "strs"),
        19: ("ipFamilies", "strs"), 20: ("allocateLoadBalancerNodePorts", "bool"), 21: ("loadBalancerClass", "str"),
        22: ("internalTrafficPolicy", "str"),
    },
    "ServicePort": {1: ("name", "str"), 2: ("protocol", "str"), 3: ("port", "int!"), 4: ("targetPort", "intstr"), 5: ("nodePort", "int"), 6: ("appProtocol", "str")},
    "SessionAffinityConfig": {1: ("clientIP", "msg:ClientIPConfig")},
    "ClientIPConfig": {1: ("timeoutSeconds", "int")},
    "ServiceAccount": {1: ("metadata", "meta"), 2: ("secrets", "msgs:ObjectReference"), 3: ("imagePullSecrets", "msgs:LocalObjectReference"), 4: ("automountServiceAccountToken", "bool")},
    "ObjectReference": {1: ("kind", "str"), 2: ("namespace", "str"), 3: ("name", "str"), 4: ("uid", "str"), 5: ("apiVersion", "str"), 6: ("resourceVersion", "str"), 7: ("fieldPath", "str")},
    "LocalObjectReference": {1: ("name", "str")},
    "OwnerReference": {5: ("apiVersion", "str"), 1: ("kind", "str"), 3: ("name", "str"), 4: ("uid", "str"), 6: ("controller", "bool"), 7: ("blockOwnerDeletion", "bool")},
    "PriorityClass": {1: ("metadata", "meta"), 2: ("value", "int!"), 3: ("globalDefault", "bool"), 4: ("description", "str"), 5: ("preemptionPolicy", "str")},
    # apps/v1 Deployment as `kubectl create deployment NAME --image=I [--port=P] [--replicas=N] [-- COMMAND ARGS]`
    # sends it; a pod spec's other fields are not decoded (415 is not an option once the kind is known).
    "Deployment": {1: ("metadata", "meta"), 2: ("spec", "msg:DeploymentSpec")},
    "DeploymentSpec": {
        1: ("replicas", "int!"), 2: ("selector", "msg:LabelSelector"), 3: ("template", "msg:PodTemplateSpec"), 4: ("strategy", "msg:DeploymentStrategy"),
        5: ("minReadySeconds", "int"), 6: ("revisionHistoryLimit", "int"), 7: ("paused", "bool"), 9: ("progressDeadlineSeconds", "int"),
    },
    "DeploymentStrategy": {1: ("type", "str")},
    "LabelSelector": {1: ("matchLabels", "map"), 2: ("matchExpressions", "msgs:LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "str"), 2: ("operator", "str"), 3: ("values", "strs")},
    "PodTemplateSpec": {1: ("metadata", "meta"), 2: ("spec", "msg:PodSpec")},
    "PodSpec": {2: ("containers", "msgs:Container"), 3: ("restartPolicy", "str"), 7: ("nodeSelector", "map"), 8: ("serviceAccountName", "str")},
    "Container": {1: ("name", "str"), 2: ("image", "str"), 3: ("command", "strs"), 4: ("args", "strs"), 5: ("workingDir", "str"),
                  6: ("ports", "msgs:ContainerPort"), 7: ("env", "msgs:EnvVar"), 14: ("imagePullPolicy", "str")},
    "ContainerPort": {1: ("name", "str"), 2: ("hostPort", "int"), 3: ("containerPort", "int!"), 4: ("protocol", "str"), 5: ("hostIP", "str")},
    "EnvVar": {1: ("name", "str"), 2: ("value", "str")},
    # batch/v1 as `kubectl create job|cronjob` sends them (batch/v1 generated.proto)
    "Job": {1: ("metadata", "meta"), 2: ("spec", "msg:JobSpec")},
    "JobSpec": {
        1: ("parallelism", "int"), 2: ("completions", "int"), 3: ("activeDeadlineSeconds", "int"), 4: ("selector", "msg:LabelSelector"),
        5: ("manualSelector", "bool"), 6: ("template", "msg:PodTemplateSpec"), 7: ("backoffLimit", "int"), 8: ("ttlSecondsAfterFinished", "int"),
        9: ("completionMode", "str"), 10: ("suspend", "bool"),
    },
    "CronJob": {1: ("metadata", "meta"), 2: ("spec", "msg:CronJobSpec")},
    "CronJobSpec": {
        1: ("schedule", "str"), 2: ("startingDeadlineSeconds", "int"), 3: ("concurrencyPolicy", "str"), 4: ("suspend", "bool"),
        5: ("jobTemplate", "msg:JobTemplateSpec"), 6: ("successfulJobsHistoryLimit", "int"), 7: ("failedJobsHistoryLimit", "int"), 8: ("timeZone", "str"),
    },
    "JobTemplateSpec": {1: ("metadata", "meta"), 2: ("spec", "msg:JobSpec")},
    # authorization.k8s.io/v1 reviews as `kubectl auth can-i [--list]` sends them (authorization/v1 generated.proto)
    "SubjectAccessReview": {1: ("metadata", "meta"), 2: ("spec", "msg:SubjectAccessReviewSpec")},
    "SubjectAccessReviewSpec": {
        1: ("resourceAttributes", "msg:ResourceAttributes"), 2: ("nonResourceAttributes", "msg:NonResourceAttributes"),
        3: ("user", "str"), 4: ("groups", "strs"), 6: ("uid", "str"),
    },
    "SelfSubjectAccessReview": {1: ("metadata", "meta"), 2: ("spec", "msg:SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "msg:ResourceAttributes"), 2: ("nonResourceAttributes", "msg:NonResourceAttributes")},
    "ResourceAttributes": {1: ("namespace", "str"), 2: ("verb", "str"), 3: ("group", "str"), 4: ("version", "str"), 5: ("resource", "str"),
                           6: ("subresource", "str"), 7: ("name", "str")},
    "NonResourceAttributes": {1: ("path", "str"), 2: ("verb", "str")},
    "SelfSubjectRulesReview": {1: ("metadata", "meta"), 2: ("spec", "msg:SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "str")},
    # rbac.authorization.k8s.io/v1 as `kubectl create role|clusterrole|rolebinding|clusterrolebinding` sends them
    "Role": {1: ("metadata", "meta"), 2: ("rules", "msgs:PolicyRule")},
    "ClusterRole": {1: ("metadata", "meta"), 2: ("rules", "msgs:PolicyRule"), 3: ("aggregationRule", "msg:AggregationRule")},
    "PolicyRule": {1: ("verbs", "strs"), 2: ("apiGroups", "strs"), 3: ("resources", "strs"), 4: ("resourceNames", "strs"), 5: ("nonResourceURLs", "strs")},
    "AggregationRule": {1: ("clusterRoleSelectors", "msgs:LabelSelector")},
    "RoleBinding": {1: ("metadata", "meta"), 2: ("subjects", "msgs:Subject"), 3: ("roleRef", "msg:RoleRef")},
    "Subject": {1: ("kind", "str"), 2: ("apiGroup", "str"), 3: ("name", "str"), 4: ("namespace", "str")},
    "RoleRef": {1: ("apiGroup", "str"), 2: ("kind", "str"), 3: ("name", "str")},
    # policy/v1 and networking.k8s.io/v1 as `kubectl create poddisruptionbudget|ingress` send them
    "PodDisruptionBudget": {1: ("metadata", "meta"), 2: ("spec", "msg:PodDisruptionBudgetSpec")},
    "PodDisruptionBudgetSpec": {1: ("minAvailable", "intstr"), 2: ("selector", "msg:LabelSelector"), 3: ("maxUnavailable", "intstr"), 4: ("unhealthyPodEvictionPolicy", "str")},
    "Ingress": {1: ("metadata", "meta"), 2: ("spec", "msg:IngressSpec")},
    "IngressSpec": {1: ("defaultBackend", "msg:IngressBackend"), 2: ("tls", "msgs:IngressTLS"), 3: ("rules", "msgs:IngressRule"), 4: ("ingressClassName", "str")},
    "IngressTLS": {1: ("hosts", "strs"), 2: ("secretName", "str")},
    "IngressRule": {1: ("host", "str"), 2: ("", "inline:IngressRuleValue")},  # IngressRuleValue is inline in JSON
    "IngressRuleValue": {1: ("http", "msg:HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: ("paths", "msgs:HTTPIngressPath")},
    "HTTPIngressPath": {1: ("path", "str"), 2: ("backend", "msg:IngressBackend"), 3: ("pathType", "str")},
    "IngressBackend": {3: ("resource", "msg:TypedLocalObjectReference"), 4: ("service", "msg:IngressServiceBackend")},
    "TypedLocalObjectReference": {1: ("apiGroup", "str"), 2: ("kind", "str"), 3: ("name", "str")},
    "IngressServiceBackend": {1: ("name", "str"), 2: ("port", "msg:ServiceBackendPort")},
    "ServiceBackendPort": {1: ("name", "str"), 2: ("number", "int")},
    # autoscaling/v1 as `kubectl autoscale` sends it
    "HorizontalPodAutoscaler": {1: ("metadata", "meta"), 2: ("spec", "msg:HorizontalPodAutoscalerSpec")},
    "HorizontalPodAutoscalerSpec": {1: ("scaleTargetRef", "msg:CrossVersionObjectReference"), 2: ("minReplicas", "int"), 3: ("maxReplicas", "int!"), 4: ("targetCPUUtilizationPercentage", "int")},
    "CrossVersionObjectReference": {1: ("kind", "str"), 2: ("name", "str"), 3: ("apiVersion", "str")},
    # core/v1 ResourceQuota as `kubectl create quota NAME --hard=... [--scopes=...]` sends it
    "ResourceQuota": {1: ("metadata", "meta"), 2: ("spec", "msg:ResourceQuotaSpec")},
    "ResourceQuotaSpec": {1: ("hard", "quantities"), 2: ("scopes", "strs")},
}


def _message(name: str) -> Callable[[bytes], dict]:
    table = _MESSAGES[name]

    def decode(data: bytes) -> dict:
        obj: dict = {}
        for number, value in fields(data):
            if number not in table:
                continue
            key, how = table[number]
            if how == "meta":
                obj[key] = _object_meta(value)
            elif how == "strs":
                obj.setdefault(key, []).append(_text(value))
            elif how == "map":
                entry_key, item = _map_entry(value)
                obj.setdefault(key, {})[entry_key] = item
            elif how == "quantities":
                entry_key, item = _quantity_entry(value)
                obj.setdefault(key, {})[entry_key] = item
            elif how.startswith("msgs:"):
                obj.setdefault(key, []).append(_message(how[5:])(value))
            elif how.startswith("inline:"):
                obj.update(_message(how[7:])(value))
            else:
                obj[key] = _scalar(how, value)
        return {k: v for k, v in obj.items() if v not in ("", 0, False, None) or table_kind(table, k) == "int!"}

    return decode


def table_kind(table: dict[int, tuple[str, str]], key: str) -> str:
    return next((how for name, how in table.values() if name == key), "")


def _scalar(how: str, value):
    if how == "str":
        return _text(value)
    if how in ("int", "int!"):
        return value - (1 << 64) if isinstance(value, int) and value >= 1 << 63 else value
    if how == "bool":
        return bool(value)
    if how == "intstr":  # IntOrString: type (0 int, 1 string), intVal, strVal
        parts = dict(fields(value))
        return _text(parts.get(3, b"")) if parts.get(1) == 1 else parts.get(2, 0)
    return _message(how[4:])(value)


DECODERS: dict[tuple[str, str], Callable[[bytes], dict]] = {
    ("v1", "Namespace"): _namespace,
    ("v1", "ConfigMap"): _config_map,
    ("v1", "Secret"): _secret,
    ("v1", "Service"): _message("Service"),
    ("v1", "ServiceAccount"): _message("ServiceAccount"),
    ("scheduling.k8s.io/v1", "PriorityClass"): _message("PriorityClass"),
    ("apps/v1", "Deployment"): _message("Deployment"),
    ("batch/v1", "Job"): _message("Job"),
    ("batch/v1", "CronJob"): _message("CronJob"),
    ("authorization.k8s.io/v1", "SubjectAccessReview"): _message("SubjectAccessReview"),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): _message("SubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): _message("SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): _message("SelfSubjectRulesReview"),
    ("rbac.authorization.k8s.io/v1", "Role"): _message("Role"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): _message("ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): _message("RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): _message("RoleBinding"),
    ("policy/v1", "PodDisruptionBudget"): _message("PodDisruptionBudget"),
    ("networking.k8s.io/v1", "Ingress"): _message("Ingress"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"): _message("HorizontalPodAutoscaler"),
    ("v1", "ResourceQuota"): _message("ResourceQuota"),
}


def decode(body: bytes) -> dict:
    """A protobuf-encoded core object as a JSON-shaped dict; 415 for kinds this cannot decode."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("protobuf body does not start with the k8s\\0 magic prefix")
    try:
        api_version = kind = ""
        raw = b""
        for number, value in fields(body[len(MAGIC) :]):
            if number == 1:
                for inner, item in fields(value):
                    if inner == 1:
                        api_version = _text(item)
                    elif inner == 2:
                        kind = _text(item)
            elif number == 2:
                raw = value
        decoder = DECODERS.get((api_version, kind))
        if decoder is None:
            raise errors.unsupported_media_type(MEDIA_TYPE, ("application/json", "application/yaml"))
        obj = decoder(raw)
    except (WireError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"error decoding protobuf body: {exc}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}
