"""Table columns and cells per kind — what ``kubectl get`` prints (kube's TableConvertor).

Custom kinds use their CRD's ``additionalPrinterColumns`` evaluated with JSONPath as
kube-apiserver does (``Age`` by default when the CRD lists none). Core kinds get the computed
columns kube-apiserver's printers produce (pods READY/STATUS/RESTARTS, nodes STATUS/ROLES, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from mockapi import jsonpath
from mockapi.gvk import PrinterColumn, ResourceType
from mockapi.registry import autoscaling
from mockapi.selectors import LabelSelector

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a "
    "client to request the generation of an appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated."
)
AGE = PrinterColumn("Age", "date", ".metadata.creationTimestamp", "CreationTimestamp is a timestamp representing the server time when this object was created.")


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description, "priority": self.priority}


Cells = Callable[[dict, datetime], list]


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def age(timestamp: Any, now: datetime) -> str:
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return human_duration((now - moment).total_seconds())


def table_for(rt: ResourceType) -> tuple[list[Column], Cells]:
    """The column definitions and the cell function of a kind."""
    printer = _CORE.get((rt.group, rt.kind)) if rt.builtin else None
    if printer is not None:
        return printer
    return _custom(rt)


def _custom(rt: ResourceType) -> tuple[list[Column], Cells]:
    printer_columns = list(rt.printer_columns) or [AGE]
    columns = [Column("Name", "string", "name", NAME_DESCRIPTION)]
    columns += [Column(c.name, c.type, c.format, c.description, c.priority) for c in printer_columns]
    paths = [jsonpath.compile(c.json_path) for c in printer_columns]

    def cells(obj: dict, now: datetime) -> list:
        row: list = [obj["metadata"].get("name", "")]
        for column, path in zip(printer_columns, paths):
            found = path.find(obj)
            row.append(None if not found else _cell(column.type, found[0], now))
        return row

    return columns, cells


def _cell(kind: str, value: Any, now: datetime) -> Any:
    if kind == "date":
        return age(value, now)
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    return jsonpath.format_value(value)


# ---------------------------------------------------------------------------- core kinds
def _get(obj: Any, *path: str, default: Any = None) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(key)
    return default if obj is None else obj


def _name(obj: dict) -> str:
    return obj["metadata"].get("name", "")


def _created(obj: dict, now: datetime) -> str:
    return age(obj["metadata"].get("creationTimestamp"), now)


def _pod_cells(obj: dict, now: datetime) -> list:
    statuses = _get(obj, "status", "containerStatuses", default=[])
    containers = _get(obj, "spec", "containers", default=[])
    ready = sum(1 for s in statuses if isinstance(s, dict) and s.get("ready"))
    restarts = sum(int(s.get("restartCount", 0)) for s in statuses if isinstance(s, dict))
    status = _get(obj, "status", "reason") or _get(obj, "status", "phase", default="Unknown")
    if obj["metadata"].get("deletionTimestamp"):
        status = "Terminating"
    return [
        _name(obj), f"{ready}/{len(containers)}", status, restarts, _created(obj, now),
        _get(obj, "status", "podIP", default="<none>"), _get(obj, "spec", "nodeName", default="<none>"),
        _get(obj, "status", "nominatedNodeName", default="<none>"), "<none>",
    ]


def _node_cells(obj: dict, now: datetime) -> list:
    conditions = {c.get("type"): c.get("status") for c in _get(obj, "status", "conditions", default=[]) if isinstance(c, dict)}
    status = {"True": "Ready", "False": "NotReady"}.get(conditions.get("Ready"), "Unknown")
    if _get(obj, "spec", "unschedulable"):
        status += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (obj["metadata"].get("labels") or {}) if k.startswith("node-role.kubernetes.io/") and "/" in k)
    addresses = {a.get("type"): a.get("address") for a in _get(obj, "status", "addresses", default=[]) if isinstance(a, dict)}
    info = _get(obj, "status", "nodeInfo", default={})
    return [
        _name(obj), status, ",".join(r for r in roles if r) or "<none>", _created(obj, now), info.get("kubeletVersion", ""),
        addresses.get("InternalIP", "<none>"), addresses.get("ExternalIP", "<none>"), info.get("osImage", "<unknown>"),
        info.get("kernelVersion", "<unknown>"), info.get("containerRuntimeVersion", "<unknown>"),
    ]


def _event_cells(obj: dict, now: datetime) -> list:
    involved = obj.get("involvedObject") or {}
    last = obj.get("lastTimestamp") or obj.get("eventTime") or obj["metadata"].get("creationTimestamp")
    first = obj.get("firstTimestamp") or obj.get("eventTime") or obj["metadata"].get("creationTimestamp")
    source = _get(obj, "source", "component") or obj.get("reportingComponent") or ""
    host = _get(obj, "source", "host")
    return [
        age(last, now), obj.get("type", ""), obj.get("reason", ""), f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        involved.get("fieldPath", ""), f"{source}, {host}" if host else source, obj.get("message", ""), age(first, now),
        int(obj.get("count") or 1), _name(obj),
    ]


def _service_cells(obj: dict, now: datetime) -> list:
    """kube's printService: TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), AGE, SELECTOR."""
    spec = _get(obj, "spec", default={})
    kind = spec.get("type", "")
    external = ",".join(spec.get("externalIPs") or []) or "<none>"
    if kind == "ExternalName":
        external = spec.get("externalName", "")
    elif kind == "LoadBalancer":
        ingress = [i.get("ip") or i.get("hostname") for i in _get(obj, "status", "loadBalancer", "ingress", default=[]) if isinstance(i, dict)]
        found = [*filter(None, ingress), *(spec.get("externalIPs") or [])]
        external = ",".join(found) if found else "<pending>"
    ports = []
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            node = f":{port['nodePort']}" if port.get("nodePort") else ""
            ports.append(f"{port.get('port')}{node}/{port.get('protocol', 'TCP')}")
    selector = spec.get("selector") or {}
    return [
        _name(obj), kind, spec.get("clusterIP") or "<none>", external, ",".join(ports) or "<none>", _created(obj, now),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


def _containers(obj: dict) -> list:
    """The wide CONTAINERS and IMAGES cells of a pod template's kinds."""
    containers = [c for c in _get(obj, "spec", "template", "spec", "containers", default=[]) if isinstance(c, dict)]
    return [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)]


