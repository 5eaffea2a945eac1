"""CustomResourceDefinition (apiextensions.k8s.io/v1) checks, as kube-apiserver makes them on create.

Anchors: apiextensions-apiserver ``pkg/apis/apiextensions/validation/validation.go``
(ValidateCustomResourceDefinition and the OpenAPI schema rules), ``pkg/apiserver/schema/validation.go``
and ``complete.go`` (ValidateStructural), ``pkg/apiserver/schema/defaulting/validation.go``
(ValidateDefaults), ``pkg/apihelpers`` (API approval of protected groups) and
``pkg/apis/apiextensions/v1/conversion.go``: when every version carries the same schema,
subresources, printer columns or selectable fields, kube validates them once at the top level, so
errors then read ``spec.validation.openAPIV3Schema...`` instead of ``spec.versions[0].schema...``.

Not checked: CEL rules (x-kubernetes-validations), conversion webhooks, status, the root-schema
restrictions that apply with a status subresource, and Go's ``%#v`` rendering of whole structs
(``spec.versions`` values are rendered as JSON). Garbage never raises: a field of the wrong JSON type
is reported as kube-openapi reports one and skipped.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any
from urllib.parse import urlsplit

from mockapi import errors
from mockapi.schema import formats, meta, prune, structural, validate

_SCOPES = ("Cluster", "Namespaced")
_OPENAPI_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_COLUMN_TYPES = "boolean,date,integer,number,string"
_COLUMN_FORMATS = "byte,date,date-time,double,float,int32,int64,password"
_TYPE_META_KEYS = ("metadata", "kind", "apiVersion")
_MAX_SELECTABLE_FIELDS = 8
_APPROVAL = "api-approved.kubernetes.io"
_APPROVAL_PR = "see https://github.com/kubernetes/enhancements/pull/1111"
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
_ROOT, _ITEM, _FIELD = "root", "item", "field"
_TYPE_REQUIRED = {
    _ROOT: "must not be empty at the root",
    _ITEM: "must not be empty for specified array items",
    _FIELD: "must not be empty for specified object fields",
}
_KINDS = {"object": dict, "array": list, "string": str, "boolean": bool}


def validate_crd(crd: Any) -> list[errors.FieldError]:
    """Every failure kube-apiserver would report creating this CRD, for the rules listed above."""
    if not isinstance(crd, dict):
        return [meta.type_error("", "object", crd)]
    errs: list[errors.FieldError] = []
    spec = _get(crd, "spec", "object", "spec", errs) or {}
    names = _Names.of(spec, errs)
    metadata = crd.get("metadata")
    errs[:0] = _metadata_errors(metadata, names.plural, spec.get("group"))
    errs.extend(_spec_errors(spec, names))
    errs.extend(_api_approval_errors(metadata, spec.get("group")))
    if spec.get("preserveUnknownFields") is True:
        msg = "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        errs.append(_invalid("spec.preserveUnknownFields", True, msg))
    return errs


# --- small helpers -----------------------------------------------------------------------------


def _invalid(path: str, value: Any, detail: str) -> errors.FieldError:
    return errors.FieldError("invalid", path, detail, value="null" if value is None else value)


def _required(path: str, detail: str = "") -> errors.FieldError:
    return errors.FieldError("required", path, detail)


def _forbidden(path: str, detail: str) -> errors.FieldError:
    return errors.FieldError("forbidden", path, detail)


def _not_supported(path: str, value: Any, supported: tuple[str, ...]) -> errors.FieldError:
    detail = "supported values: " + ", ".join(f'"{s}"' for s in supported)
    return errors.FieldError("not_supported", path, detail, value=value)


def _get(obj: dict, key: str, kind: str, path: str, errs: list) -> Any:
    """``obj[key]`` if it has the JSON type ``kind``; None when absent or (reported) of another type."""
    value = obj.get(key)
    if value is None or isinstance(value, _KINDS[kind]):
        return value
    errs.append(meta.type_error(path, kind, value))
    return None


def _str(schema: dict, key: str) -> str:
    value = schema.get(key)
    return value if isinstance(value, str) else ""


def _props(schema: dict) -> dict:
    props = schema.get("properties")
    return {k: v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}


def _schemas(schema: dict, key: str) -> list:
    value = schema.get(key)
    return value if isinstance(value, list) else []


@dataclasses.dataclass
class _Names:
    """spec.names after v1 defaulting (singular = lowercase kind, listKind = kind + "List")."""

    plural: str
    singular: str
    kind: str
    list_kind: str
    short_names: list
    categories: list

    @classmethod
    def of(cls, spec: dict, errs: list) -> _Names:
        names = _get(spec, "names", "object", "spec.names", errs) or {}
        fields = {key: _get(names, key, "string", f"spec.names.{key}", errs) or "" for key in
                  ("plural", "singular", "kind", "listKind")}  # fmt: skip
        lists = {key: _get(names, key, "array", f"spec.names.{key}", errs) or [] for key in
                 ("shortNames", "categories")}  # fmt: skip
        kind = fields["kind"]
        singular = fields["singular"] or kind.lower()
        list_kind = fields["listKind"] or (kind + "List" if kind else "")
        return cls(fields["plural"], singular, kind, list_kind, lists["shortNames"], lists["categories"])


# --- metadata ----------------------------------------------------------------------------------


def _metadata_errors(metadata: Any, plural: str, group: Any) -> list[errors.FieldError]:
    """ValidateObjectMeta with the CRD name rule: a DNS subdomain equal to <plural>.<group>."""
    errs = meta.validate_object_meta(metadata, namespaced=False)
    if not isinstance(metadata, dict):
        return errs
    required = f"{plural}.{group if isinstance(group, str) else ''}"
    msg = 'must be spec.names.plural+"."+spec.group'
    for key in ("generateName", "name"):
        value = metadata.get(key)
        if isinstance(value, str) and value and value != required:
            path = f"metadata.{key}"
            at = max((i + 1 for i, e in enumerate(errs) if e.field == path), default=_after(errs, key))
            errs.insert(at, _invalid(path, value, msg))
    return errs


def _after(errs: list, key: str) -> int:
    """Where name errors go when the name rule found nothing: after generateName's, before the rest."""
    if key == "generateName":
        return 0
    return sum(1 for e in errs if e.field == "metadata.generateName")


