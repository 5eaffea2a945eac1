"""Pods: the kind's strategy (defaults, validation, what an update may change, graceful deletion)
and the ``binding`` subresource the scheduler writes.

- **Defaults** (kube v1.32 ``pkg/apis/core/v1/defaults.go``): a pod template's
  (``workloads.set_template_defaults``: ``imagePullPolicy``, ``resources: {}``, also for ephemeral
  containers) and ``SetDefaults_Pod``'s requests copied from limits where a container leaves them
  out; the schema's static defaults (``enableServiceLinks``, ``dnsPolicy``, ...) come first.
- **Admission on create**, after validation as kube's mutating plugins are outside field
  ownership: Priority (``scheduling.admit_pod``), ServiceAccount (``serviceaccounts.admit_pod``:
  ``serviceAccountName: default``, the ``kube-api-access-*`` token volume and mounts) and
  DefaultTolerationSeconds (:func:`default_tolerations`, also on update: not-ready and unreachable
  ``NoExecute`` tolerated for 300 s unless already tolerated).
- **PodTemplate** objects (core/v1): the template defaulted as every workload's pod template.
- **Device claims** (the prototype's PodSpec extension, SCHEDULER.md "Objects"): each entry of
  ``spec.deviceClaims`` has a DNS-1123 label ``name`` unique in the pod and exactly one of
  ``claim`` / ``claimName`` / ``claimTemplateName``; ``containers[].devices[].name`` (and init
  containers') names an entry. Wording after kube's ``validatePodResourceClaims``.
- **Updates** change only what kube's ``ValidatePodUpdate`` lets change: container images,
  ``activeDeadlineSeconds``, added tolerations, removed scheduling gates, a negative
  ``terminationGracePeriodSeconds`` set to 1. ``spec.nodeName`` is set through ``binding`` only.
- **Binding** (``POST pods/{name}/binding``, kube's ``BindingREST``): sets ``spec.nodeName`` and
  the ``PodScheduled=True`` condition; 409 when the pod is already bound or being deleted.
- **Deletion**: with a kubelet simulated, a pod bound to a node and not finished is deleted
  gracefully (``deletionTimestamp`` = now + grace, ``deletionGracePeriodSeconds``), and the
  kubelet removes it; without one, or unbound, it goes at once — kube's ``CheckGracefulDelete``.
"""

from __future__ import annotations

import re
from typing import Any

from mockapi import errors, names
from mockapi.registry import scheduling, serviceaccounts, workloads
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy, json_copy

DEFAULT_GRACE_SECONDS = 30  # PodSpec.terminationGracePeriodSeconds' default
CLAIM_SOURCES = ("claim", "claimName", "claimTemplateName")
_UPDATABLE = (
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)


class PodStrategy(Strategy):
    return_deleted_object = True
    pure_create = True  # defaults, status and validation from the spec alone (admission is apart)
    # ports and device claims of the spec (admission and binding change neither), and what an
    # update changed in it
    validated_fields = ("spec",)
    # admit's deepest addition: the token volume (spec.volumes[].projected.sources[].downwardAPI
    # .items[].fieldRef, eleven levels with the root); tolerations, mounts and pull secrets nest less
    admission_depth = 11
    # An update's defaulting leaves alone a spec that is the stored pod's own object (a merge patch
    # that does not touch it: rest.Registry._shares_untouched), defaulted when it was stored.
    keeps_untouched = True

    def prepare_for_create(self, obj: dict) -> None:
        set_defaults(obj)
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj)}

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        if "spec" in new and new["spec"] is old.get("spec"):
            return super().prepare_for_update(new, old, subresource=subresource)  # defaulted when stored
        if subresource == "status":
            _default_port_protocols(new)
        else:
            set_defaults(new)
            scheduling.keep_pod_priority(new, old)
            default_tolerations(new)
        return super().prepare_for_update(new, old, subresource=subresource)

    def admit(self, cluster: Cluster, obj: dict) -> None:
        scheduling.admit_pod(cluster, obj)
        serviceaccounts.admit_pod(cluster, obj)
        default_tolerations(obj)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        problems = []
        for field in ("containers", "initContainers"):  # validatePodSpec's order
            containers = [c if isinstance(c, dict) else {} for c in spec.get(field) or []]
            for i, container in enumerate(containers):
                problems += container_port_errors(container.get("ports"), f"spec.{field}[{i}].ports")
            if field == "containers":
                problems += host_port_conflicts(containers, "spec.containers")
        problems += device_claim_errors(spec)
        if old is not None:
            problems += spec_update_errors(spec, old.get("spec") if isinstance(old.get("spec"), dict) else {})
        return problems

    def deletion_grace(self, obj: dict, grace: int | None, *, kubelet: bool) -> int:
        """Seconds a DELETE leaves the pod to its kubelet (0: removed at once)."""
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not kubelet or not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds")
            grace = DEFAULT_GRACE_SECONDS if not isinstance(grace, int) or isinstance(grace, bool) else grace
        return max(grace, 0)