def _selector(selector: Any) -> str:
    """metav1.FormatLabelSelector."""
    text = LabelSelector.render(selector)
    return "<error>" if text is None else text or "<none>"


def _workload_cells(kind: str) -> Cells:
    def cells(obj: dict, now: datetime) -> list:
        spec, status = _get(obj, "spec", default={}), _get(obj, "status", default={})
        wide = [*_containers(obj), _selector(spec.get("selector"))]
        if kind == "Deployment":
            head = [f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}", status.get("updatedReplicas", 0), status.get("availableReplicas", 0)]
        elif kind == "ReplicaSet":
            head = [spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0)]
        elif kind == "StatefulSet":
            head, wide = [f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}"], wide[:2]
        else:
            node_selector = _get(spec, "template", "spec", "nodeSelector", default={})
            head = [status.get("desiredNumberScheduled", 0), status.get("currentNumberScheduled", 0), status.get("numberReady", 0),
                    status.get("updatedNumberScheduled", 0), status.get("numberAvailable", 0),
                    ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>"]  # fmt: skip
        return [_name(obj), *head, _created(obj, now), *wide]

    return cells


def _job_cells(obj: dict, now: datetime) -> list:
    """kube's printJob: STATUS from the conditions, COMPLETIONS, DURATION."""
    spec, status = _get(obj, "spec", default={}), _get(obj, "status", default={})
    true = {c.get("type") for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("status") == "True"}
    state = "Running"
    for condition, name in (("Complete", "Complete"), ("Failed", "Failed"), ("", "Terminating"), ("Suspended", "Suspended"),
                            ("FailureTarget", "FailureTarget"), ("SuccessCriteriaMet", "SuccessCriteriaMet")):  # fmt: skip
        if (condition in true) if condition else obj["metadata"].get("deletionTimestamp"):
            state = name
            break
    succeeded, parallelism = status.get("succeeded", 0), spec.get("parallelism")
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif isinstance(parallelism, int) and parallelism > 1:
        completions = f"{succeeded}/1 of {parallelism}"
    else:
        completions = f"{succeeded}/1"
    duration = ""
    if status.get("startTime"):
        end = status.get("completionTime")
        duration = age(status["startTime"], now) if not end else age(status["startTime"], _moment(end))
    return [_name(obj), state, completions, duration, _created(obj, now), *_containers(obj), _selector(spec.get("selector"))]


def _moment(timestamp: str) -> datetime:
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(timezone.utc)


def _cronjob_cells(obj: dict, now: datetime) -> list:
    spec, status = _get(obj, "spec", default={}), _get(obj, "status", default={})
    job = _get(spec, "jobTemplate", default={})
    last = status.get("lastScheduleTime")
    return [
        _name(obj), spec.get("schedule", ""), spec.get("timeZone") or "<none>", "True" if spec.get("suspend") else "False",
        len(status.get("active") or []), age(last, now) if last else "<none>", _created(obj, now), *_containers(job),
        _selector(_get(job, "spec", "selector")),
    ]


def _column(name: str, priority: int = 0, kind: str = "string", fmt: str = "") -> Column:
    return Column(name, kind, fmt, name, priority)


_NAME = Column("Name", "string", "name", NAME_DESCRIPTION)
_AGE = _column("Age")
_CORE: dict[tuple[str, str], tuple[list[Column], Cells]] = {
    ("", "Pod"): (
        [_NAME, _column("Ready"), _column("Status"), _column("Restarts", kind="string"), _AGE, _column("IP", 1), _column("Node", 1), _column("Nominated Node", 1), _column("Readiness Gates", 1)],
        _pod_cells,
    ),
    ("", "Node"): (
        [_NAME, _column("Status"), _column("Roles"), _AGE, _column("Version"), _column("Internal-IP", 1), _column("External-IP", 1), _column("OS-Image", 1), _column("Kernel-Version", 1), _column("Container-Runtime", 1)],
        _node_cells,
    ),
    ("", "Namespace"): ([_NAME, _column("Status"), _AGE], lambda o, now: [_name(o), _get(o, "status", "phase", default=""), _created(o, now)]),
    ("", "ConfigMap"): ([_NAME, _column("Data", kind="integer"), _AGE], lambda o, now: [_name(o), len(o.get("data") or {}) + len(o.get("binaryData") or {}), _created(o, now)]),
    ("", "Secret"): ([_NAME, _column("Type"), _column("Data", kind="integer"), _AGE], lambda o, now: [_name(o), o.get("type", ""), len(o.get("data") or {}), _created(o, now)]),
    ("", "Event"): (
        [_column("Last Seen"), _column("Type"), _column("Reason"), _column("Object"), _column("Subobject", 1), _column("Source", 1), _column("Message"), _column("First Seen", 1), _column("Count", 1, "integer"), Column("Name", "string", "name", NAME_DESCRIPTION, 1)],
        _event_cells,
    ),
    ("", "Service"): (
        [_NAME, _column("Type"), _column("Cluster-IP"), _column("External-IP"), _column("Port(s)"), _AGE, _column("Selector", 1)],
        _service_cells,
    ),
    ("", "ServiceAccount"): ([_NAME, _column("Secrets", kind="integer"), _AGE], lambda o, now: [_name(o), len(o.get("secrets") or []), _created(o, now)]),
    ("scheduling.k8s.io", "PriorityClass"): (
        [_NAME, _column("Value", kind="integer"), _column("Global-Default", kind="boolean"), _AGE, _column("PreemptionPolicy")],
        lambda o, now: [_name(o), o.get("value", 0), bool(o.get("globalDefault")), _created(o, now), o.get("preemptionPolicy", "")],
    ),
    ("apps", "Deployment"): (
        [_NAME, _column("Ready"), _column("Up-to-date", kind="integer"), _column("Available", kind="integer"), _AGE, _column("Containers", 1), _column("Images", 1), _column("Selector", 1)],
        _workload_cells("Deployment"),
    ),
    ("apps", "ReplicaSet"): (
        [_NAME, _column("Desired", kind="integer"), _column("Current", kind="integer"), _column("Ready", kind="integer"), _AGE, _column("Containers", 1), _column("Images", 1), _column("Selector", 1)],
        _workload_cells("ReplicaSet"),
    ),
    ("apps", "StatefulSet"): ([_NAME, _column("Ready"), _AGE, _column("Containers", 1), _column("Images", 1)], _workload_cells("StatefulSet")),
    ("apps", "DaemonSet"): (
        [_NAME, _column("Desired", kind="integer"), _column("Current", kind="integer"), _column("Ready", kind="integer"), _column("Up-to-date", kind="integer"),
         _column("Available", kind="integer"), _column("Node Selector"), _AGE, _column("Containers", 1), _column("Images", 1), _column("Selector", 1)],
        _workload_cells("DaemonSet"),
    ),
    ("batch", "Job"): (
        [_NAME, _column("Status"), _column("Completions"), _column("Duration"), _AGE, _column("Containers", 1), _column("Images", 1), _column("Selector", 1)],
        _job_cells,
    ),
    ("batch", "CronJob"): (
        [_NAME, _column("Schedule"), _column("Timezone"), _column("Suspend"), _column("Active", kind="integer"), _column("Last Schedule"), _AGE,
         _column("Containers", 1), _column("Images", 1), _column("Selector", 1)],
        _cronjob_cells,
    ),
    ("coordination.k8s.io", "Lease"): (
        [_NAME, _column("Holder"), _AGE],
        lambda o, now: [_name(o), _get(o, "spec", "holderIdentity", default=""), _created(o, now)],
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        [_NAME, _column("Created At", kind="date")],
        lambda o, now: [_name(o), o["metadata"].get("creationTimestamp", "")],
    ),
    **{("rbac.authorization.k8s.io", kind): ([_NAME, _column("Created At", kind="date")], lambda o, now: [_name(o), o["metadata"].get("creationTimestamp", "")])
       for kind in ("Role", "ClusterRole")},
    **{("rbac.authorization.k8s.io", kind): (
        [_NAME, _column("Role"), _AGE, _column("Users", 1), _column("Groups", 1), _column("ServiceAccounts", 1)],
        lambda o, now: _binding_cells(o, now),
    ) for kind in ("RoleBinding", "ClusterRoleBinding")},
}


# --- issue 12: core/v1 storage, endpoints, replication and policy kinds; apps/v1 ControllerRevision
_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))