def _api_approval_errors(metadata: Any, group: Any) -> list[errors.FieldError]:
    """Groups k8s.io, *.k8s.io, kubernetes.io and *.kubernetes.io need the approval annotation."""
    if not isinstance(group, str) or not re.fullmatch(r"(.+\.)?(k8s\.io|kubernetes\.io)", group):
        return []
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    value = annotations.get(_APPROVAL) if isinstance(annotations, dict) else None
    path = f"metadata.annotations[{_APPROVAL}]"
    if not value:
        return [_required(path, f'protected groups must have approval annotation "{_APPROVAL}", {_APPROVAL_PR}')]
    if isinstance(value, str) and (value.startswith("unapproved") or _is_url(value)):
        return []
    msg = (
        f'protected groups must have approval annotation "{_APPROVAL}" with either a URL or a reason '
        f'starting with "unapproved", {_APPROVAL_PR}'
    )
    return [_invalid(path, value, msg)]


def _is_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(parts.scheme and parts.netloc)


# --- spec --------------------------------------------------------------------------------------


def _spec_errors(spec: dict, names: _Names) -> list[errors.FieldError]:
    errs: list[errors.FieldError] = []
    errs.extend(_group_errors(spec.get("group")))
    errs.extend(_scope_errors(spec.get("scope")))
    versions = _versions(spec, errs)
    hoisted = _hoisted(versions)
    errs.extend(_schema_presence_errors(versions, hoisted))
    if spec.get("preserveUnknownFields") is True and any(_has_default(v.get("schema")) for v in versions):
        msg = "must be false in order to use defaults in the schema"
        errs.append(_invalid("spec.preserveUnknownFields", True, msg))
    for i, version in enumerate(versions):
        errs.extend(_version_errors(version, f"spec.versions[{i}]", hoisted))
    errs.extend(_version_set_errors(versions))
    errs.extend(_names_errors(names))
    errs.extend(_per_version_errors({k: v for k, v in hoisted.items() if v is not _NOT_HOISTED}, "spec", top=True))
    return errs


def _group_errors(group: Any) -> list[errors.FieldError]:
    if group is None or group == "":
        return [_required("spec.group")]
    if not isinstance(group, str):
        return [meta.type_error("spec.group", "string", group)]
    msgs = meta.dns1123_subdomain_errors(group)
    if msgs:
        return [_invalid("spec.group", group, ",".join(msgs))]
    if len(group.split(".")) < 2:
        return [_invalid("spec.group", group, "should be a domain with at least one dot")]
    return []


def _scope_errors(scope: Any) -> list[errors.FieldError]:
    if scope is None or scope == "":
        return [_required("spec.scope")]
    if scope not in _SCOPES:
        return [_not_supported("spec.scope", scope, _SCOPES)]
    return []


def _versions(spec: dict, errs: list) -> list[dict]:
    versions = _get(spec, "versions", "array", "spec.versions", errs) or []
    good = []
    for i, version in enumerate(versions):
        if isinstance(version, dict):
            good.append(version)
        else:
            errs.append(meta.type_error(f"spec.versions[{i}]", "object", version))
    return good


_NOT_HOISTED = object()
_PER_VERSION = ("schema", "subresources", "additionalPrinterColumns", "selectableFields")


