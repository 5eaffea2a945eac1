"""Lifecycles that span objects, run synchronously where kube runs controllers.

- **CustomResourceDefinition**: on create/update its status gets NamesAccepted and Established
  (or NamesAccepted=False on a name conflict) and its kinds are served at once; on delete its
  objects are deleted (with DELETED events), its watchers closed and its kinds unregistered —
  what the apiextensions controllers do, without the wait. Requests to a served version marked
  ``deprecated`` get its deprecation warning (:meth:`Lifecycle.deprecation_warning`).
- **DevicePrivilegedClaim**: only in namespaces labelled ``devmgmtproto.k8s.io/admin-access=true``
  (403 Forbidden otherwise).
- **Namespace**: objects can only be created in an existing, non-terminating namespace; deleting a
  namespace marks it Terminating, deletes everything in it, and removes it once empty (objects
  held by finalizers keep it Terminating until they go). ``default``, ``kube-system`` and
  ``kube-public`` cannot be deleted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mockapi import errors, gvk
from mockapi.gvk import ResourceType
from mockapi.registry.options import DeleteOptions

if TYPE_CHECKING:
    from mockapi.registry.rest import Registry

CRD_GROUP, CRD_KIND = "apiextensions.k8s.io", "CustomResourceDefinition"
NAMESPACES = errors.GroupResource("", "namespaces")
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
# A DevicePrivilegedClaim grants admin access to devices: only namespaces that opt in may hold one
# (ALLOCATOR.md, DevicePrivilegedClaim).
PRIVILEGED_GROUP, PRIVILEGED_KIND = "devmgmtproto.k8s.io", "DevicePrivilegedClaim"
ADMIN_ACCESS_LABEL = "devmgmtproto.k8s.io/admin-access"


def _is(rt: ResourceType, group: str, kind: str) -> bool:
    return rt.builtin and rt.group == group and rt.kind == kind


class Lifecycle:
    def __init__(self, registry: "Registry") -> None:
        self.registry = registry
        self._served: dict[str, list[ResourceType]] = {}  # CRD name → the types it serves
        self._deprecations: dict[tuple[str, str, str], str] = {}  # (group, version, plural) → warning

    # ----------------------------------------------------------- namespaces
    def require_namespace(self, rt: ResourceType, obj: dict) -> None:
        if not rt.namespaced:
            return
        namespace = obj["metadata"]["namespace"]
        stored = self.registry.store.get(NAMESPACES, "", namespace)
        if stored is None:
            raise errors.not_found(NAMESPACES, namespace)
        if b'"phase":"Terminating"' in stored.raw:
            raise errors.forbidden(
                rt.group_resource,
                obj["metadata"].get("name", ""),
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )
        if rt.group == PRIVILEGED_GROUP and rt.kind == PRIVILEGED_KIND:
            labels = stored.labels or {}
            if labels.get(ADMIN_ACCESS_LABEL) != "true":
                raise errors.forbidden(
                    rt.group_resource,
                    obj["metadata"].get("name", ""),
                    f'namespace "{namespace}" does not allow admin access to devices: label it {ADMIN_ACCESS_LABEL}=true',
                )

    def before_delete(self, rt: ResourceType, obj: dict) -> None:
        if _is(rt, "", "Namespace") and obj["metadata"]["name"] in PROTECTED_NAMESPACES:
            raise errors.forbidden(NAMESPACES, obj["metadata"]["name"], "this namespace may not be deleted")

    def defers_delete(self, rt: ResourceType, obj: dict) -> bool:
        return _is(rt, "", "Namespace")

    def on_terminating(self, rt: ResourceType, obj: dict) -> None:
        if _is(rt, "", "Namespace"):
            obj.setdefault("status", {})["phase"] = "Terminating"

    def after_terminating(self, rt: ResourceType, obj: dict) -> None:
        if _is(rt, "", "Namespace"):
            namespace = obj["metadata"]["name"]
            for namespaced in self._namespaced_types():
                for stored in list(self.registry.store.iterate(namespaced.group_resource, namespace)):
                    try:
                        self.registry.delete(namespaced, namespace, stored.name, DeleteOptions())
                    except errors.StatusError as exc:
                        if exc.code != 404:
                            raise
            self._finish_namespace(namespace)

    def _namespaced_types(self) -> list[ResourceType]:
        seen, kinds = set(), []
        for rt in self.registry.types.all():
            if rt.namespaced and rt.group_resource not in seen:
                seen.add(rt.group_resource)
                kinds.append(rt)
        return kinds

    def _finish_namespace(self, namespace: str) -> None:
        """Remove a Terminating namespace once nothing is left in it (the namespace controller)."""
        store = self.registry.store
        current = store.get(NAMESPACES, "", namespace)
        if current is None or b'"phase":"Terminating"' not in current.raw:
            return
        for rt in self._namespaced_types():
            if next(store.iterate(rt.group_resource, namespace), None) is not None:
                return
        obj = current.load()
        if obj["metadata"].get("finalizers"):
            obj.setdefault("spec", {})["finalizers"] = []
            store.update(NAMESPACES, obj)
            return
        obj.setdefault("spec", {})["finalizers"] = []
        store.delete(NAMESPACES, "", namespace, final=obj)

    # ------------------------------------------------------------------ CRDs
    def before_store(self, rt: ResourceType, obj: dict, old: dict | None) -> None:
        if _is(rt, CRD_GROUP, CRD_KIND):
            self._set_crd_status(obj, old)

    def after_store(self, rt: ResourceType, obj: dict, old: dict | None) -> None:
        if _is(rt, CRD_GROUP, CRD_KIND):
            self.serve_crd(obj)

    def after_delete(self, rt: ResourceType, obj: dict) -> None:
        if _is(rt, CRD_GROUP, CRD_KIND):
            self._unserve_crd(obj["metadata"]["name"], drop=True)
        elif rt.namespaced:
            self._finish_namespace(obj["metadata"].get("namespace", ""))

    def deprecation_warning(self, rt: ResourceType) -> str:
        """The Warning every request to a deprecated version of a custom resource gets, or ""."""
        return self._deprecations.get((rt.group, rt.version, rt.plural), "")

    def serve_crd(self, crd: dict) -> None:
        name = crd["metadata"]["name"]
        accepted = _condition(crd, "NamesAccepted") == "True"
        new_types = gvk.from_crd(crd) if accepted else []
        old_types = self._served.get(name, [])
        self._set_deprecations(old_types, new_types, deprecation_warnings(crd) if accepted else {})
        if old_types == new_types:
            return
        types = self.registry.types
        for old in old_types:
            if old not in new_types:
                types.unregister(old)
                if not any(t.group_resource == old.group_resource for t in new_types):
                    self.registry.store.close_watchers(old.group_resource)
        for new in new_types:
            types.register(new)
        self._served[name] = new_types

    def _set_deprecations(self, old_types: list[ResourceType], new_types: list[ResourceType], warnings: dict[str, str]) -> None:
        for rt in old_types:
            self._deprecations.pop((rt.group, rt.version, rt.plural), None)
        for rt in new_types:
            if warnings.get(rt.version):
                self._deprecations[(rt.group, rt.version, rt.plural)] = warnings[rt.version]

    def _unserve_crd(self, name: str, *, drop: bool) -> None:
        for rt in self._served.pop(name, []):
            self._deprecations.pop((rt.group, rt.version, rt.plural), None)
            self.registry.types.unregister(rt)
            if drop:
                self.registry.store.drop_resource(rt.group_resource)
                self.registry.store.close_watchers(rt.group_resource)

    def _set_crd_status(self, crd: dict, old: dict | None) -> None:
        spec, name = crd["spec"], crd["metadata"]["name"]
        names = spec["names"]
        conflict_reason, conflict = self._name_conflict(name, spec)
        now = self.registry.now()
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

    def _name_conflict(self, name: str, spec: dict) -> tuple[str, str]:
        """(reason, message) when another served type of the group already uses one of the names."""
        names, group = spec["names"], spec["group"]
        mine = self._served.get(name, [])
        others = [rt for rt in self.registry.types.kinds_of_group(group) if rt not in mine]
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