def _access_modes(modes: Any) -> str:
    """kube's GetAccessModesAsString: the short forms, in kube's order, each once."""
    given = modes if isinstance(modes, list) else []
    return ",".join(short for mode, short in _ACCESS_MODES if mode in given)


def _storage_class(obj: dict) -> str:
    """GetPersistentVolume(Claim)Class: the beta annotation first, then spec.storageClassName."""
    annotations = obj["metadata"].get("annotations") or {}
    return annotations.get("volume.beta.kubernetes.io/storage-class") or _get(obj, "spec", "storageClassName", default="")


def _labels(labels: Any) -> str:
    """labels.FormatLabels: sorted k=v pairs, or <none>."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) if isinstance(labels, dict) and labels else "<none>"


def _pvc_cells(obj: dict, now: datetime) -> list:
    """kube's printPersistentVolumeClaim: capacity and access modes from the status, once bound."""
    spec, status = _get(obj, "spec", default={}), _get(obj, "status", default={})
    phase = "Terminating" if obj["metadata"].get("deletionTimestamp") else status.get("phase", "")
    capacity = str(_get(status, "capacity", "storage", default="")) if spec.get("volumeName") else ""
    return [_name(obj), phase, spec.get("volumeName", ""), capacity, _access_modes(status.get("accessModes")), _storage_class(obj),
            spec.get("volumeAttributesClassName") or "<unset>", _created(obj, now), spec.get("volumeMode") or "<unset>"]  # fmt: skip


