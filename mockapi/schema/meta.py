"""ObjectMeta rules kube-apiserver applies to every object, worded as it words them.

Anchors: apimachinery ``pkg/api/validation/objectmeta.go`` (ValidateObjectMetaAccessor),
``pkg/apis/meta/v1/validation`` (labels) and ``pkg/api/validate/content`` (path segments); the name,
label key and label value checks themselves are ``mockapi/names.py``'s, shared with label selectors.
Lengths are counted in bytes, as Go's ``len`` does.
"""

from __future__ import annotations

from typing import Any

import orjson

from mockapi import errors
from mockapi.wire import exact
from mockapi.names import (  # noqa: F401  (re-exported: the schema layer reads them as meta.*)
    byte_len as _byte_len,
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
)
from mockapi.names import label_key_errors as qualified_name_errors  # ObjectMeta words them as label keys

# Every metav1.ObjectMeta json field; anything else under metadata is an unknown field.
OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
OWNER_REFERENCE_FIELDS = frozenset({"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"})
MANAGED_FIELDS_ENTRY_FIELDS = frozenset(
    {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}
)
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}


def json_type(value: Any) -> str:
    """The JSON type name kube-openapi reports for a decoded value ("" for anything else)."""
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), "")


def type_error(path: str, expected: str, value: Any) -> errors.FieldError:
    """kube-openapi's type failure, e.g.
    ``spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"``."""
    actual = json_type(value)
    detail = f'{path} in body must be of type {expected}: "{actual}"'
    return errors.FieldError("type_invalid", path, detail, value=actual)


