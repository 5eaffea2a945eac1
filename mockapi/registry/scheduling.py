"""PriorityClasses (scheduling.k8s.io/v1) and kube's Priority admission plugin.

- **PriorityClass** validation as kube's ``ValidatePriorityClass`` / ``...Update``: names starting
  ``system-`` are reserved for the two system classes (with their values), a user class's value is
  at most 1,000,000,000, ``value`` and ``preemptionPolicy`` are immutable. The two system classes
  exist from start-up and cannot be deleted.
- **As kube serializes it**: ``globalDefault: false`` is left out (a Go bool with omitempty), as
  a real server answers.
- **Admission on PriorityClasses**: only one ``globalDefault`` class (403 naming the current one).
- **Admission on pods** (``plugin/pkg/admission/priority``): on create, ``priorityClassName``
  resolves to ``spec.priority`` and ``spec.preemptionPolicy`` (403 when the class does not exist,
  or when the pod gives a different value itself); without a class, the global default class's, or
  priority 0 and ``PreemptLowerPriority``. On update, a pod that leaves them out keeps them.
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy, not_supported

GROUP = "scheduling.k8s.io"
PRIORITY_CLASSES = errors.GroupResource(GROUP, "priorityclasses")
PODS = errors.GroupResource("", "pods")
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPTION_POLICIES = ("Never", PREEMPT_LOWER_PRIORITY)
# pkg/apis/scheduling/types.go: SystemPriorityClasses()
SYSTEM_CLASSES: dict[str, tuple[int, str]] = {
    "system-node-critical": (2_000_001_000, "Used for system critical pods that must not be moved from their current node."),
    "system-cluster-critical": (2_000_000_000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
}


def system_classes() -> list[dict]:
    """The PriorityClasses every cluster has (kube-apiserver's post-start hook creates them)."""
    return [
        {"apiVersion": f"{GROUP}/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value, "description": description}
        for name, (value, description) in SYSTEM_CLASSES.items()
    ]


class PriorityClassStrategy(Strategy):
    return_deleted_object = True

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        _omit_false_default(obj)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        _omit_false_default(new)
        return super().prepare_for_update(new, old, subresource=subresource)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        name, value = obj["metadata"].get("name", ""), obj.get("value")
        problems = []
        if name.startswith("system-"):
            reason = _system_class_error(name, value, bool(obj.get("globalDefault")))
            if reason:
                problems.append(errors.FieldError("forbidden", "metadata.name", f"priority class names with 'system-' prefix are reserved for system use only. error: {reason}"))
        elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
            problems.append(errors.FieldError("forbidden", "value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"))
        policy = obj.get("preemptionPolicy")
        if policy is not None and policy not in PREEMPTION_POLICIES:
            problems.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
        if old is not None:
            if value != old.get("value"):
                problems.append(errors.FieldError("forbidden", "value", "may not be changed in an update."))
            if policy != old.get("preemptionPolicy"):
                problems.append(errors.FieldError("invalid", "preemptionPolicy", "field is immutable", value=policy))
        return problems

    def admit(self, cluster: Cluster, obj: dict) -> None:
        _only_one_default(cluster, obj)

    def before_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        if old is not None:
            _only_one_default(cluster, obj)

    def before_delete(self, cluster: Cluster, obj: dict) -> None:
        if obj["metadata"]["name"] in SYSTEM_CLASSES:
            raise errors.forbidden(PRIORITY_CLASSES, obj["metadata"]["name"], "this is a system priority class and cannot be deleted")


def _omit_false_default(obj: dict) -> None:
    if obj.get("globalDefault") is False:
        del obj["globalDefault"]


def _system_class_error(name: str, value: Any, global_default: bool) -> str:
    """scheduling.IsKnownSystemPriorityClass's error, or "" for a known system class."""
    if name not in SYSTEM_CLASSES:
        return f"name {name} is not a known system priority class"
    if value != SYSTEM_CLASSES[name][0]:
        return f"value of {name} PriorityClass must be {SYSTEM_CLASSES[name][0]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def _only_one_default(cluster: Cluster, obj: dict) -> None:
    if not obj.get("globalDefault"):
        return
    current = default_class(cluster)
    if current is not None and current["metadata"]["name"] != obj["metadata"]["name"]:
        message = f"PriorityClass {current['metadata']['name']} is already marked as default. Only one default can exist"
        raise errors.forbidden(PRIORITY_CLASSES, obj["metadata"]["name"], message)


def default_class(cluster: Cluster) -> dict | None:
    """The global default class; with several (a race upstream), the one of lowest value.
    Read-only: found once per change of the PriorityClasses (every pod create asks)."""
    stamp = cluster.store.stamp(PRIORITY_CLASSES)
    kept = cluster.store.derived.get(_DEFAULT_CLASS)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    found = _default_class(cluster)
    cluster.store.derived[_DEFAULT_CLASS] = (stamp, found)
    return found


_DEFAULT_CLASS = "scheduling.default_class"  # its key in Store.derived


def _default_class(cluster: Cluster) -> dict | None:
    found = None
    for stored in cluster.objects(PRIORITY_CLASSES):
        if b'"globalDefault":true' in stored.raw:
            pc = stored.load()
            if found is None or pc.get("value", 0) < found.get("value", 0):
                found = pc
    return found


def admit_pod(cluster: Cluster, pod: dict) -> None:
    """The Priority plugin on a pod's create: resolve its class to priority and preemption policy."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    name = spec.get("priorityClassName") or ""
    if not name:
        pc = default_class(cluster)
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
        priority, policy = (pc.get("value", 0), pc.get("preemptionPolicy")) if pc is not None else (0, PREEMPT_LOWER_PRIORITY)
    else:
        stored = cluster.get(PRIORITY_CLASSES, "", name)
        if stored is None:
            raise errors.forbidden(PODS, pod["metadata"].get("name", ""), f"no PriorityClass with name {name} was found")
        pc = stored.load()
        priority, policy = pc.get("value", 0), pc.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        message = f"the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
        raise errors.forbidden(PODS, pod["metadata"].get("name", ""), message)
    spec["priority"] = priority
    if policy is not None:
        given = spec.get("preemptionPolicy")
        if given is not None and given != policy:
            message = f"the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
            raise errors.forbidden(PODS, pod["metadata"].get("name", ""), message)
        spec["preemptionPolicy"] = policy


def keep_pod_priority(new: dict, old: dict) -> None:
    """The Priority plugin on a pod's update: what the update leaves out stays as admitted."""
    spec, before = new.get("spec"), old.get("spec") or {}
    if isinstance(spec, dict):
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and before.get(key) is not None:
                spec[key] = before[key]