def _pv_cells(obj: dict, now: datetime) -> list:
    """kube's printPersistentVolume: CLAIM is namespace/name of the claimRef."""
    spec, status = _get(obj, "spec", default={}), _get(obj, "status", default={})
    phase = "Terminating" if obj["metadata"].get("deletionTimestamp") else status.get("phase", "")
    ref = spec.get("claimRef") if isinstance(spec.get("claimRef"), dict) else None
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    return [_name(obj), str(_get(spec, "capacity", "storage", default="")), _access_modes(spec.get("accessModes")), spec.get("persistentVolumeReclaimPolicy", ""),
            phase, claim, _storage_class(obj), spec.get("volumeAttributesClassName") or "<unset>", status.get("reason", ""), _created(obj, now),
            spec.get("volumeMode") or "<unset>"]  # fmt: skip


def _endpoints_cells(obj: dict, now: datetime) -> list:
    """kube's formatEndpoints: the first three ip:port pairs, then "+ N more..."."""
    subsets = [s for s in obj.get("subsets") or [] if isinstance(s, dict)]
    if not subsets:
        return [_name(obj), "<none>", _created(obj, now)]
    shown: list[str] = []
    count, more = 0, False
    for subset in subsets:
        addresses = [a.get("ip", "") for a in subset.get("addresses") or [] if isinstance(a, dict)]
        ports = [p for p in subset.get("ports") or [] if isinstance(p, dict)] or [None]
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(shown) == 3:
                    more = True
                    break
                shown.append(ip if port is None else (f"[{ip}]:{port.get('port')}" if ":" in ip else f"{ip}:{port.get('port')}"))
    cell = ",".join(shown) + (f" + {count - 3} more..." if more else "")
    return [_name(obj), cell, _created(obj, now)]