class PodTemplateStrategy(Strategy):
    """core/v1 PodTemplate: its ``template`` defaulted as every other kind's pod template."""

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        workloads.set_template_defaults(obj.get("template"))

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        workloads.set_template_defaults(new.get("template"))
        return super().prepare_for_update(new, old, subresource=subresource)


# ------------------------------------------------------------------ defaults and admission
NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300  # --default-not-ready-toleration-seconds, --default-unreachable-...


def set_defaults(pod: dict) -> None:
    """The defaulting a pod gets beyond its schema's static defaults (module docstring)."""
    _default_port_protocols(pod)
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    workloads.set_template_defaults(pod)
    for key in ("containers", "initContainers"):  # SetDefaults_Pod: requests from limits
        for container in spec.get(key) or ():
            resources = container.get("resources") if container.__class__ is dict else None
            limits = resources.get("limits") if resources.__class__ is dict else None
            if limits.__class__ is dict and limits:
                requests = resources.get("requests")
                if requests.__class__ is not dict:
                    resources["requests"] = dict(limits)
                elif not limits.keys() <= requests.keys():
                    resources["requests"] = {**limits, **requests}


def default_tolerations(pod: dict) -> None:
    """DefaultTolerationSeconds admission (kube v1.32 ``plugin/pkg/admission/defaulttolerationseconds``):
    a pod that does not tolerate the not-ready or the unreachable ``NoExecute`` taint (a
    toleration with that key or none, and effect ``NoExecute`` or none) tolerates it for 300 s."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    tolerations = spec.get("tolerations")
    tolerations = tolerations if tolerations.__class__ is list else []
    tolerated = set()
    for toleration in tolerations:
        if toleration.__class__ is dict and toleration.get("effect") in _NO_EXECUTE:
            key = toleration.get("key")
            if not key:
                return  # every key tolerated
            tolerated.add(key)
    missing = [key for key in (NOT_READY, UNREACHABLE) if key not in tolerated]
    if missing:
        spec["tolerations"] = tolerations + [
            {"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": DEFAULT_TOLERATION_SECONDS} for key in missing
        ]


_NO_EXECUTE = (None, "", "NoExecute")


# ------------------------------------------------------------------ device claims
def device_claim_errors(spec: dict) -> list[errors.FieldError]:
    problems: list[errors.FieldError] = []
    entries = spec.get("deviceClaims")
    seen: set[str] = set()
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue
        at = f"spec.deviceClaims[{i}]"
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problems.append(errors.FieldError("required", f"{at}.name"))
        else:
            problems += [errors.FieldError("invalid", f"{at}.name", msg, value=name) for msg in names.dns1123_label_errors(name)]
            if name in seen:
                problems.append(errors.FieldError("duplicate", f"{at}.name", value=name))
            seen.add(name)
        sources = [key for key in CLAIM_SOURCES if entry.get(key) is not None]
        if not sources:
            problems.append(errors.FieldError("invalid", at, "must specify one of: `claim`, `claimName`, `claimTemplateName`", value=entry))
        elif len(sources) > 1:
            problems.append(errors.FieldError("invalid", at, "at most one of `claim`, `claimName` or `claimTemplateName` may be specified", value=entry))
        for key in ("claimName", "claimTemplateName"):
            value = entry.get(key)
            if isinstance(value, str):
                found = names.dns1123_subdomain_errors(value) if value else ["must not be empty"]
                problems += [errors.FieldError("invalid", f"{at}.{key}", msg, value=value) for msg in found]
        if "claim" in sources and not isinstance(entry.get("claim"), dict):
            problems.append(errors.FieldError("invalid", f"{at}.claim", "must be a DeviceClaimSpec object", value=entry.get("claim")))
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        for i, container in enumerate(containers if isinstance(containers, list) else []):
            devices = container.get("devices") if isinstance(container, dict) else None
            used: set[str] = set()
            for j, device in enumerate(devices if isinstance(devices, list) else []):
                name = device.get("name") if isinstance(device, dict) else None
                at = f"spec.{field}[{i}].devices[{j}].name"
                if not isinstance(name, str) or not name:
                    problems.append(errors.FieldError("required", at))
                    continue
                if name in used:
                    problems.append(errors.FieldError("duplicate", at, value=name))
                elif name not in seen:
                    detail = "must be one of the names in pod.spec.deviceClaims" if seen else "no claims defined in pod.spec.deviceClaims"
                    problems.append(errors.FieldError("not_found", at, detail, value=name))
                used.add(name)
    return problems


# ------------------------------------------------------------------ updates
def spec_update_errors(new: dict, old: dict) -> list[errors.FieldError]:
    """ValidatePodUpdate: the spec as stored, but for the fields a pod update may change."""
    if new == old:
        return []
    munged = json_copy(new)
    for field in ("containers", "initContainers"):
        olds, news = old.get(field) or [], munged.get(field)
        if isinstance(news, list) and len(news) == len(olds):
            for before, after in zip(olds, news):
                if isinstance(before, dict) and isinstance(after, dict):
                    if "image" in before:
                        after["image"] = before["image"]
    _take(munged, old, "activeDeadlineSeconds")
    if _is_superset(munged.get("tolerations"), old.get("tolerations")):
        _take(munged, old, "tolerations")
    if _is_superset(old.get("schedulingGates"), munged.get("schedulingGates")):
        _take(munged, old, "schedulingGates")
    before = old.get("terminationGracePeriodSeconds")
    if isinstance(before, int) and before < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        _take(munged, old, "terminationGracePeriodSeconds")
    if munged == old:
        return []
    changed = sorted(k for k in set(munged) | set(old) if munged.get(k) != old.get(k))
    detail = f"pod updates may not change fields other than {_UPDATABLE}; this update changes " + ", ".join(f"spec.{k}" for k in changed)
    return [errors.FieldError("forbidden", "spec", detail)]


def _take(munged: dict, old: dict, key: str) -> None:
    if key in old:
        munged[key] = old[key]
    else:
        munged.pop(key, None)


def _is_superset(new: Any, old: Any) -> bool:
    new, old = new or [], old or []
    return isinstance(new, list) and isinstance(old, list) and all(item in new for item in old)


# ------------------------------------------------------------------ binding
def bind(pod: dict, binding: Any, name: str, now: str) -> dict:
    """The pod bound as ``binding`` asks (kube's ``BindingREST.Create`` and ``assignPod``)."""
    if not isinstance(binding, dict):
        raise errors.bad_request("the request body must be a Binding object")
    meta = binding.get("metadata") if isinstance(binding.get("metadata"), dict) else {}
    if meta.get("name", name) != name:
        raise errors.bad_request("name in URL does not match name in Binding object")
    target = binding.get("target") if isinstance(binding.get("target"), dict) else {}
    problems = []
    if target.get("kind") not in (None, "", "Node"):
        problems.append(errors.FieldError("invalid", "target.kind", "must be empty or 'Node'", value=target.get("kind")))
    if not target.get("name"):
        problems.append(errors.FieldError("required", "target.name"))
    if problems:
        raise errors.invalid("Binding", "", name, problems)
    group = errors.GroupResource("", "pods/binding")
    pod_meta = pod["metadata"]
    uid = meta.get("uid")
    if uid and uid != pod_meta.get("uid"):
        raise errors.conflict(group, name, f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod_meta.get('uid')}")
    if pod_meta.get("deletionTimestamp"):
        raise errors.conflict(group, name, f"pod {name} is being deleted, cannot be assigned to a host")
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        raise errors.conflict(group, name, f'pod {name} is already assigned to node "{node}"')
    pod.setdefault("spec", {})["nodeName"] = target["name"]
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and annotations:
        pod_meta.setdefault("annotations", {}).update(annotations)
    set_condition(pod, {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now})
    return pod


def set_condition(pod: dict, condition: dict) -> None:
    """podutil.UpdatePodCondition: replace the condition of that type, keeping lastTransitionTime
    when the status does not change."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    for i, old in enumerate(conditions):
        if old.get("type") == condition["type"]:
            if old.get("status") == condition.get("status") and old.get("lastTransitionTime"):
                condition = {**condition, "lastTransitionTime": old["lastTransitionTime"]}
            conditions[i] = condition
            return
    conditions.append(condition)


def _default_port_protocols(pod: dict) -> None:
    """SetDefaults_ContainerPort: an empty protocol is TCP (the schema default covers a missing one)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        for container in containers if isinstance(containers, list) else ():
            ports = container.get("ports") if isinstance(container, dict) else None
            for port in ports if isinstance(ports, list) else ():
                if isinstance(port, dict) and port.get("protocol") == "":
                    port["protocol"] = "TCP"


_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_LETTER = re.compile(r"[a-z]")
_VALID_PORT_NAMES: set[str] = set()
_PORT_RANGE = "must be between 1 and 65535, inclusive"


def container_port_errors(ports: Any, path: str) -> list[errors.FieldError]:
    """kube's validateContainerPorts: IANA_SVC_NAME names unique within the container,
    containerPort and hostPort (when set) in 1-65535. The protocol enum is the schema's."""
    problems: list[errors.FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, dict):
            continue
        at = f"{path}[{i}]"
        name = port.get("name")
        if isinstance(name, str) and name:
            found = port_name_errors(name)
            problems += [errors.FieldError("invalid", f"{at}.name", msg, value=name) for msg in found]
            if not found and name in names:
                problems.append(errors.FieldError("duplicate", f"{at}.name", value=name))
            names.add(name)
        number = port.get("containerPort")
        if number == 0:
            problems.append(errors.FieldError("required", f"{at}.containerPort"))
        elif _is_int(number) and not 1 <= number <= 65535:
            problems.append(errors.FieldError("invalid", f"{at}.containerPort", _PORT_RANGE, value=number))
        host = port.get("hostPort")
        if _is_int(host) and host != 0 and not 1 <= host <= 65535:
            problems.append(errors.FieldError("invalid", f"{at}.hostPort", _PORT_RANGE, value=host))
    return problems


def host_port_conflicts(containers: list[dict], path: str) -> list[errors.FieldError]:
    """checkHostPortConflicts: one protocol/hostIP/hostPort per pod's (regular) containers."""
    problems, seen = [], set()
    for i, container in enumerate(containers):
        ports = container.get("ports")
        for j, port in enumerate(ports if isinstance(ports, list) else []):
            host = port.get("hostPort") if isinstance(port, dict) else None
            if not _is_int(host) or host == 0:
                continue
            key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{host}"
            if key in seen:
                problems.append(errors.FieldError("duplicate", f"{path}[{i}].ports[{j}].hostPort", value=key))
            seen.add(key)
    return problems


def port_name_errors(name: str) -> list[str]:
    """validation.IsValidPortName (an IANA_SVC_NAME), kube's messages in kube's order. Valid names
    are remembered (port names repeat across pods), up to a bound."""
    if name in _VALID_PORT_NAMES:
        return []
    found = []
    if len(name) > 15:
        found.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(name):
        found.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _LETTER.search(name):
        found.append("must contain at least one letter (a-z)")
    if "--" in name:
        found.append("must not contain consecutive hyphens")
    if name[0] == "-" or name[-1] == "-":
        found.append("must not begin or end with a hyphen")
    if not found:
        if len(_VALID_PORT_NAMES) >= 4096:
            _VALID_PORT_NAMES.clear()
        _VALID_PORT_NAMES.add(name)
    return found


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _qos_class(pod: dict) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    resources = [c.get("resources") or {} for c in containers if isinstance(c, dict)]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        (r.get("limits") or {}).get(k) is not None and (r.get("requests") or {}).get(k, (r.get("limits") or {})[k]) == r["limits"][k]
        for r in resources
        for k in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


