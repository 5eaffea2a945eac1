"""OpenAPI v3, built from the served types' schemas, rebuilt when the set of types changes.

``/openapi/v3`` lists one document per group-version with a ``hash`` that changes with the
document (kubectl re-fetches on a new hash, e.g. after a CRD is applied). Each document has the
resource paths — the PATCH operation carrying ``x-kubernetes-group-version-kind`` and the
``fieldValidation`` parameter, which is what makes kubectl's apply/create/replace validate on the
server — and ``components.schemas`` with every kind (descriptions from the schemas, for
``kubectl explain``) plus ObjectMeta, so every ``$ref`` resolves inside the document.
"""

from __future__ import annotations

import copy
import hashlib

import orjson

from mockapi import errors
from mockapi.gvk import ResourceType
from mockapi.registry.types import TypeRegistry

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_OBJECT_META_SCHEMA = {
    "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Name must be unique within a namespace. Cannot be updated."},
        "generateName": {"type": "string", "description": "An optional prefix used by the server to generate a unique name, if name is not provided."},
        "namespace": {"type": "string", "description": "Namespace defines the space within which each name must be unique."},
        "uid": {"type": "string", "description": "UID is the unique in time and space value for this object. Set by the server."},
        "resourceVersion": {"type": "string", "description": "An opaque value that represents the internal version of this object, for optimistic concurrency and watch."},
        "generation": {"type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state. Set by the server."},
        "creationTimestamp": {"type": "string", "format": "date-time", "description": "When this object was created. Set by the server."},
        "deletionTimestamp": {"type": "string", "format": "date-time", "description": "When this object will be deleted, once its finalizers are gone. Set by the server."},
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64", "description": "Seconds allowed for graceful termination."},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Map of string keys and values that can be used to organize and categorize objects."},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Unstructured key value map stored with a resource."},
        "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge", "description": "Must be empty before the object is deleted from the registry."},
        "ownerReferences": {
            "type": "array",
            "x-kubernetes-patch-merge-key": "uid",
            "x-kubernetes-patch-strategy": "merge",
            "description": "List of objects depended by this object.",
            "items": {
                "type": "object",
                "required": ["apiVersion", "kind", "name", "uid"],
                "properties": {k: {"type": "boolean" if k in ("controller", "blockOwnerDeletion") else "string"} for k in ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")},
            },
        },
        "managedFields": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}, "description": "Field ownership for server-side apply."},
    },
}
_WRITE_PARAMETERS = [
    {"name": name, "in": "query", "schema": {"type": "string"}, "description": description}
    for name, description in (
        ("dryRun", "When present, indicates that modifications should not be persisted. Valid value: All."),
        ("fieldManager", "A name associated with the actor or entity that is making these changes."),
        ("fieldValidation", "How the server handles unknown or duplicate fields: Ignore, Warn or Strict."),
    )
]


def schema_name(rt: ResourceType) -> str:
    """kube's naming: core → io.k8s.api.core.v1.Pod; a group → its reversed DNS name."""
    if not rt.group:
        return f"io.k8s.api.core.{rt.version}.{rt.kind}"
    return ".".join(reversed(rt.group.split("."))) + f".{rt.version}.{rt.kind}"


def group_version_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


class OpenAPI:
    def __init__(self, types: TypeRegistry) -> None:
        self.types = types
        self._generation = -1
        self._documents: dict[str, bytes] = {}
        self._root = b""

    def _refresh(self) -> None:
        if self._generation == self.types.generation:
            return
        documents: dict[str, bytes] = {}
        for group, versions in self.types.groups().items():
            for version in versions:
                kinds = [rt for rt in self.types.all() if rt.group == group and rt.version == version]
                documents[group_version_path(group, version)] = orjson.dumps(_document(kinds), option=orjson.OPT_SORT_KEYS)
        paths = {
            key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={hashlib.sha512(body).hexdigest()[:32].upper()}"}
            for key, body in documents.items()
        }
        self._documents, self._root = documents, orjson.dumps({"paths": paths})
        self._generation = self.types.generation

    def root(self) -> bytes:
        self._refresh()
        return self._root

    def document(self, path: str) -> bytes:
        self._refresh()
        body = self._documents.get(path.strip("/"))
        if body is None:
            raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
        return body


def _document(kinds: list[ResourceType]) -> dict:
    schemas = {OBJECT_META: _OBJECT_META_SCHEMA}
    paths = {}
    for rt in kinds:
        schemas[schema_name(rt)] = _kind_schema(rt)
        paths.update(_paths(rt))
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0-mockapi"}, "paths": paths, "components": {"schemas": schemas}}


def _kind_schema(rt: ResourceType) -> dict:
    schema = copy.deepcopy(rt.schema) if rt.schema else {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    properties = schema.setdefault("properties", {})
    properties["metadata"] = {"allOf": [{"$ref": f"#/components/schemas/{OBJECT_META}"}], "description": "Standard object's metadata."}
    properties.setdefault("apiVersion", {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."})
    properties.setdefault("kind", {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."})
    schema.setdefault("description", f"{rt.kind} ({rt.api_version}).")
    schema["x-kubernetes-group-version-kind"] = [{"group": rt.group, "version": rt.version, "kind": rt.kind}]
    return schema


def _paths(rt: ResourceType) -> dict:
    prefix = "/" + group_version_path(rt.group, rt.version)
    if rt.namespaced:
        prefix += "/namespaces/{namespace}"
    ref = {"$ref": f"#/components/schemas/{schema_name(rt)}"}
    gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    body = {"content": {"application/json": {"schema": ref}}}
    ok = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}
    patch_types = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
    if rt.builtin:
        patch_types.append("application/strategic-merge-patch+json")
    item = {
        "get": {"operationId": f"read{rt.kind}", "responses": ok, "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk},
        "put": {"operationId": f"replace{rt.kind}", "requestBody": body, "parameters": _WRITE_PARAMETERS, "responses": ok, "x-kubernetes-action": "put", "x-kubernetes-group-version-kind": gvk},
        "patch": {
            "operationId": f"patch{rt.kind}",
            "requestBody": {"content": {t: {"schema": {"type": "object"}} for t in patch_types}},
            "parameters": _WRITE_PARAMETERS + [{"name": "force", "in": "query", "schema": {"type": "boolean"}}],
            "responses": ok,
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
        },
        "delete": {"operationId": f"delete{rt.kind}", "responses": ok, "x-kubernetes-action": "delete", "x-kubernetes-group-version-kind": gvk},
        "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
    }
    collection = {
        "get": {"operationId": f"list{rt.kind}", "responses": {"200": {"description": "OK"}}, "x-kubernetes-action": "list", "x-kubernetes-group-version-kind": gvk},
        "post": {"operationId": f"create{rt.kind}", "requestBody": body, "parameters": _WRITE_PARAMETERS, "responses": ok, "x-kubernetes-action": "post", "x-kubernetes-group-version-kind": gvk},
    }
    if rt.namespaced:
        for operation in (item, collection):
            operation["parameters"] = operation.get("parameters", []) + [{"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}}]
    paths = {f"{prefix}/{rt.plural}": collection, f"{prefix}/{rt.plural}/{{name}}": item}
    if rt.has_status:
        paths[f"{prefix}/{rt.plural}/{{name}}/status"] = {k: v for k, v in item.items() if k in ("get", "put", "patch", "parameters")}
    return paths