def _rc_cells(obj: dict, now: datetime) -> list:
    spec, status = _get(obj, "spec", default={}), _get(obj, "status", default={})
    return [_name(obj), spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0), _created(obj, now),
            *_containers(obj), _labels(spec.get("selector"))]  # fmt: skip


def _pod_template_cells(obj: dict, now: datetime) -> list:
    template = _get(obj, "template", default={})
    return [_name(obj), *_containers({"spec": {"template": template}}), _labels(_get(template, "metadata", "labels"))]


def _quota_cells(obj: dict, now: datetime) -> list:
    """kube's printResourceQuota: "name: used/hard" per status.hard entry, limits.* under LIMIT."""
    hard, used = _get(obj, "status", "hard", default={}), _get(obj, "status", "used", default={})
    request, limit = [], []
    for name in sorted(hard):
        (limit if name.startswith("limits.") else request).append(f"{name}: {used.get(name, 0)}/{hard[name]}")
    return [_name(obj), _created(obj, now), ", ".join(request), ", ".join(limit)]


def _revision_cells(obj: dict, now: datetime) -> list:
    """kube's printControllerRevision: CONTROLLER is kind.group/name of the controller owner."""
    owner = next((r for r in obj["metadata"].get("ownerReferences") or [] if isinstance(r, dict) and r.get("controller")), None)
    controller = "<none>"
    if owner is not None:
        group = owner.get("apiVersion", "").rpartition("/")[0]
        controller = f"{owner.get('kind', '').lower()}{'.' + group if group else ''}/{owner.get('name', '')}"
    return [_name(obj), controller, obj.get("revision", 0), _created(obj, now)]


_CORE.update({
    ("", "PersistentVolumeClaim"): (
        [_NAME, _column("Status"), _column("Volume"), _column("Capacity"), _column("Access Modes"), _column("StorageClass"),
         _column("VolumeAttributesClass"), _AGE, _column("VolumeMode", 1)],
        _pvc_cells,
    ),
    ("", "PersistentVolume"): (
        [_NAME, _column("Capacity"), _column("Access Modes"), _column("Reclaim Policy"), _column("Status"), _column("Claim"), _column("StorageClass"),
         _column("VolumeAttributesClass"), _column("Reason"), _AGE, _column("VolumeMode", 1)],
        _pv_cells,
    ),
    ("", "Endpoints"): ([_NAME, _column("Endpoints"), _AGE], _endpoints_cells),
    ("", "ReplicationController"): (
        [_NAME, _column("Desired", kind="integer"), _column("Current", kind="integer"), _column("Ready", kind="integer"), _AGE,
         _column("Containers", 1), _column("Images", 1), _column("Selector", 1)],
        _rc_cells,
    ),
    ("", "PodTemplate"): ([_NAME, _column("Containers"), _column("Images"), _column("Pod Labels")], _pod_template_cells),
    ("", "LimitRange"): ([_NAME, _column("Created At", kind="date")], lambda o, now: [_name(o), o["metadata"].get("creationTimestamp", "")]),
    ("", "ResourceQuota"): ([_NAME, _AGE, _column("Request"), _column("Limit")], _quota_cells),
    ("apps", "ControllerRevision"): ([_NAME, _column("Controller"), _column("Revision", kind="integer"), _AGE], _revision_cells),
})