def _hoisted(versions: list[dict]) -> dict[str, Any]:
    """Per-version fields kube moves to the top level because every version has the same value."""
    hoisted = {}
    for key in _PER_VERSION:
        first = versions[0].get(key) if versions else None
        same = bool(versions) and all(v.get(key) == first for v in versions)
        hoisted[key] = first if same else _NOT_HOISTED
    if hoisted["schema"] is _NOT_HOISTED:
        hoisted["selectableFields"] = _NOT_HOISTED
    return hoisted


def _schema_presence_errors(versions: list[dict], hoisted: dict) -> list[errors.FieldError]:
    top = hoisted["schema"]
    if isinstance(top, dict) and top.get("openAPIV3Schema") is not None:
        return []
    errs = []
    for i, version in enumerate(versions):
        schema = None if top is not _NOT_HOISTED else version.get("schema")
        if not isinstance(schema, dict) or schema.get("openAPIV3Schema") is None:
            errs.append(_required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"))
    return errs


def _version_errors(version: dict, path: str, hoisted: dict) -> list[errors.FieldError]:
    errs: list[errors.FieldError] = []
    name = _get(version, "name", "string", f"{path}.name", errs) or ""
    msgs = meta.dns1035_label_errors(name)
    if msgs:
        errs.append(_invalid(f"{path}.name", name, ",".join(msgs)))
    errs.extend(_deprecation_errors(version, path))
    # a hoisted field is gone from the version (so per-version selectableFields next to a
    # hoisted schema find no schema, as in kube)
    own = {key: version.get(key) for key in _PER_VERSION if hoisted[key] is _NOT_HOISTED}
    errs.extend(_per_version_errors(own, path, top=False))
    return errs


def _deprecation_errors(version: dict, path: str) -> list[errors.FieldError]:
    warning = version.get("deprecationWarning")
    if warning is None:
        return []
    if not isinstance(warning, str):
        return [meta.type_error(f"{path}.deprecationWarning", "string", warning)]
    if version.get("deprecated") is not True:
        return [_invalid(f"{path}.deprecationWarning", warning, "can only be set for deprecated versions")]
    errs = []
    if len(warning.encode()) > 256:
        errs.append(_invalid(f"{path}.deprecationWarning", warning, "must be <= 256 characters long"))
    if not warning:
        errs.append(_invalid(f"{path}.deprecationWarning", warning, "must not be an empty string"))
    return errs


def _per_version_errors(fields: dict, path: str, *, top: bool) -> list[errors.FieldError]:
    """Schema, subresources, printer columns and selectable fields of one version, or of all
    versions at once at the top level (``spec.validation``, ``spec.subresources``, ...)."""
    errs: list[errors.FieldError] = []
    schema_path = f"{path}.validation" if top else f"{path}.schema"
    if "schema" in fields:
        errs.extend(_validation_errors(fields["schema"], schema_path))
    if "subresources" in fields:
        errs.extend(_subresources_errors(fields["subresources"], f"{path}.subresources"))
    columns = fields.get("additionalPrinterColumns")
    if isinstance(columns, list):
        for j, column in enumerate(columns):
            errs.extend(_column_errors(column, f"{path}.additionalPrinterColumns[{j}]"))
    elif columns is not None:
        errs.append(meta.type_error(f"{path}.additionalPrinterColumns", "array", columns))
    selectable = fields.get("selectableFields")
    if isinstance(selectable, list) and selectable:
        errs.extend(_selectable_errors(selectable, fields.get("schema"), f"{path}.selectableFields", top=top))
    return errs


def _version_set_errors(versions: list[dict]) -> list[errors.FieldError]:
    errs = []
    names = [v.get("name") for v in versions]
    if len(set(map(repr, names))) != len(names):
        errs.append(_invalid("spec.versions", versions, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage") is True) != 1:
        errs.append(_invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    return errs


def _names_errors(names: _Names) -> list[errors.FieldError]:
    errs = [_required(f"spec.names.{key}") for key, value in
            (("plural", names.plural), ("singular", names.singular), ("kind", names.kind),
             ("listKind", names.list_kind))
            if not value]  # fmt: skip
    for key, value in (("plural", names.plural), ("singular", names.singular)):
        msgs = meta.dns1035_label_errors(value) if value else []
        if msgs:
            errs.append(_invalid(f"spec.names.{key}", value, ",".join(msgs)))
    for key, value in (("kind", names.kind), ("listKind", names.list_kind)):
        msgs = meta.dns1035_label_errors(value.lower()) if value else []
        if msgs:
            msg = "may have mixed case, but should otherwise match: " + ",".join(msgs)
            errs.append(_invalid(f"spec.names.{key}", value, msg))
    errs.extend(_label_list_errors(names.short_names, "spec.names.shortNames"))
    if names.kind and names.kind == names.list_kind:
        errs.append(_invalid("spec.names.listKind", names.list_kind, "kind and listKind may not be the same"))
    errs.extend(_label_list_errors(names.categories, "spec.names.categories"))
    return errs


def _label_list_errors(values: list, path: str) -> list[errors.FieldError]:
    errs = []
    for i, value in enumerate(values):
        if not isinstance(value, str):
            errs.append(meta.type_error(f"{path}[{i}]", "string", value))
            continue
        msgs = meta.dns1035_label_errors(value)
        if msgs:
            errs.append(_invalid(f"{path}[{i}]", value, ",".join(msgs)))
    return errs


# --- subresources, printer columns, selectable fields -----------------------------------------


def _subresources_errors(subresources: Any, path: str) -> list[errors.FieldError]:
    if subresources is None:
        return []
    if not isinstance(subresources, dict):
        return [meta.type_error(path, "object", subresources)]
    known = ("scale", "status")
    errs = [_not_supported(path, str(key), known) for key in subresources if key not in known]
    scale = subresources.get("scale")
    if isinstance(scale, dict):
        errs.extend(_replicas_path_errors(scale, "specReplicasPath", ".spec.", f"{path}.scale.specReplicasPath"))
        errs.extend(_replicas_path_errors(scale, "statusReplicasPath", ".status.", f"{path}.scale.statusReplicasPath"))
        selector = scale.get("labelSelectorPath")
        if isinstance(selector, str) and selector:
            at = f"{path}.scale.labelSelectorPath"
            simple = _simple_json_path_errors(selector, at)
            if simple:
                errs.extend(simple)
            elif not selector.startswith((".spec.", ".status.")):
                errs.append(_invalid(at, selector, "should be a json path under either .spec or .status"))
    elif scale is not None:
        errs.append(meta.type_error(f"{path}.scale", "object", scale))
    return errs


def _replicas_path_errors(scale: dict, key: str, prefix: str, path: str) -> list[errors.FieldError]:
    value = _str(scale, key)
    if not value:
        return [_required(path)]
    simple = _simple_json_path_errors(value, path)
    if simple:
        return simple
    if not value.startswith(prefix):
        return [_invalid(path, value, f"should be a json path under {prefix.rstrip('.')}")]
    return []


def _simple_json_path_errors(value: str, path: str) -> list[errors.FieldError]:
    if not value:
        return [_invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [_invalid(path, value, "must be a simple json path starting with .")]
    return []


def _column_errors(column: Any, path: str) -> list[errors.FieldError]:
    if not isinstance(column, dict):
        return [meta.type_error(path, "object", column)]
    errs = []
    if not _str(column, "name"):
        errs.append(_required(f"{path}.name"))
    kind = _str(column, "type")
    if not kind:
        errs.append(_required(f"{path}.type", f"must be one of {_COLUMN_TYPES}"))
    elif kind not in _COLUMN_TYPES.split(","):
        errs.append(_invalid(f"{path}.type", kind, f"must be one of {_COLUMN_TYPES}"))
    fmt = _str(column, "format")
    if fmt and fmt not in _COLUMN_FORMATS.split(","):
        errs.append(_invalid(f"{path}.format", fmt, f"must be one of {_COLUMN_FORMATS}"))
    json_path = _str(column, "jsonPath")
    if not json_path:
        errs.append(_required(f"{path}.JSONPath"))
    else:
        errs.extend(_simple_json_path_errors(json_path, f"{path}.JSONPath"))
    return errs


def _selectable_errors(fields: list, validation: Any, path: str, *, top: bool) -> list[errors.FieldError]:
    schema = validation.get("openAPIV3Schema") if isinstance(validation, dict) else None
    if not isinstance(schema, dict):
        where = "validations.schema is included" if top else "version.schema.openAPIV3Schema is not included"
        return [_invalid(path, "", f"selectableFields may only be set when {where}")]
    errs: list[errors.FieldError] = []
    unique: set[str] = set()
    for i, entry in enumerate(fields):
        at = f"{path}[{i}].jsonPath"
        json_path = _str(entry, "jsonPath") if isinstance(entry, dict) else ""
        if not json_path:
            errs.append(_required(at))
            continue
        resolved, target, problem = _resolve_field_path(json_path, schema)
        if problem:
            errs.append(_invalid(at, json_path, f"is an invalid path: {problem}"))
            continue
        if resolved.split(".")[0].split("[")[0] == "metadata":
            errs.append(_invalid(at, json_path, "must not point to fields in metadata"))
        if _str(target, "type") not in ("string", "boolean", "integer"):
            msg = (
                "must point to a field of type string, boolean or integer. "
                "Enum string fields and strings with formats are allowed."
            )
            errs.append(_invalid(at, json_path, msg))
        if resolved in unique:
            errs.append(errors.FieldError("duplicate", at, value=json_path))
        unique.add(resolved)
    if len(unique) > _MAX_SELECTABLE_FIELDS:
        count = len(unique)
        errs.append(errors.FieldError("too_many", path, f"{count}: must have at most {_MAX_SELECTABLE_FIELDS} items"))
    return errs


_FIELD_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]")


def _resolve_field_path(json_path: str, schema: dict) -> tuple[str, dict, str]:
    """cel.ValidFieldPath without array notation: ``.a.b`` and ``.labels['key']`` through the schema."""
    resolved, position, node = "", 0, schema
    while position < len(json_path):
        token = _FIELD_PATH_TOKEN.match(json_path, position)
        if token is None:
            return "", {}, f"expected [ or . but got: {json_path[position]}"
        position = token.end()
        if token.group(1) is not None:
            node = _props(node).get(token.group(1))
            resolved = f"{resolved}.{token.group(1)}" if resolved else token.group(1)
        else:
            additional = node.get("additionalProperties")
            node = additional if isinstance(additional, dict) else None
            resolved = f"{resolved}[{token.group(2)}]"
        if node is None:
            return "", {}, "does not refer to a valid field"
    return resolved, node, ""


# --- the openAPIV3Schema -----------------------------------------------------------------------


def _validation_errors(validation: Any, path: str) -> list[errors.FieldError]:
    """validateCustomResourceDefinitionValidation for ``<path>.openAPIV3Schema``."""
    if validation is None:
        return []
    if not isinstance(validation, dict):
        return [meta.type_error(path, "object", validation)]
    schema = validation.get("openAPIV3Schema")
    base = f"{path}.openAPIV3Schema"
    if schema is None:
        return []
    if not isinstance(schema, dict):
        return [meta.type_error(base, "object", schema)]
    errs: list[errors.FieldError] = []
    if schema.get("nullable") is True:
        errs.append(_forbidden(f"{base}.nullable", "nullable cannot be true at the root"))
    try:
        structural_errs = _structural_errors(schema, base)
        errs.extend(structural_errs or _default_errors(schema, base))
        _openapi_errors(schema, base, _Context(), True, errs)
    except RecursionError:
        errs.append(_invalid(base, "", "schema is nested too deeply"))
    return errs


def _has_default(validation: Any) -> bool:
    schema = validation.get("openAPIV3Schema") if isinstance(validation, dict) else None
    return _any_node(schema, lambda s: s.get("default") is not None)


def _any_node(schema: Any, predicate) -> bool:
    if not isinstance(schema, dict):
        return False
    if predicate(schema):
        return True
    subs = [*_props(schema).values(), schema.get("items"), schema.get("additionalProperties"), schema.get("not")]
    subs += _schemas(schema, "allOf") + _schemas(schema, "anyOf") + _schemas(schema, "oneOf")
    return any(_any_node(sub, predicate) for sub in subs)


# ValidateStructural: invariants everywhere, completeness at the root, sorted like kube sorts them.


def _structural_errors(schema: dict, path: str) -> list[errors.FieldError]:
    errs: list[errors.FieldError] = []
    _invariants(schema, _ROOT, path, errs)
    _completeness(schema, schema, path, path, errs)
    return sorted(errs, key=str)


def _invariants(s: Any, level: str, path: str, errs: list) -> None:
    if not isinstance(s, dict):
        return
    items = s.get("items")
    if _str(s, "type") == "array" and items is None:
        errs.append(_required(f"{path}.items", "must be specified"))
    if isinstance(items, dict):
        _invariants(items, _ITEM, f"{path}.items", errs)
    for key, prop in _props(s).items():
        _invariants(prop, _FIELD, f"{path}.properties[{key}]", errs)
    additional = s.get("additionalProperties")
    if additional is not None:
        if level == _ROOT:
            errs.append(_forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(additional, dict):
            _invariants(additional, _FIELD, f"{path}.additionalProperties", errs)
    _extension_rules(s, path, errs)
    any_of = _schemas(s, "anyOf")
    all_of = _schemas(s, "allOf")
    skip_any_of = any_of == _INT_OR_STRING_ANY_OF
    skip_first = bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF
    _value_validation(s, skip_any_of, skip_first, level, path, errs)
    _type_rules(s, level, path, errs)
    _metadata_rules(s, level, path, errs)


def _extension_rules(s: dict, path: str, errs: list) -> None:
    if s.get("x-kubernetes-int-or-string") is True:
        for key in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"):
            if s.get(key) is True:
                errs.append(_invalid(f"{path}.{key}", True, "must be false if x-kubernetes-int-or-string is true"))


def _type_rules(s: dict, level: str, path: str, errs: list) -> None:
    kind, embedded = _str(s, "type"), s.get("x-kubernetes-embedded-resource") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    if embedded and kind != "object":
        msg = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(_invalid(f"{path}.type", kind, msg) if kind else _required(f"{path}.type", msg))
    elif not kind and s.get("x-kubernetes-int-or-string") is not True and not preserve:
        errs.append(_required(f"{path}.type", _TYPE_REQUIRED[level]))
    if embedded and s.get("additionalProperties") is not None:
        msg = "must not be used if x-kubernetes-embedded-resource is set"
        errs.append(_forbidden(f"{path}.additionalProperties", msg))
    if level == _ROOT and kind and kind != "object":
        errs.append(_invalid(f"{path}.type", kind, "must be object at the root"))
    if embedded and not preserve and not _props(s):
        msg = "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
        errs.append(_required(f"{path}.properties", msg))


def _metadata_rules(s: dict, level: str, path: str, errs: list) -> None:
    props = _props(s)
    if level == _ROOT or s.get("x-kubernetes-embedded-resource") is True:
        for key, want, msg in (("kind", "string", "must be string"), ("apiVersion", "string", "must be string"),
                               ("metadata", "object", "must be object")):  # fmt: skip
            if key in props and _str(props[key], "type") != want:
                errs.append(_invalid(f"{path}.properties[{key}].type", _str(props[key], "type"), msg))
    if level == _ROOT and "metadata" in props and not _metadata_restricts_names_only(props["metadata"]):
        msg = "must not specify anything other than name and generateName, but metadata is implicitly specified"
        errs.append(_forbidden(f"{path}.properties[metadata]", msg))


def _metadata_restricts_names_only(metadata: dict) -> bool:
    rest = {k: v for k, v in metadata.items() if k not in ("type", "default") and v not in (None, False, "", [], {})}
    props = rest.pop("properties", None)
    if props is not None and not (isinstance(props, dict) and set(props) <= {"name", "generateName"}):
        return False
    return not rest


def _value_validation(v: dict, skip_any_of: bool, skip_first_all_of: bool, level: str, path: str, errs: list) -> None:
    if not skip_any_of:
        for i, sub in enumerate(_schemas(v, "anyOf")):
            _nested(sub, False, level, f"{path}.anyOf[{i}]", errs)
    for i, sub in enumerate(_schemas(v, "allOf")):
        _nested(sub, skip_first_all_of and i == 0, level, f"{path}.allOf[{i}]", errs)
    for i, sub in enumerate(_schemas(v, "oneOf")):
        _nested(sub, False, level, f"{path}.oneOf[{i}]", errs)
    if isinstance(v.get("not"), dict):
        _nested(v["not"], False, level, f"{path}.not", errs)
    pattern = v.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            formats.compile_pattern(pattern)
        except formats.PatternError as exc:
            errs.append(_invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: error parsing regexp: {exc}"))


_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
)


def _nested(v: Any, skip_any_of: bool, level: str, path: str, errs: list) -> None:
    """A schema under allOf/anyOf/oneOf/not may only validate values, never shape them."""
    if not isinstance(v, dict):
        return
    _value_validation(v, skip_any_of, False, level, path, errs)
    if isinstance(v.get("items"), dict):
        _nested(v["items"], False, level, f"{path}.items", errs)
    for key, prop in _props(v).items():
        _nested(prop, False, _FIELD, f"{path}.properties[{key}]", errs)
    for key, msg in _NESTED_FORBIDDEN:
        value = v.get(key)
        if value is not None if key == "default" else value not in (None, False, "", []):
            errs.append(_forbidden(f"{path}.{key}", msg))
    if "metadata" in _props(v):
        errs.append(_forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))


def _completeness(v: dict, s: Any, s_path: str, v_path: str, errs: list) -> None:
    """Every field a value validation talks about must be specified in the structural part too."""
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(_schemas(v, key)):
            _nested_completeness(sub, s, s_path, f"{v_path}.{key}[{i}]", errs)
    if isinstance(v.get("not"), dict):
        _nested_completeness(v["not"], s, s_path, f"{v_path}.not", errs)


def _nested_completeness(v: Any, s: Any, s_path: str, v_path: str, errs: list) -> None:
    if not isinstance(v, dict):
        return
    if not isinstance(s, dict):
        errs.append(_required(s_path, f"because it is defined in {v_path}"))
        return
    _completeness(v, s, s_path, v_path, errs)
    if isinstance(v.get("items"), dict):
        _nested_completeness(v["items"], s.get("items"), f"{s_path}.items", f"{v_path}.items", errs)
    s_props = _props(s)
    for key, sub in _props(v).items():
        if key not in s_props:
            msg = f"because it is defined in {v_path}.properties[{key}]"
            errs.append(_required(f"{s_path}.properties[{key}]", msg))
        else:
            _nested_completeness(sub, s_props[key], f"{s_path}.properties[{key}]", f"{v_path}.properties[{key}]", errs)


# ValidateDefaults: each default is pruned already and valid against its own schema.


def _default_errors(schema: dict, path: str) -> list[errors.FieldError]:
    errs: list[errors.FieldError] = []
    _walk_defaults(schema, path, errs, inside_meta=False, resource=True)
    return errs


def _walk_defaults(s: Any, path: str, errs: list, *, inside_meta: bool, resource: bool) -> None:
    if not isinstance(s, dict):
        return
    embedded = resource or s.get("x-kubernetes-embedded-resource") is True
    if embedded:
        inside_meta = False
    default = s.get("default")
    if default is not None and not inside_meta:
        errs.extend(_one_default_errors(s, default, f"{path}.default"))
    if isinstance(s.get("items"), dict):
        _walk_defaults(s["items"], f"{path}.items", errs, inside_meta=inside_meta, resource=False)
    for key, prop in _props(s).items():
        meta_field = inside_meta or (embedded and key in _TYPE_META_KEYS)
        _walk_defaults(prop, f"{path}.properties[{key}]", errs, inside_meta=meta_field, resource=False)


def _one_default_errors(s: dict, default: Any, path: str) -> list[errors.FieldError]:
    errs = []
    pruned = prune.copy_json(default)
    structural.prune_value(s, pruned)
    if validate.canonical(pruned) != validate.canonical(default):
        errs.append(_invalid(path, default, "must not have unknown fields"))
    for err in structural.validate_value(s, default):
        errs.append(dataclasses.replace(err, field=f"{path}.{err.field}" if err.field else path))
    return errs


# The OpenAPI rules of ValidateCustomResourceDefinitionOpenAPISchema.


@dataclasses.dataclass(frozen=True)
class _Context:
    allow_defaults: bool = True
    disallow_reason: str = ""
    inside_meta: bool = False

    def without_defaults(self, reason: str) -> _Context:
        return dataclasses.replace(self, allow_defaults=False, disallow_reason=reason)


def _openapi_errors(s: Any, path: str, ctx: _Context, is_root: bool, errs: list) -> None:
    if not isinstance(s, dict):
        return
    _unsupported_keywords(s, path, ctx, errs)
    if s.get("uniqueItems") is True:
        msg = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        errs.append(_forbidden(f"{path}.uniqueItems", msg))
    _openapi_children(s, path, ctx, is_root, errs)
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(_invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    _map_type_rules(s, path, errs)
    _list_type_rules(s, path, errs)


def _unsupported_keywords(s: dict, path: str, ctx: _Context, errs: list) -> None:
    kind = _str(s, "type")
    if kind and kind not in _OPENAPI_TYPES:
        errs.append(_not_supported(f"{path}.type", kind, _OPENAPI_TYPES))
    if s.get("default") is not None and not ctx.allow_defaults:
        reason = f" {ctx.disallow_reason}" if ctx.disallow_reason else ""
        errs.append(_forbidden(f"{path}.default", f"must not be set{reason}"))
    for key, msg in (("id", "id is not supported"), ("additionalItems", "additionalItems is not supported"),
                     ("patternProperties", "patternProperties is not supported"),
                     ("definitions", "definitions is not supported"), ("dependencies", "dependencies is not supported"),
                     ("$ref", "$ref is not supported")):  # fmt: skip
        if s.get(key) not in (None, "", {}):
            errs.append(_forbidden(f"{path}.{key}", msg))
    if kind == "null":
        errs.append(_forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list) and s["items"]:
        errs.append(_forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if ctx.inside_meta and s.get("x-kubernetes-embedded-resource") is True:
        errs.append(_forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))


def _openapi_children(s: dict, path: str, ctx: _Context, is_root: bool, errs: list) -> None:
    props = _props(s)
    additional = s.get("additionalProperties")
    if additional is not None:
        if props and additional is not True:
            msg = "additionalProperties and properties are mutual exclusive"
            errs.append(_forbidden(f"{path}.additionalProperties", msg))
        sub = ctx
        if ctx.inside_meta:
            sub = ctx.without_defaults("inside additionalProperties applying to object metadata")
        _openapi_errors(additional, f"{path}.additionalProperties", sub, False, errs)
    embedded = s.get("x-kubernetes-embedded-resource") is True
    for key, prop in props.items():
        sub = ctx
        if (is_root or embedded) and key in _TYPE_META_KEYS:
            sub = dataclasses.replace(sub, inside_meta=True)
            if is_root:
                sub = sub.without_defaults(f"in top-level {key}")
        _openapi_errors(prop, f"{path}.properties[{key}]", sub, False, errs)
    _openapi_errors(s.get("not"), f"{path}.not", ctx, False, errs)
    for key in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(_schemas(s, key)):
            _openapi_errors(sub_schema, f"{path}.{key}[{i}]", ctx, False, errs)
    items = s.get("items")
    if isinstance(items, dict):
        _openapi_errors(items, f"{path}.items", ctx, False, errs)
    elif isinstance(items, list):
        for i, item in enumerate(items):
            _openapi_errors(item, f"{path}.items[{i}]", ctx, False, errs)


def _map_type_rules(s: dict, path: str, errs: list) -> None:
    map_type = s.get("x-kubernetes-map-type")
    if map_type is None:
        return
    kind = _str(s, "type")
    if kind != "object":
        msg = "must be object if x-kubernetes-map-type is specified"
        errs.append(_invalid(f"{path}.type", kind, msg) if kind else _required(f"{path}.type", msg))
    if map_type not in ("atomic", "granular"):
        errs.append(_not_supported(f"{path}.x-kubernetes-map-type", map_type, ("atomic", "granular")))


def _list_type_rules(s: dict, path: str, errs: list) -> None:
    list_type, keys, items = s.get("x-kubernetes-list-type"), s.get("x-kubernetes-list-map-keys"), s.get("items")
    kind = _str(s, "type")
    if list_type is not None and kind != "array":
        msg = "must be array if x-kubernetes-list-type is specified"
        errs.append(_invalid(f"{path}.type", kind, msg) if kind else _required(f"{path}.type", msg))
    elif list_type == "set" and isinstance(items, dict):
        _set_item_rules(items, path, errs)
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(_not_supported(f"{path}.x-kubernetes-list-type", list_type, ("atomic", "set", "map")))
    if keys:
        msg = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errs.append(_required(f"{path}.x-kubernetes-list-type", msg))
        elif list_type != "map":
            errs.append(_invalid(f"{path}.x-kubernetes-list-type", list_type, msg))
    if list_type == "map":
        _map_list_rules(s, path, errs)
    if list_type in ("set", "map") and isinstance(items, dict):
        _map_list_key_rules(s, items, list_type, path, errs)


def _set_item_rules(items: dict, path: str, errs: list) -> None:
    msg = "must be atomic as item of a list with x-kubernetes-list-type=set"
    kind = _str(items, "type")
    if kind == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
        errs.append(_invalid(f"{path}.items.x-kubernetes-list-type", items["x-kubernetes-list-type"], msg))
    elif kind == "object" and items.get("x-kubernetes-map-type") != "atomic":
        errs.append(_invalid(f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-list-type"), msg))


def _map_list_rules(s: dict, path: str, errs: list) -> None:
    keys, items = s.get("x-kubernetes-list-map-keys"), s.get("items")
    if not keys:
        msg = "must not be empty if x-kubernetes-list-type is map"
        errs.append(_required(f"{path}.x-kubernetes-list-map-keys", msg))
    if items is None:
        errs.append(_required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
    elif not isinstance(items, dict):
        errs.append(_invalid(f"{path}.items", items, "must only have a single schema if x-kubernetes-list-type is map"))
    elif _str(items, "type") != "object":
        msg = "must be object if parent array's x-kubernetes-list-type is map"
        errs.append(_invalid(f"{path}.items.type", _str(items, "type"), msg))
    elif isinstance(keys, list):
        item_props, seen = _props(items), set()
        for key in keys:
            if key in item_props:
                if _str(item_props[key], "type") in ("array", "object"):
                    msg = "must be a scalar type if parent array's x-kubernetes-list-type is map"
                    errs.append(_invalid(f"{path}.items.properties[{key}].type", _str(items, "type"), msg))
            else:
                msg = "entries must all be names of item properties"
                errs.append(_invalid(f"{path}.x-kubernetes-list-map-keys", keys, msg))
            if repr(key) in seen:
                errs.append(_invalid(f"{path}.x-kubernetes-list-map-keys", keys, "must not contain duplicate entries"))
            seen.add(repr(key))


def _map_list_key_rules(s: dict, items: dict, list_type: str, path: str, errs: list) -> None:
    if items.get("nullable") is True:
        msg = f"cannot be nullable when x-kubernetes-list-type is {list_type}"
        errs.append(_forbidden(f"{path}.items.nullable", msg))
    if list_type != "map" or not isinstance(s.get("x-kubernetes-list-map-keys"), list):
        return
    required, item_props = _schemas(items, "required"), _props(items)
    for key in s["x-kubernetes-list-map-keys"]:
        prop = item_props.get(key) if isinstance(key, str) else None
        if prop is None:
            continue
        if key not in required and prop.get("default") is None:
            msg = "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
            errs.append(_required(f"{path}.items.properties[{key}].default", msg))
        if prop.get("nullable") is True:
            msg = "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
            errs.append(_forbidden(f"{path}.items.properties[{key}].nullable", msg))
