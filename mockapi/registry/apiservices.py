"""apiregistration.k8s.io/v1 APIService, and the local APIServices kube-apiserver lists for every
group-version it serves itself.

- **Local APIServices**: kube's autoregister controller keeps one APIService per built-in
  group-version (``v1.``, ``v1.apps``, ``v2.autoscaling``, ...; label
  ``kube-aggregator.kubernetes.io/automanaged: onstart``, kube's group and version priorities) and
  one per custom resource group-version (``automanaged: "true"``, priorities 1000 and 100),
  added and removed as CRDs come and go (:func:`sync`, called at start-up and by the CRD strategy).
  None has a ``service``; their status is kube's: ``Available`` True, reason ``Local``.
- **Other APIServices** may be created (``kubectl apply`` of a metrics-server manifest works), but
  mockapi does not aggregate: no request is proxied to the service, and the availability
  controller's verdict is what it says when the service is missing (``Available`` False,
  ``ServiceNotFound``), whether or not a Service of that name exists. Discovery is unchanged.
- **Validation** (``pkg/apis/apiregistration/validation``): the name is ``<version>.<group>``;
  ``version`` is required; ``groupPriorityMinimum`` in 1..20000 and ``versionPriority`` in
  1..1000; a local APIService has no ``caBundle`` and no ``insecureSkipTLSVerify``; a service
  names its namespace and name and a port in 1..65535. The status is the server's: what a write
  sends there is replaced.
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import Strategy

GROUP = "apiregistration.k8s.io"
APISERVICES = errors.GroupResource(GROUP, "apiservices")
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
AUTOMANAGED_RAW = b'"kube-aggregator.kubernetes.io/automanaged"'
# kube's apiVersionPriorities (pkg/controlplane/apiserver and cmd/kube-apiserver/app/aggregator.go):
# (groupPriorityMinimum, versionPriority) of each built-in group-version.
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apiregistration.k8s.io", "v1"): (18000, 15),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
CRD_PRIORITIES = (1000, 100)  # kube's crdRegistrationController: "CRDs should have relatively low priority"
LOCAL_MESSAGE = "Local APIServices are always available"


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


class APIServiceStrategy(Strategy):
    name_rule = "path-segment"  # the core group's is "v1.", which is no DNS subdomain

    def prepare_for_create(self, obj: dict) -> None:
        obj.pop("status", None)

    def before_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        """The availability controller's verdict, at once."""
        obj["status"] = {"conditions": [_available(obj, old, cluster.now())]}

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = _dict(obj.get("spec"))
        group, version = spec.get("group") or "", spec.get("version") or ""
        problems = []
        if obj["metadata"].get("name") != f"{version}.{group}":
            problems.append(errors.FieldError("invalid", "metadata.name", 'must be `spec.version+"."+spec.group`', value=obj["metadata"].get("name")))
        if not version:
            problems.append(errors.FieldError("required", "spec.version", ""))
        group_priority, version_priority = spec.get("groupPriorityMinimum"), spec.get("versionPriority")
        if isinstance(group_priority, int) and not 0 < group_priority <= 20000:
            problems.append(errors.FieldError("invalid", "spec.groupPriorityMinimum", "must be positive and less than 20000", value=group_priority))
        if isinstance(version_priority, int) and not 0 < version_priority <= 1000:
            problems.append(errors.FieldError("invalid", "spec.versionPriority", "must be positive and less than 1000", value=version_priority))
        service = spec.get("service")
        if service is None:
            if spec.get("caBundle"):
                problems.append(errors.FieldError("invalid", "spec.caBundle", "local APIServices may not have a caBundle", value=spec["caBundle"]))
            if spec.get("insecureSkipTLSVerify"):
                problems.append(errors.FieldError("invalid", "spec.insecureSkipTLSVerify", "local APIServices may not have insecureSkipTLSVerify", value=True))
        else:
            service = _dict(service)
            problems += [errors.FieldError("required", f"spec.service.{key}", "") for key in ("namespace", "name") if not service.get(key)]
            port = service.get("port")
            if isinstance(port, int) and not 0 < port < 65536:
                problems.append(errors.FieldError("invalid", "spec.service.port", "port is not valid: must be between 1 and 65535, inclusive", value=port))
        return problems


def _available(obj: dict, old: dict | None, now: str) -> dict:
    service = _dict(obj.get("spec")).get("service")
    if service is None:
        status, reason, message = "True", "Local", LOCAL_MESSAGE
    else:
        status, reason = "False", "ServiceNotFound"
        message = f'service/{_dict(service).get("name", "")} in "{_dict(service).get("namespace", "")}" is not present'
    before = next((c for c in _dict((old or {}).get("status")).get("conditions") or [] if _dict(c).get("type") == "Available"), None)
    since = before["lastTransitionTime"] if before and before.get("status") == status and before.get("lastTransitionTime") else now
    return {"type": "Available", "status": status, "lastTransitionTime": since, "reason": reason, "message": message}


def local_apiservice(group: str, version: str, *, custom: bool) -> dict:
    """The APIService kube's autoregister controller keeps for a group-version served in-process."""
    group_priority, version_priority = CRD_PRIORITIES if custom else PRIORITIES.get((group, version), CRD_PRIORITIES)
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{group}", "labels": {AUTOMANAGED: "true" if custom else "onstart"}},
        "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority, "versionPriority": version_priority},
    }


def sync(cluster: Cluster) -> None:
    """Make the automanaged APIServices match the group-versions served: create the missing ones,
    delete those of custom group-versions no longer served (built-in ones stay, as ``onstart``)."""
    rt = cluster.types.by_kind(GROUP, "v1", "APIService")
    if rt is None:
        return
    wanted: dict[str, tuple[str, str, bool]] = {}
    for served in cluster.types.all():
        wanted.setdefault(f"{served.version}.{served.group}", (served.group, served.version, not served.builtin))
    stored = {s.name: s for s in cluster.objects(APISERVICES)}
    for name, (group, version, custom) in wanted.items():
        if name not in stored:
            cluster.create(rt, local_apiservice(group, version, custom=custom))
    for name, found in stored.items():
        if name not in wanted and b'"kube-aggregator.kubernetes.io/automanaged":"true"' in found.raw:
            cluster.delete(rt, "", name)


def system_apiservice(raw: bytes) -> bool:
    """Kept by a reset: the automanaged ones (sync puts the custom ones' in step with the CRDs)."""
    return AUTOMANAGED_RAW in raw