def _binding_cells(obj: dict, now: datetime) -> list:
    """kube's printRoleBinding: ROLE is Kind/name; subjects by kind, ServiceAccounts as namespace/name."""
    ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
    by_kind: dict[str, list[str]] = {"User": [], "Group": [], "ServiceAccount": []}
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and subject.get("kind") in by_kind:
            name = subject.get("name", "")
            by_kind[subject["kind"]].append(f"{subject.get('namespace', '')}/{name}" if subject["kind"] == "ServiceAccount" else name)
    return [_name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", _created(obj, now), *(", ".join(by_kind[k]) for k in ("User", "Group", "ServiceAccount"))]


# ------------------------------------------------- policy, networking, storage, discovery (issue 12)
def _pdb_cells(obj: dict, now: datetime) -> list:
    """kube's printPodDisruptionBudget: N/A for the bound that is not set."""
    spec = _get(obj, "spec", default={})
    bounds = [str(spec[key]) if spec.get(key) is not None else "N/A" for key in ("minAvailable", "maxUnavailable")]
    return [_name(obj), *bounds, _get(obj, "status", "disruptionsAllowed", default=0), _created(obj, now)]


def _more(items: list[str], total: int, limit: int = 3) -> str:
    """kube's listWithMoreString: the first three, then ' + N more...'."""
    text = ",".join(items[:limit])
    if total > limit:
        return f"{text} + {total - limit} more..."
    return text


def _load_balancer(obj: dict) -> str:
    """kube's ingressLoadBalancerStatusStringer (not wide: cut to 13 characters and '...' past 16)."""
    found = [i.get("ip") or i.get("hostname") for i in _get(obj, "status", "loadBalancer", "ingress", default=[]) if isinstance(i, dict)]
    text = ",".join(filter(None, found))
    return text[:13] + "..." if len(text) > 16 else text


def _ingress_cells(obj: dict, now: datetime) -> list:
    """kube's printIngress: CLASS, HOSTS (* for none), ADDRESS, PORTS (80, or 80, 443 with TLS)."""
    spec = _get(obj, "spec", default={})
    rules = [r for r in spec.get("rules") or [] if isinstance(r, dict)]
    hosts = [r["host"] for r in rules if r.get("host")]
    return [
        _name(obj), spec.get("ingressClassName") or "<none>", _more(hosts, len(rules)) if hosts else "*", _load_balancer(obj),
        "80, 443" if spec.get("tls") else "80", _created(obj, now),
    ]


def _ingress_class_cells(obj: dict, now: datetime) -> list:
    parameters = _get(obj, "spec", "parameters")
    shown = "<none>"
    if isinstance(parameters, dict):
        group = f".{parameters['apiGroup']}" if parameters.get("apiGroup") else ""
        shown = f"{parameters.get('kind', '')}{group}/{parameters.get('name', '')}"
    return [_name(obj), _get(obj, "spec", "controller", default=""), shown, _created(obj, now)]


def _storage_class_cells(obj: dict, now: datetime) -> list:
    name = _name(obj)
    if (obj["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true":
        name += " (default)"
    return [name, obj.get("provisioner", ""), obj.get("reclaimPolicy", ""), obj.get("volumeBindingMode", ""), bool(obj.get("allowVolumeExpansion")), _created(obj, now)]


def _endpoint_slice_cells(obj: dict, now: datetime) -> list:
    """kube's printEndpointSlice: the first three ports and addresses, <unset> for none."""
    ports = [p for p in obj.get("ports") or [] if isinstance(p, dict)]
    shown = [str(p["port"]) if p.get("port") is not None else (p.get("name") or "*") for p in ports]
    addresses = [a for e in obj.get("endpoints") or [] if isinstance(e, dict) for a in e.get("addresses") or []]
    return [_name(obj), obj.get("addressType", ""), _more(shown, len(shown)) or "<unset>", _more(addresses, len(addresses)) or "<unset>", _created(obj, now)]


_METRIC_SOURCE = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods", "Object": "object", "External": "external"}


def _hpa_target(spec: dict, status: Any) -> str:
    """One metric of kube's formatHPAMetrics: current/target, '<unknown>' until a controller reports."""
    kind = spec.get("type")
    field = _METRIC_SOURCE.get(kind, "")
    source, current = _get(spec, field, default={}), _get(status, field, "current", default={})
    target = _get(source, "target", default={})
    if kind in ("Resource", "ContainerResource"):
        if target.get("averageValue") is not None:
            return f"{source.get('name', '')}: {current.get('averageValue', '<unknown>')}/{target['averageValue']}"
        now = f"{current['averageUtilization']}%" if current.get("averageUtilization") is not None else "<unknown>"
        goal = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
        return f"{source.get('name', '')}: {now}/{goal}"
    if kind == "Pods":
        return f"{current.get('averageValue', '<unknown>')}/{target.get('averageValue', '')}"
    if kind in ("Object", "External"):
        if target.get("averageValue") is not None:
            return f"{current.get('averageValue', '<unknown>')}/{target['averageValue']} (avg)"
        return f"{current.get('value', '<unknown>')}/{target.get('value', '')}"
    return "<unknown type>"


def _hpa_cells(obj: dict, now: datetime) -> list:
    """kube's printHorizontalPodAutoscaler: REFERENCE kind/name, the first two TARGETS, MINPODS <unset> when unset
    (kube prints the internal object: an autoscaling/v1 one is read as the v2 it converts to)."""
    if obj.get("apiVersion") == "autoscaling/v1":
        obj = autoscaling.convert(obj, "autoscaling/v2")
    spec, status = _get(obj, "spec", default={}), _get(obj, "status", default={})
    ref = _get(spec, "scaleTargetRef", default={})
    metrics = [m for m in spec.get("metrics") or [] if isinstance(m, dict)]
    statuses = [s for s in status.get("currentMetrics") or []]
    targets = [_hpa_target(m, statuses[i] if i < len(statuses) else {}) for i, m in enumerate(metrics)]
    shown = ", ".join(targets[:2]) + (f" + {len(targets) - 2} more..." if len(targets) > 2 else "") if targets else "<none>"
    low = spec.get("minReplicas")
    return [_name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", shown, "<unset>" if low is None else low, spec.get("maxReplicas", 0),
            status.get("currentReplicas", 0), _created(obj, now)]  # fmt: skip


def _apiservice_cells(obj: dict, now: datetime) -> list:
    """kube's printAPIService: SERVICE is Local or namespace/name; AVAILABLE the condition, with its reason unless True."""
    service = _get(obj, "spec", "service")
    shown = f"{service.get('namespace', '')}/{service.get('name', '')}" if isinstance(service, dict) else "Local"
    available = "Unknown"
    for condition in _get(obj, "status", "conditions", default=[]):
        if isinstance(condition, dict) and condition.get("type") == "Available":
            available = condition.get("status", "")
            if available != "True":
                available += f" ({condition.get('reason', '')})"
    return [_name(obj), shown, available, _created(obj, now)]


_CORE.update({
    ("apiregistration.k8s.io", "APIService"): ([_NAME, _column("Service"), _column("Available"), _AGE], _apiservice_cells),
    ("autoscaling", "HorizontalPodAutoscaler"): (
        [_NAME, _column("Reference"), _column("Targets"), _column("MinPods", kind="string"), _column("MaxPods", kind="integer"), _column("Replicas", kind="integer"), _AGE],
        _hpa_cells,
    ),
    ("policy", "PodDisruptionBudget"): (
        [_NAME, _column("Min Available"), _column("Max Unavailable"), _column("Allowed Disruptions", kind="integer"), _AGE], _pdb_cells,
    ),
    ("networking.k8s.io", "Ingress"): ([_NAME, _column("Class"), _column("Hosts"), _column("Address"), _column("Ports"), _AGE], _ingress_cells),
    ("networking.k8s.io", "IngressClass"): ([_NAME, _column("Controller"), _column("Parameters"), _AGE], _ingress_class_cells),
    ("networking.k8s.io", "NetworkPolicy"): (
        [_NAME, _column("Pod-Selector"), _AGE], lambda o, now: [_name(o), _selector(_get(o, "spec", "podSelector")), _created(o, now)],
    ),
    ("storage.k8s.io", "StorageClass"): (
        [_NAME, _column("Provisioner"), _column("ReclaimPolicy"), _column("VolumeBindingMode"), _column("AllowVolumeExpansion"), _AGE],
        _storage_class_cells,
    ),
    ("discovery.k8s.io", "EndpointSlice"): (
        [_NAME, _column("AddressType"), _column("Ports"), _column("Endpoints"), _AGE], _endpoint_slice_cells,
    ),
})