# ObjectMeta's fields as Go types them: (the JSON type that decodes, the Go type kube names).
_GO_TYPES = {
    **{key: (str, "string") for key in ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")},
    **{key: (str, "v1.Time") for key in ("creationTimestamp", "deletionTimestamp")},
    **{key: (int, "int64") for key in ("generation", "deletionGracePeriodSeconds")},
    **{key: (dict, "map[string]string") for key in ("labels", "annotations")},
    "finalizers": (list, "[]string"),
    "ownerReferences": (list, "[]v1.OwnerReference"),
    "managedFields": (list, "[]v1.ManagedFieldsEntry"),
}
_GO_JSON_KINDS = {str: "string", bool: "bool", int: "number", float: "number", dict: "object", list: "array"}


def decode_error(meta: dict) -> str:
    """Go's json error for the first ObjectMeta field whose JSON type cannot decode into its Go
    type ("" when all can): kube-apiserver refuses such a body before anything reads it (a 400).
    Values inside labels, annotations and lists are left to :func:`validate_object_meta`."""
    for key, value in meta.items():  # an object sets a few of its metadata fields: walk those
        typed = _GO_TYPES.get(key)
        if typed is None or value is None:
            continue
        wanted, go_type = typed
        if type(value) is not wanted:
            found = _GO_JSON_KINDS.get(type(value), "value")
            return f"json: cannot unmarshal {found} into Go struct field ObjectMeta.metadata.{key} of type {go_type}"
    return ""


def path_segment_name_errors(value: str, *, prefix: bool = False) -> list[str]:
    """path.ValidatePathSegmentName: names that must survive as one URL path segment."""
    if not prefix and value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def name_errors(value: str, *, rule: str = "subdomain", prefix: bool = False) -> list[str]:
    """A kind's name rule (``subdomain``, ``label`` or ``path-segment``); ``prefix`` checks a generateName."""
    if rule == "path-segment":
        return path_segment_name_errors(value, prefix=prefix)
    if prefix and len(value) > 1 and value.endswith("-"):
        value = value[:-2] + "a"  # maskTrailingDash: a generated suffix will follow the dash
    if rule == "label":
        return dns1123_label_errors(value)
    return dns1123_subdomain_errors(value)


def validate_object_meta(
    meta: Any, *, namespaced: bool, name_rule: str = "subdomain", path: str = "metadata"
) -> list[errors.FieldError]:
    """ValidateObjectMetaAccessor for a create: names, namespace, generation, labels, annotations,
    ownerReferences and finalizers. ``name_rule`` is one of ``subdomain``, ``label``, ``path-segment``."""
    if meta is None:
        meta = {}  # absent metadata decodes as an empty ObjectMeta
    if not isinstance(meta, dict):
        return [type_error(path, "object", meta)]
    errs: list[errors.FieldError] = []
    _check_names(meta, name_rule, path, errs)
    _check_namespace(meta, namespaced, path, errs)
    _check_generation(meta, path, errs)
    for key, check in _VALUE_CHECKS:
        value = meta.get(key)
        if value is not None:
            check(value, f"{path}.{key}", errs)
    return errs


def _remember_valid(check):
    """``check`` (a rule on one metadata value alone), skipped for a value it found valid before:
    objects made from one template carry the same labels, annotations, owner and finalizers. Values
    are known by their compact JSON (``true`` is not ``1``), at most _MEMO_SIZE of them."""
    valid: set[bytes] = set()

    def checked(value: Any, path: str, errs: list) -> None:
        try:
            key = orjson.dumps(value)
        except orjson.JSONEncodeError:
            check(value, path, errs)
            return
        if key in valid:
            return
        found = len(errs)
        check(value, path, errs)
        if len(errs) == found:
            if len(valid) >= _MEMO_SIZE:
                valid.clear()
            valid.add(exact(key))

    checked.__wrapped__ = check
    return checked


def _string_field(meta: dict, key: str, path: str, errs: list) -> str | None:
    """The field as a string ("" when absent); None (and a type error) when it is not a string."""
    value = meta.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        errs.append(type_error(f"{path}.{key}", "string", value))
        return None
    return value


def _check_names(meta: dict, rule: str, path: str, errs: list) -> None:
    generate_name = _string_field(meta, "generateName", path, errs)
    if generate_name:
        for msg in name_errors(generate_name, rule=rule, prefix=True):
            errs.append(errors.FieldError("invalid", f"{path}.generateName", msg, value=generate_name))
    name = _string_field(meta, "name", path, errs)
    if name == "":
        if not generate_name:  # kube generates the name before validating; the caller may not have yet
            errs.append(errors.FieldError("required", f"{path}.name", "name or generateName is required"))
    elif name is not None:
        for msg in name_errors(name, rule=rule):
            errs.append(errors.FieldError("invalid", f"{path}.name", msg, value=name))


def _check_namespace(meta: dict, namespaced: bool, path: str, errs: list) -> None:
    namespace = _string_field(meta, "namespace", path, errs)
    if namespace is None:
        return
    if not namespaced:
        if namespace:
            errs.append(errors.FieldError("forbidden", f"{path}.namespace", "not allowed on this type"))
    elif not namespace:
        errs.append(errors.FieldError("required", f"{path}.namespace"))
    else:
        for msg in dns1123_label_errors(namespace):
            errs.append(errors.FieldError("invalid", f"{path}.namespace", msg, value=namespace))


def _check_generation(meta: dict, path: str, errs: list) -> None:
    generation = meta.get("generation")
    if generation is None:
        return
    if type(generation) is not int:
        errs.append(type_error(f"{path}.generation", "integer", generation))
    elif generation < 0:
        errs.append(
            errors.FieldError("invalid", f"{path}.generation", "must be greater than or equal to 0", value=generation)
        )


def _check_labels(labels: Any, path: str, errs: list) -> None:
    if labels is None:
        return
    if not isinstance(labels, dict):
        errs.append(type_error(path, "object", labels))
        return
    for key, value in labels.items():
        key = str(key)
        if key not in _VALID_LABEL_KEYS:  # a map whose one label changed (a patch) checks that one
            _check_label_part(key, qualified_name_errors, _VALID_LABEL_KEYS, path, errs)
        if not isinstance(value, str):
            errs.append(type_error(f"{path}.{key}", "string", value))
            continue
        if value not in _VALID_LABEL_VALUES:
            _check_label_part(value, label_value_errors, _VALID_LABEL_VALUES, path, errs)


def _check_label_part(text: str, rule, valid: set[str], path: str, errs: list) -> None:
    """One label key or value by its rule, remembered in ``valid`` (at most _MEMO_SIZE) when it passes."""
    problems = rule(text)
    for msg in problems:
        errs.append(errors.FieldError("invalid", path, msg, value=text))
    if not problems:
        if len(valid) >= _MEMO_SIZE:
            valid.clear()
        valid.add(text)


def _check_annotations(annotations: Any, path: str, errs: list) -> None:
    if annotations is None:
        return
    if not isinstance(annotations, dict):
        errs.append(type_error(path, "object", annotations))
        return
    size = 0
    for key, value in annotations.items():
        key = str(key)
        # the rule is QualifiedName except that case doesn't matter
        for msg in qualified_name_errors(key.lower()):
            errs.append(errors.FieldError("invalid", path, msg, value=key))
        if not isinstance(value, str):
            errs.append(type_error(f"{path}.{key}", "string", value))
            continue
        size += _byte_len(key) + _byte_len(value)
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(errors.FieldError("too_long", path, f"may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))


def _check_owner_references(refs: Any, path: str, errs: list) -> None:
    if refs is None:
        return
    if not isinstance(refs, list):
        errs.append(type_error(path, "array", refs))
        return
    controller = ""
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            errs.append(type_error(f"{path}[{i}]", "object", ref))
            continue
        _check_owner_reference(ref, i, path, errs)
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                msg = (
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{controller} and {current}"
                )
                errs.append(errors.FieldError("invalid", path, msg, value=refs))
            else:
                controller = current


def _check_owner_reference(ref: dict, index: int, path: str, errs: list) -> None:
    fields = {}
    for key in ("apiVersion", "kind", "name", "uid"):
        value = _string_field(ref, key, f"{path}[{index}]", errs)
        fields[key] = value or ""
    group, version = _parse_group_version(fields["apiVersion"])
    if not version:
        errs.append(
            errors.FieldError("invalid", f"{path}.apiVersion", "version must not be empty", value=fields["apiVersion"])
        )
    for key in ("kind", "name", "uid"):
        if not fields[key]:
            errs.append(errors.FieldError("invalid", f"{path}.{key}", "must not be empty", value=fields[key]))
    if (group, version, fields["kind"]) == ("", "v1", "Event"):
        errs.append(errors.FieldError("invalid", path, "/v1, Kind=Event is disallowed from being an owner", value=ref))


def _parse_group_version(api_version: str) -> tuple[str, str]:
    """schema.ParseGroupVersion, with an unparsable value giving an empty version."""
    if api_version in ("", "/"):
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, version = api_version.split("/")
        return group, version
    return "", ""


def _check_finalizers(finalizers: Any, path: str, errs: list) -> None:
    if finalizers is None:
        return
    if not isinstance(finalizers, list):
        errs.append(type_error(path, "array", finalizers))
        return
    seen: set[str] = set()
    for i, finalizer in enumerate(finalizers):
        if not isinstance(finalizer, str):
            errs.append(type_error(f"{path}[{i}]", "string", finalizer))
            continue
        for msg in qualified_name_errors(finalizer):
            errs.append(errors.FieldError("invalid", path, msg, value=finalizer))
        if finalizer in seen:
            errs.append(errors.FieldError("duplicate", f"{path}[{i}]", value=finalizer))
        seen.add(finalizer)
    if "orphan" in seen and "foregroundDeletion" in seen:
        msg = "finalizer orphan and foregroundDeletion cannot be both set"
        errs.append(errors.FieldError("invalid", path, msg, value=finalizers))


_MEMO_SIZE = 4096
# Label keys and values found valid: a label map that misses the whole-map memo below (one label
# flipped) has its other labels known already.
_VALID_LABEL_KEYS: set[str] = set()
_VALID_LABEL_VALUES: set[str] = set()
_VALUE_CHECKS = (
    ("labels", _remember_valid(_check_labels)),
    ("annotations", _remember_valid(_check_annotations)),
    ("ownerReferences", _remember_valid(_check_owner_references)),
    ("finalizers", _remember_valid(_check_finalizers)),
)
