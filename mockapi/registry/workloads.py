"""apps/v1 workloads — Deployment, ReplicaSet, StatefulSet, DaemonSet — as kube-apiserver stores
them: kube's defaults, the validation clients meet, generation and status.

- **Defaults** (``pkg/apis/apps/v1/defaults.go``), where the object leaves them out: ``replicas: 1``
  (not DaemonSet); Deployment ``strategy`` RollingUpdate 25%/25%, ``revisionHistoryLimit: 10``,
  ``progressDeadlineSeconds: 600``; StatefulSet ``podManagementPolicy: OrderedReady``,
  ``updateStrategy`` RollingUpdate with ``partition: 0``, ``revisionHistoryLimit: 10``,
  ``persistentVolumeClaimRetentionPolicy`` Retain/Retain; DaemonSet ``updateStrategy``
  RollingUpdate with ``maxUnavailable: 1``, ``maxSurge: 0``, ``revisionHistoryLimit: 10``. The pod
  template gets a pod's schema defaults (its schema is the Pod's) and what depends on other fields
  (``set_template_defaults``: ``imagePullPolicy``, ``resources: {}``, ``serviceAccount``); a
  StatefulSet's claim templates get a claim's (``volumeMode``, ``status.phase``, apiVersion and kind).
- **A DaemonSet's template generation**: annotation ``deprecated.daemonset.template.generation`` is
  ``"1"`` on create and counts template changes, whatever the client sends (kube's daemonset
  strategy keeps ``spec.templateGeneration``, which apps/v1 serves as that annotation).
- **Validation**: a selector is required and not empty, must match the template's labels, and
  cannot change; ``replicas`` ≥ 0; the template's ``restartPolicy`` is ``Always``.
- **Generation and status**: ``metadata.generation`` starts at 1 and counts spec changes; status
  starts as kube's zero status and changes only through ``/status``. No controller writes it:
  ``status.observedGeneration`` stays unset and a Deployment's READY stays 0/N (a later step).
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.registry.strategy import Strategy, json_copy, not_supported

GROUP = "apps"
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
# The status each kind's zero value serializes to (fields without omitempty).
_INITIAL_STATUS = {
    "Deployment": {},
    "ReplicaSet": {"replicas": 0},
    "StatefulSet": {"replicas": 0, "availableReplicas": 0},
    "DaemonSet": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0},
}


class WorkloadStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        obj["status"] = dict(_INITIAL_STATUS[self.rt.kind])
        set_defaults(self.rt.kind, obj)
        if self.rt.kind == "DaemonSet":
            obj["metadata"].setdefault("annotations", {})[TEMPLATE_GENERATION] = "1"

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        new = super().prepare_for_update(new, old, subresource=subresource)
        if subresource != "status":
            set_defaults(self.rt.kind, new)
        if self.rt.kind == "DaemonSet":
            # the server's value, not the client's; before_store counts a template change
            new["metadata"].setdefault("annotations", {})[TEMPLATE_GENERATION] = _template_generation(old)
        return new

    def before_store(self, cluster: Any, obj: dict, old: dict | None) -> None:
        if self.rt.kind == "DaemonSet" and old is not None and _template(obj) != _template(old):
            obj["metadata"]["annotations"][TEMPLATE_GENERATION] = str(int(_template_generation(old)) + 1)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        problems = selector_errors(spec, self.rt.kind)
        replicas = spec.get("replicas")
        if isinstance(replicas, int) and replicas < 0:
            problems.append(errors.FieldError("invalid", "spec.replicas", "must be greater than or equal to 0", value=replicas))
        policy = _dict(_dict(spec.get("template")).get("spec")).get("restartPolicy")
        if policy is not None and policy != "Always":
            problems.append(not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
        if old is not None and spec.get("selector") != _dict(old.get("spec")).get("selector"):
            problems.append(errors.FieldError("invalid", "spec.selector", "field is immutable", value=spec.get("selector")))
        return problems


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _template(obj: dict) -> Any:
    return _dict(obj.get("spec")).get("template")


def _template_generation(obj: dict) -> str:
    value = _dict(obj["metadata"].get("annotations")).get(TEMPLATE_GENERATION, "1")
    return value if isinstance(value, str) and value.isdigit() else "1"


def set_template_defaults(template: Any) -> None:
    """kube's generated defaulters for a PodTemplateSpec, beyond the Pod schema's static defaults:
    ``SetDefaults_Container``'s ``imagePullPolicy`` (``Always`` for a ``latest`` or untagged image
    without digest, else ``IfNotPresent``), ``resources: {}`` (a struct kube always serializes),
    for init, regular and ephemeral containers, probes', env's and volumes' defaults
    (``_container_defaults``, ``_volume_defaults``),
    and the v1 conversion's ``serviceAccount`` ⇄ ``serviceAccountName`` (whichever is set fills
    the other). Pods get these and more (``mockapi/registry/pods.py``)."""
    spec = _dict(_dict(template).get("spec"))
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                if not container.get("imagePullPolicy"):
                    container["imagePullPolicy"] = image_pull_policy(container.get("image"))
                container.setdefault("resources", {})
                _container_defaults(container)
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            _volume_defaults(volume)
    account, deprecated = spec.get("serviceAccountName"), spec.get("serviceAccount")
    if account and not deprecated:
        spec["serviceAccount"] = account
    elif deprecated and not account:
        spec["serviceAccountName"] = deprecated


_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}  # SetDefaults_Probe
_DEFAULT_MODE = 420  # 0644: Secret, ConfigMap, DownwardAPI and Projected volume sources' defaultMode


def _container_defaults(container: dict) -> None:
    """The defaulters kube runs inside a container: ``SetDefaults_Probe``,
    ``SetDefaults_HTTPGetAction`` (``path: /``, ``scheme: HTTP``; probes' and lifecycle hooks'),
    ``SetDefaults_ObjectFieldSelector`` (``apiVersion: v1``) and a ``resourceFieldRef``'s
    ``divisor`` (a Quantity kube always serializes, ``"0"`` when unset) in env. Pods are the
    hottest write: each step looks only where the field is."""
    for key in _PROBES:
        probe = container.get(key)
        if probe.__class__ is dict:
            for field, value in _PROBE_DEFAULTS.items():
                if not probe.get(field):
                    probe[field] = value
            _http_get_defaults(probe.get("httpGet"))
    lifecycle = container.get("lifecycle")
    if lifecycle.__class__ is dict:
        for hook in ("postStart", "preStop"):
            _http_get_defaults(_dict(lifecycle.get(hook)).get("httpGet"))
    env = container.get("env")
    for item in env if env.__class__ is list else ():
        source = item.get("valueFrom") if item.__class__ is dict else None
        if source.__class__ is dict:
            _field_ref_defaults(source.get("fieldRef"))
            resource = source.get("resourceFieldRef")
            if resource.__class__ is dict and resource.get("divisor") in (None, ""):
                resource["divisor"] = "0"


_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_MODE_SOURCES = frozenset({"secret", "configMap", "downwardAPI", "projected"})


def _http_get_defaults(action: Any) -> None:
    if action.__class__ is dict:
        action["path"] = action.get("path") or "/"
        action["scheme"] = action.get("scheme") or "HTTP"


def _field_ref_defaults(ref: Any) -> None:
    if ref.__class__ is dict and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def _volume_defaults(volume: dict) -> None:
    """kube's volume-source defaulters: ``defaultMode: 420`` for secret, configMap, downwardAPI
    and projected sources, a projected token's ``expirationSeconds: 3600``, downward-API items'
    ``fieldRef.apiVersion: v1``, and ``hostPath.type: ""`` (``HostPathUnset``). One pass over
    the volume's keys (its name and, valid or not, usually one source)."""
    for key, source in volume.items():
        if source.__class__ is not dict:
            continue
        if key in _MODE_SOURCES and source.get("defaultMode") is None:
            source["defaultMode"] = _DEFAULT_MODE
        if key == "hostPath" and source.get("type") is None:
            source["type"] = ""
        elif key == "downwardAPI":
            _items_defaults(source)
        elif key == "projected":
            for projection in source.get("sources") or ():
                projection = _dict(projection)
                token = projection.get("serviceAccountToken")
                if token.__class__ is dict and token.get("expirationSeconds") is None:
                    token["expirationSeconds"] = 3600
                _items_defaults(_dict(projection.get("downwardAPI")))


