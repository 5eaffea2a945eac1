"""core/v1 PersistentVolumeClaim, PersistentVolume, Endpoints, ReplicationController, PodTemplate,
LimitRange and ResourceQuota, and apps/v1 ControllerRevision, as kube-apiserver stores them: the
defaults kube's defaulting functions set where the OpenAPI cannot say them, and the validation
clients meet, in kube's words (``pkg/apis/core/v1/defaults.go``, ``pkg/apis/core/validation`` and
``pkg/apis/apps/validation``).

- **PersistentVolumeClaim**: ``status.phase: Pending`` on create (``volumeMode: Filesystem`` is a
  schema default); at least one access mode, a ``storage`` request; the spec is immutable but for
  binding an unset ``volumeName`` and, once Bound, ``resources.requests``.
- **Protection** (both): the ``kubernetes.io/pvc-protection`` / ``pv-protection`` finalizer on
  create; a DELETE removes the object unless a scheduled pod uses the claim or the volume is Bound.
- **PersistentVolume**: ``status.phase: Pending`` (``persistentVolumeReclaimPolicy: Retain`` and
  ``volumeMode`` are schema defaults); ``capacity``, access modes and exactly one volume source
  are required, and the source cannot change.
- **Endpoints**: addresses are IPs, ports 1-65535 and named when a subset has several.
- **ReplicationController**: labels and selector default to the template's labels, ``replicas`` to
  1; the selector must select the template, whose ``restartPolicy`` is ``Always``; generation
  counts spec changes; status starts at ``replicas: 0``. No controller makes its pods.
- **LimitRange**: a Container item's ``default`` takes ``max`` and its ``defaultRequest`` takes
  ``default``, then ``min`` (``SetDefaults_LimitRangeItem``); min ≤ default request ≤ default ≤
  max, one item per type, no defaults for ``Pod`` items.
- **ResourceQuota**: hard limits not negative, scopes among kube's. No quota controller or
  admission: ``status`` stays as written to ``/status``, and usage is neither counted nor enforced.
- **ControllerRevision**: ``revision`` ≥ 0 and ``data`` immutable.
- **PodTemplate**: its template's spec is the Pod's schema; nothing more.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from mockapi import errors, quantity
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy, json_copy, not_supported
from mockapi.registry.workloads import set_template_defaults

PODS = errors.GroupResource("", "pods")
NAMESPACES = errors.GroupResource("", "namespaces")

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
PROTOCOLS = ("SCTP", "TCP", "UDP")
QUOTA_SCOPES = ("BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass", "Terminating")
# A PersistentVolumeSpec's fields that are not its volume source (PersistentVolumeSource is inlined).
_PV_NOT_SOURCE = frozenset({
    "accessModes", "capacity", "claimRef", "mountOptions", "nodeAffinity", "persistentVolumeReclaimPolicy",
    "storageClassName", "volumeAttributesClassName", "volumeMode",
})


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _access_mode_errors(modes: Any, path: str, required: str) -> list[errors.FieldError]:
    if not modes:
        return [errors.FieldError("required", path, required)]
    return [not_supported(path, mode, ACCESS_MODES) for mode in _list(modes) if mode not in ACCESS_MODES]


# ------------------------------------------------------------------------- persistent volumes
class _Protected(Strategy):
    """kube's StorageObjectInUseProtection admission adds the kind's protection finalizer on create;
    its pvc-/pv-protection controller takes it off a deleted object that is not in use, which is
    then gone. An object in use stays Terminating (nothing here looks again when the use ends)."""

    finalizer = ""

    def admit(self, cluster: Cluster, obj: dict) -> None:
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if self.finalizer not in finalizers:
            finalizers.append(self.finalizer)

    def in_use(self, cluster: Cluster, obj: dict) -> bool:
        return False

    def after_terminating(self, cluster: Cluster, obj: dict) -> None:
        meta = obj["metadata"]
        if self.finalizer not in (meta.get("finalizers") or []) or self.in_use(cluster, obj):
            return
        meta["finalizers"] = [f for f in meta["finalizers"] if f != self.finalizer]
        if meta["finalizers"]:
            cluster.write(self.rt, obj)
        else:
            meta.pop("finalizers")
            cluster.remove(self.rt, obj)


class PersistentVolumeClaimStrategy(_Protected):
    finalizer = "kubernetes.io/pvc-protection"

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"phase": "Pending"}  # SetDefaults_PersistentVolumeClaim

    def in_use(self, cluster: Cluster, obj: dict) -> bool:
        """A scheduled pod of the claim's namespace has a volume of the claim (kube's podUsesPVC).
        In a terminating namespace the pods go too: the claim is let go at once, where kube's
        controller would wait for them (nothing here looks again once they are gone)."""
        name, namespace = obj["metadata"]["name"], obj["metadata"].get("namespace", "")
        stored_namespace = cluster.get(NAMESPACES, "", namespace)
        if stored_namespace is None or b'"phase":"Terminating"' in stored_namespace.raw:
            return False
        for stored in cluster.objects(PODS, namespace):
            if b'"claimName"' not in stored.raw:
                continue
            pod = stored.load()
            if not _dict(pod.get("spec")).get("nodeName"):
                continue
            if any(_dict(_dict(v).get("persistentVolumeClaim")).get("claimName") == name for v in _list(_dict(pod.get("spec")).get("volumes"))):
                return True
        return False

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = _access_mode_errors(spec.get("accessModes"), "spec.accessModes", "at least 1 access mode is required")
        if "storage" not in _dict(_dict(spec.get("resources")).get("requests")):
            problems.append(errors.FieldError("required", "spec.resources[storage]", ""))
        if old is not None and _claim_spec_frozen(spec, old) != _claim_spec_frozen(_dict(old.get("spec")), old):
            problems.append(errors.FieldError("forbidden", "spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
        return problems


def _claim_spec_frozen(spec: dict, old: dict) -> dict:
    """The part of a claim's spec an update may not change (ValidatePersistentVolumeClaimUpdate):
    ``volumeName`` while the old claim had none (binding); once the claim is Bound, also
    ``resources.requests`` (expansion) and ``volumeAttributesClassName``."""
    frozen = json_copy(spec)
    if _dict(old.get("status")).get("phase") == "Bound":
        if isinstance(frozen.get("resources"), dict):
            frozen["resources"].pop("requests", None)
        frozen.pop("volumeAttributesClassName", None)
    if not _dict(old.get("spec")).get("volumeName"):
        frozen.pop("volumeName", None)
    return frozen


class PersistentVolumeStrategy(_Protected):
    finalizer = "kubernetes.io/pv-protection"

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"phase": "Pending"}  # SetDefaults_PersistentVolume

    def in_use(self, cluster: Cluster, obj: dict) -> bool:
        """The pv-protection controller: a volume is in use while Bound."""
        return _dict(obj.get("status")).get("phase") == "Bound"

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = _access_mode_errors(spec.get("accessModes"), "spec.accessModes", "")
        capacity = _dict(spec.get("capacity"))
        if not capacity:
            problems.append(errors.FieldError("required", "spec.capacity", ""))
        elif set(capacity) != {"storage"}:
            problems.append(not_supported("spec.capacity", sorted(capacity), ("storage",)))
        policy = spec.get("persistentVolumeReclaimPolicy")
        if policy is not None and policy not in RECLAIM_POLICIES:
            problems.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
        sources = _volume_sources(spec)
        if not sources:
            problems.append(errors.FieldError("required", "spec", "must specify a volume type"))
        for extra in sorted(sources)[1:]:
            problems.append(errors.FieldError("forbidden", f"spec.{extra}", "may not specify more than 1 volume type"))
        host_path = sources.get("hostPath")
        if isinstance(host_path, dict) and not host_path.get("path"):
            problems.append(errors.FieldError("required", "spec.hostPath.path", ""))
        if old is not None and sources != _volume_sources(_dict(old.get("spec"))):
            problems.append(errors.FieldError("forbidden", "spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"))
        return problems


def _volume_sources(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k not in _PV_NOT_SOURCE and v is not None}


# ------------------------------------------------------------------------------- endpoints
class EndpointsStrategy(Strategy):
    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems: list[errors.FieldError] = []
        for i, subset in enumerate(_list(obj.get("subsets"))):
            subset = _dict(subset)
            at = f"subsets[{i}]"
            for field in ("addresses", "notReadyAddresses"):
                for j, address in enumerate(_list(subset.get(field))):
                    ip = _dict(address).get("ip")
                    if not _is_ip(ip):
                        problems.append(errors.FieldError("invalid", f"{at}.{field}[{j}].ip", "must be a valid IP address", value=ip))
            ports = _list(subset.get("ports"))
            for k, port in enumerate(ports):
                port = _dict(port)
                if len(ports) > 1 and not port.get("name"):
                    problems.append(errors.FieldError("required", f"{at}.ports[{k}].name", ""))
                number = port.get("port")
                if not isinstance(number, int) or not 1 <= number <= 65535:
                    problems.append(errors.FieldError("invalid", f"{at}.ports[{k}].port", "must be between 1 and 65535, inclusive", value=number))
                protocol = port.get("protocol")
                if protocol not in PROTOCOLS:
                    problems.append(not_supported(f"{at}.ports[{k}].protocol", protocol, PROTOCOLS))
        return problems


def _is_ip(value: Any) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return isinstance(value, str)


# -------------------------------------------------------------------- replication controllers
class ReplicationControllerStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"replicas": 0}
        set_controller_defaults(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "status":
            set_controller_defaults(new)
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        """ValidateReplicationControllerSpec and ValidatePodTemplateSpecForRC."""
        spec = _dict(obj.get("spec"))
        problems: list[errors.FieldError] = []
        selector = _dict(spec.get("selector"))
        if not selector:
            problems.append(errors.FieldError("required", "spec.selector", ""))
        for field in ("replicas", "minReadySeconds"):
            value = spec.get(field)
            if isinstance(value, int) and value < 0:
                problems.append(errors.FieldError("invalid", f"spec.{field}", "must be greater than or equal to 0", value=value))
        template = spec.get("template")
        if not isinstance(template, dict):
            problems.append(errors.FieldError("required", "spec.template", ""))
            return problems
        labels = _dict(_dict(template.get("metadata")).get("labels"))
        if selector and any(labels.get(k) != v for k, v in selector.items()):
            problems.append(errors.FieldError("invalid", "spec.template.metadata.labels", "`selector` does not match template `labels`", value=labels))
        policy = _dict(template.get("spec")).get("restartPolicy")
        if policy is not None and policy != "Always":
            problems.append(not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
        return problems


def set_controller_defaults(obj: dict) -> None:
    """SetDefaults_ReplicationController: selector and labels from the template's labels, 1 replica."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    labels = _dict(_dict(spec.get("template")).get("metadata")).get("labels")
    if isinstance(labels, dict) and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        if not obj["metadata"].get("labels"):
            obj["metadata"]["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    set_template_defaults(spec.get("template"))


# ------------------------------------------------------------------------------ limit ranges
class LimitRangeStrategy(Strategy):
    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        set_limit_defaults(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        set_limit_defaults(new)
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems: list[errors.FieldError] = []
        seen: set[str] = set()
        for i, item in enumerate(_list(_dict(obj.get("spec")).get("limits"))):
            item, at = _dict(item), f"spec.limits[{i}]"
            kind = item.get("type")
            if kind in seen:
                problems.append(errors.FieldError("duplicate", f"{at}.type", value=kind))
            seen.add(kind)
            if kind == "Pod":
                for field in ("default", "defaultRequest"):
                    if item.get(field):
                        problems.append(errors.FieldError("forbidden", f"{at}.{field}", "may not be specified when `type` is 'Pod'"))
            problems += _limit_order_errors(item, at)
        return problems


def set_limit_defaults(obj: dict) -> None:
    """SetDefaults_LimitRangeItem, for Container items (empty maps stay out, as kube's omitempty)."""
    for item in _list(_dict(obj.get("spec")).get("limits")):
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default, request = dict(_dict(item.get("default"))), dict(_dict(item.get("defaultRequest")))
        for name, value in _dict(item.get("max")).items():
            default.setdefault(name, value)
        for name, value in [*default.items(), *_dict(item.get("min")).items()]:
            request.setdefault(name, value)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


# ValidateLimitRange's order checks: (lower field, higher field, the path it blames, message).
_ORDER = (
    ("min", "max", "min", "min value {low} is greater than max value {high}"),
    ("defaultRequest", "max", "defaultRequest", "default request value {low} is greater than max value {high}"),
    ("defaultRequest", "default", "defaultRequest", "default request value {low} is greater than default limit value {high}"),
    ("min", "default", "default", "min value {low} is greater than default value {high}"),
    ("default", "max", "default", "default value {low} is greater than max value {high}"),
)


def _limit_order_errors(item: dict, at: str) -> list[errors.FieldError]:
    problems = []
    for low_field, high_field, blamed, message in _ORDER:
        highs = _dict(item.get(high_field))
        for name, low in _dict(item.get(low_field)).items():
            low_q, high_q = quantity.parse_or_none(low), quantity.parse_or_none(highs.get(name))
            if low_q is not None and high_q is not None and low_q.value > high_q.value:
                shown = low if blamed == low_field else highs[name]
                problems.append(errors.FieldError("invalid", f"{at}.{blamed}[{name}]", message.format(low=low, high=highs[name]), value=str(shown)))
    return problems


# ---------------------------------------------------------------------------- resource quotas
class ResourceQuotaStrategy(Strategy):
    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = []
        for name, value in _dict(spec.get("hard")).items():
            parsed = quantity.parse_or_none(value)
            if parsed is not None and parsed.value < 0:
                problems.append(errors.FieldError("invalid", f"spec.hard[{name}]", "must be greater than or equal to 0", value=str(value)))
        for i, scope in enumerate(_list(spec.get("scopes"))):
            if scope not in QUOTA_SCOPES:
                problems.append(errors.FieldError("invalid", f"spec.scopes[{i}]", "unsupported scope", value=scope))
        return problems


# ----------------------------------------------------------------------- controller revisions
class ControllerRevisionStrategy(Strategy):
    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems = []
        revision = obj.get("revision")
        if isinstance(revision, int) and revision < 0:
            problems.append(errors.FieldError("invalid", "revision", "must be greater than or equal to 0", value=revision))
        if old is not None and obj.get("data") != old.get("data"):
            problems.append(errors.FieldError("invalid", "data", "field is immutable", value=obj.get("data")))
        return problems

