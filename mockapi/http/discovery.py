"""API discovery, legacy and aggregated, rebuilt whenever the set of served types changes.

Legacy: ``/api`` (APIVersions), ``/api/v1`` and ``/apis/{g}/{v}`` (APIResourceList), ``/apis``
(APIGroupList), ``/apis/{g}`` (APIGroup) — what the Python ``DynamicClient`` and kubectl's fallback
use. Aggregated (``apidiscovery.k8s.io/v2``, what kubectl 1.32 asks for first): ``/api`` and
``/apis`` when the Accept header asks for ``as=APIGroupDiscoveryList``; the reply's Content-Type
must carry those parameters, or kubectl reads it as legacy discovery and finds nothing.
"""

from __future__ import annotations

import orjson

from mockapi import errors
from mockapi.gvk import ResourceType
from mockapi.registry.types import TypeRegistry

AGGREGATED_CONTENT_TYPE = b"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUBRESOURCE_VERBS = ["get", "patch", "update"]


def wants_aggregated(accept: str) -> bool:
    for part in accept.split(","):
        params = {p.strip() for p in part.split(";")[1:]}
        if "as=APIGroupDiscoveryList" in params and "g=apidiscovery.k8s.io" in params and "v=v2" in params:
            return True
        if part.strip().split(";")[0] in ("application/json", "*/*"):
            return False
    return False


class Discovery:
    def __init__(self, types: TypeRegistry, *, server_address: str = "127.0.0.1:55441") -> None:
        self.types = types
        self.server_address = server_address
        self._cache: dict[tuple, bytes] = {}
        self._generation = -1

    def _cached(self, key: tuple, build) -> bytes:
        if self._generation != self.types.generation:
            self._cache.clear()
            self._generation = self.types.generation
        body = self._cache.get(key)
        if body is None:
            body = self._cache[key] = orjson.dumps(build())
        return body

    # ------------------------------------------------------------- legacy
    def api_versions(self) -> bytes:
        return self._cached(
            ("api",),
            lambda: {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.server_address}],
            },
        )

    def group_list(self) -> bytes:
        return self._cached(("apis",), lambda: {"kind": "APIGroupList", "apiVersion": "v1", "groups": [self._group(g, v) for g, v in self.types.groups().items() if g]})

    def group(self, group: str) -> bytes:
        versions = self.types.groups().get(group)
        if not group or not versions:
            raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
        return self._cached(("group", group), lambda: {"kind": "APIGroup", "apiVersion": "v1", **self._group(group, versions)})

    def resource_list(self, group: str, version: str) -> bytes:
        kinds = [rt for rt in self.types.all() if rt.group == group and rt.version == version]
        if not kinds:
            raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
        group_version = f"{group}/{version}" if group else version
        return self._cached(
            ("resources", group, version),
            lambda: {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": [r for rt in kinds for r in _legacy_resources(rt)]},
        )

    @staticmethod
    def _group(group: str, versions: list[str]) -> dict:
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in _by_priority(versions)]
        return {"name": group, "versions": entries, "preferredVersion": entries[0]}

    # --------------------------------------------------------- aggregated
    def aggregated(self, *, core: bool) -> bytes:
        return self._cached(("aggregated", core), lambda: self._aggregated(core))

    def _aggregated(self, core: bool) -> dict:
        items = []
        for group, versions in self.types.groups().items():
            if (group == "") != core:
                continue
            items.append(
                {
                    "metadata": {"name": group, "creationTimestamp": None},
                    "versions": [
                        {
                            "version": v,
                            "freshness": "Current",
                            "resources": [_aggregated_resource(rt) for rt in self.types.all() if rt.group == group and rt.version == v],
                        }
                        for v in _by_priority(versions)
                    ],
                }
            )
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def _by_priority(versions: list[str]) -> list[str]:
    """Kubernetes version priority: GA > beta > alpha, then higher numbers first."""
    import re

    def key(v: str):
        m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
        if not m:
            return (3, 0, 0, v)
        level = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
        return (level, -int(m.group(1)), -int(m.group(3) or 0), v)

    return sorted(versions, key=key)


# Subresources of core kinds beyond the CRD-style status: (plural) → [(subresource, kind, verbs)].
_CORE_EXTRA = {"pods": [("binding", "Binding", ["create"])]}


# Groups whose every resource is a create-only review (answered, never stored): kube lists only "create".
_CREATE_ONLY_GROUPS = frozenset({"authorization.k8s.io", "authentication.k8s.io"})
_CREATE_ONLY = ["create"]


def _verbs(rt: ResourceType) -> list[str]:
    return _CREATE_ONLY if rt.builtin and rt.group in _CREATE_ONLY_GROUPS else VERBS


def _extra(rt: ResourceType) -> list[tuple[str, str, list[str]]]:
    return _CORE_EXTRA.get(rt.plural, []) if rt.builtin and not rt.group else []


def _legacy_resources(rt: ResourceType) -> list[dict]:
    main = {"name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced, "kind": rt.kind, "verbs": _verbs(rt)}
    if rt.short_names:
        main["shortNames"] = list(rt.short_names)
    if rt.categories:
        main["categories"] = list(rt.categories)
    entries = [main]
    for sub in sorted(rt.subresources):
        if sub == "scale":
            if rt.builtin:
                entries.append({"name": f"{rt.plural}/scale", "singularName": "", "namespaced": rt.namespaced, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": SUBRESOURCE_VERBS})
            continue
        entries.append({"name": f"{rt.plural}/{sub}", "singularName": "", "namespaced": rt.namespaced, "kind": rt.kind, "verbs": SUBRESOURCE_VERBS})
    for sub, kind, verbs in _extra(rt):
        entries.append({"name": f"{rt.plural}/{sub}", "singularName": "", "namespaced": rt.namespaced, "kind": kind, "verbs": verbs})
    entries.sort(key=lambda e: e["name"])
    return entries


def _aggregated_resource(rt: ResourceType) -> dict:
    kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    resource = {
        "resource": rt.plural,
        "responseKind": kind,
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": _verbs(rt),
    }
    if rt.short_names:
        resource["shortNames"] = list(rt.short_names)
    if rt.categories:
        resource["categories"] = list(rt.categories)
    subresources = [{"subresource": s, "responseKind": kind, "verbs": SUBRESOURCE_VERBS} for s in sorted(rt.subresources) if s != "scale"]
    if "scale" in rt.subresources and rt.builtin:  # CRDs' scale is not served
        subresources.append({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": SUBRESOURCE_VERBS})
    subresources += [{"subresource": s, "responseKind": {"group": "", "version": "", "kind": k}, "verbs": v} for s, k, v in _extra(rt)]
    if subresources:
        resource["subresources"] = sorted(subresources, key=lambda e: e["subresource"])
    return resource