def _items_defaults(downward: dict) -> None:
    for item in downward.get("items") or ():
        _field_ref_defaults(_dict(item).get("fieldRef"))


def image_pull_policy(image: Any) -> str:
    """SetDefaults_Container: the tag of ``parsers.ParseImageName`` (``latest`` when neither a tag
    nor a digest is given) decides."""
    if not isinstance(image, str):
        return "Always"
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    if not tag and not digest:
        tag = "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _claim_template_defaults(claim: Any) -> None:
    """A StatefulSet's volumeClaimTemplates, as kube serves them: apiVersion and kind filled in,
    ``SetDefaults_PersistentVolumeClaim(Spec)`` (``volumeMode: Filesystem``, ``status.phase:
    Pending``)."""
    if not isinstance(claim, dict):
        return
    claim.setdefault("apiVersion", "v1")
    claim.setdefault("kind", "PersistentVolumeClaim")
    spec = claim.setdefault("spec", {})
    if isinstance(spec, dict) and not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    status = claim.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


def set_defaults(kind: str, obj: dict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind != "DaemonSet" and spec.get("replicas") is None:
        spec["replicas"] = 1
    set_template_defaults(spec.get("template"))
    if kind == "Deployment":
        strategy = spec.setdefault("strategy", {})
        if isinstance(strategy, dict):
            strategy["type"] = strategy.get("type") or "RollingUpdate"
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif kind == "StatefulSet":
        spec["podManagementPolicy"] = spec.get("podManagementPolicy") or "OrderedReady"
        _stateful_update_strategy(spec)
        retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        if isinstance(retention, dict):
            retention["whenDeleted"] = retention.get("whenDeleted") or "Retain"
            retention["whenScaled"] = retention.get("whenScaled") or "Retain"
        spec.setdefault("revisionHistoryLimit", 10)
        for claim in spec.get("volumeClaimTemplates") or []:
            _claim_template_defaults(claim)
    elif kind == "DaemonSet":
        _rolling_update(spec, {"maxUnavailable": 1, "maxSurge": 0})
        spec.setdefault("revisionHistoryLimit", 10)


def _stateful_update_strategy(spec: dict) -> None:
    """SetDefaults_StatefulSet: a missing type becomes RollingUpdate with an empty rollingUpdate;
    a rollingUpdate (so not one left out beside an explicit RollingUpdate) gets ``partition: 0``."""
    strategy = spec.setdefault("updateStrategy", {})
    if not isinstance(strategy, dict):
        return
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
        rolling.setdefault("partition", 0)


def _rolling_update(spec: dict, defaults: dict) -> None:
    strategy = spec.setdefault("updateStrategy", {})
    if not isinstance(strategy, dict):
        return
    strategy["type"] = strategy.get("type") or "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        if isinstance(rolling, dict):
            for key, value in defaults.items():
                rolling.setdefault(key, json_copy(value))


def selector_errors(spec: dict, kind: str) -> list[errors.FieldError]:
    """ValidateDeploymentSpec & co.: a non-empty selector that selects the template's labels."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [errors.FieldError("required", "spec.selector", "")]
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return [errors.FieldError("invalid", "spec.selector", f"empty selector is invalid for {kind.lower()}", value=selector)]
    labels = _dict(_dict(_dict(spec.get("template")).get("metadata")).get("labels"))
    if not matches(selector, labels):
        return [errors.FieldError("invalid", "spec.template.metadata.labels", "`selector` does not match template `labels`", value=labels)]
    return []


def matches(selector: dict, labels: dict) -> bool:
    """metav1.LabelSelector against a set of labels."""
    for key, value in _dict(selector.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for requirement in selector.get("matchExpressions") or []:
        if not isinstance(requirement, dict):
            return False
        key, operator, values = requirement.get("key"), requirement.get("operator"), requirement.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present or operator == "DoesNotExist" and present:
            return False
    return True
