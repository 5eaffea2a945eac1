"""CustomResourceDefinitions: the kind's strategy and what the apiextensions controllers do, at once.

On create/update a CRD's status gets NamesAccepted and Established (or NamesAccepted=False on a
name conflict) and its kinds are served at once; on delete its objects are deleted (with DELETED
events), its watchers closed and its kinds unregistered — what the apiextensions controllers do,
without the wait. Requests to a served version marked ``deprecated`` get its deprecation warning
(:meth:`CustomResourceDefinitionStrategy.deprecation_warning`). The strategy instance (one per
registry) holds what it serves.
"""

from __future__ import annotations

import re

from mockapi import errors, gvk
from mockapi.gvk import ResourceType
from mockapi.registry import apiservices, known_crds
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import CustomResourceStrategy

GROUP, KIND = "apiextensions.k8s.io", "CustomResourceDefinition"
CRDS = errors.GroupResource(GROUP, "customresourcedefinitions")


class CustomResourceDefinitionStrategy(CustomResourceStrategy):
    typed = True
    pure_create = False  # its validation reads metadata.name (<plural>.<group>)

    def __init__(self, rt: ResourceType) -> None:
        super().__init__(rt)
        self._served: dict[str, list[ResourceType]] = {}  # CRD name → the types it serves
        self._deprecations: dict[tuple[str, str, str], str] = {}  # (group, version, plural) → warning

    def warnings(self, obj: dict, old: dict | None) -> list[str]:
        return []  # a CRD is not a custom resource: apiextensions' CRD strategy warns about other things

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        if old is None and known_crds.known_valid(obj):
            problems = []  # one of ours, as a test validated it (mockapi.registry.known_crds)
        else:
            from mockapi.schema import crd as crd_validation

            problems = crd_validation.validate_crd(obj)
        if old is not None:
            for path in (("group",), ("scope",)):
                if obj.get("spec", {}).get(path[0]) != old.get("spec", {}).get(path[0]):
                    problems.append(errors.FieldError("invalid", f"spec.{path[0]}", "field is immutable", value=obj["spec"].get(path[0])))
        return problems

    # ------------------------------------------------------------ serving
    def before_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        self._set_status(cluster, obj, old)

    def after_store(self, cluster: Cluster, obj: dict, old: dict | None) -> None:
        self.serve(cluster, obj)
        apiservices.sync(cluster)  # kube's crdRegistrationController

    def after_delete(self, cluster: Cluster, obj: dict) -> None:
        self._unserve(cluster, obj["metadata"]["name"], drop=True)
        apiservices.sync(cluster)

    def deprecation_warning(self, rt: ResourceType) -> str:
        """The Warning every request to a deprecated version of a custom resource gets, or ""."""
        return self._deprecations.get((rt.group, rt.version, rt.plural), "")

    def serve(self, cluster: Cluster, crd: dict) -> None:
        name = crd["metadata"]["name"]
        accepted = _condition(crd, "NamesAccepted") == "True"
        new_types = gvk.from_crd(crd) if accepted else []
        old_types = self._served.get(name, [])
        self._set_deprecations(old_types, new_types, deprecation_warnings(crd) if accepted else {})
        if old_types == new_types:
            return
        types = cluster.types
        for old in old_types:
            if old not in new_types:
                types.unregister(old)
                if not any(t.group_resource == old.group_resource for t in new_types):
                    cluster.close_watchers(old.group_resource)
        for new in new_types:
            types.register(new)
        self._served[name] = new_types

    def _set_deprecations(self, old_types: list[ResourceType], new_types: list[ResourceType], warnings: dict[str, str]) -> None:
        for rt in old_types:
            self._deprecations.pop((rt.group, rt.version, rt.plural), None)
        for rt in new_types:
            if warnings.get(rt.version):
                self._deprecations[(rt.group, rt.version, rt.plural)] = warnings[rt.version]

    def _unserve(self, cluster: Cluster, name: str, *, drop: bool) -> None:
        for rt in self._served.pop(name, []):
            self._deprecations.pop((rt.group, rt.version, rt.plural), None)
            cluster.types.unregister(rt)
            if drop:
                cluster.drop_resource(rt.group_resource)
                cluster.close_watchers(rt.group_resource)

    def _set_status(self, cluster: Cluster, crd: dict, old: dict | None) -> None:
        spec, name = crd["spec"], crd["metadata"]["name"]
        names = spec["names"]
        conflict_reason, conflict = self._name_conflict(cluster, name, spec)
        now = cluster.now()
        previous = {c.get("type"): c for c in ((old or {}).get("status") or {}).get("conditions") or []}

        def condition(kind: str, status: str, reason: str, message: str) -> dict:
            before = previous.get(kind)
            since = before["lastTransitionTime"] if before and before.get("status") == status else now
            return {"type": kind, "status": status, "lastTransitionTime": since, "reason": reason, "message": message}

        if conflict:
            conditions = [
                condition("NamesAccepted", "False", conflict_reason, conflict),
                condition("Established", "False", "NotAccepted", "not all names are accepted"),
            ]
            accepted = {}
        else:
            conditions = [
                condition("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
                condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted"),
            ]
            accepted = {k: names[k] for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories") if names.get(k)}
            accepted.setdefault("singular", names["kind"].lower())
            accepted.setdefault("listKind", names["kind"] + "List")
        stored_versions = list(((old or {}).get("status") or {}).get("storedVersions") or [])
        for version in spec.get("versions") or []:
            if version.get("storage") and version["name"] not in stored_versions:
                stored_versions.append(version["name"])
        crd["status"] = {"acceptedNames": accepted, "conditions": conditions, "storedVersions": stored_versions}

    def _name_conflict(self, cluster: Cluster, name: str, spec: dict) -> tuple[str, str]:
        """(reason, message) when another served type of the group already uses one of the names."""
        names, group = spec["names"], spec["group"]
        mine = self._served.get(name, [])
        others = [rt for rt in cluster.types.kinds_of_group(group) if rt not in mine]
        resource_names = {n for rt in others for n in (rt.plural, rt.singular, *rt.short_names)}
        kind_names = {n for rt in others for n in (rt.kind, rt.list_kind)}
        checks = [
            ("PluralConflict", [names["plural"]], resource_names),
            ("SingularConflict", [names.get("singular") or ""], resource_names),
            ("ShortNamesConflict", names.get("shortNames") or [], resource_names),
            ("KindConflict", [names["kind"]], kind_names),
            ("ListKindConflict", [names.get("listKind") or ""], kind_names),
        ]
        for reason, candidates, taken in checks:
            for candidate in candidates:
                if candidate and candidate in taken:
                    return reason, f'"{candidate}" is already in use'
        return "", ""


def deprecation_warnings(crd: dict) -> dict[str, str]:
    """version → the warning kube-apiserver sends for each request to it, for the served versions
    marked ``deprecated`` (apiextensions' ``deprecationWarning``, or its default: ``<group>/<version>
    <Kind> is deprecated``, with ``; use <group>/<version> <Kind>`` naming the most preferred served,
    non-deprecated version that is newer)."""
    spec = crd["spec"]
    group, kind = spec["group"], spec["names"]["kind"]
    served = [v for v in spec.get("versions") or [] if v.get("served", True)]
    warnings = {}
    for version in served:
        if version.get("deprecated") is not True:
            continue
        if isinstance(version.get("deprecationWarning"), str):
            warnings[version["name"]] = version["deprecationWarning"]
            continue
        newer = sorted(
            (v["name"] for v in served if not v.get("deprecated") and version_priority(v["name"]) < version_priority(version["name"])),
            key=version_priority,
        )
        message = f"{group}/{version['name']} {kind} is deprecated"
        warnings[version["name"]] = message + (f"; use {group}/{newer[0]} {kind}" if newer else "")
    return warnings


def version_priority(version: str) -> tuple:
    """A sort key, most preferred first: GA, beta, alpha, higher numbers first, then other names
    alphabetically (apimachinery's ``CompareKubeAwareVersionStrings``)."""
    match = re.fullmatch(r"v([0-9]+)(?:(alpha|beta)([0-9]+))?", version)
    if match is None:
        return (1, 0, 0, 0, version)
    level = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    return (0, level, -int(match.group(1)), -int(match.group(3) or 0), "")


def _condition(obj: dict, kind: str) -> str:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition.get("status", "")
    return ""
