"""Validation (kube-openapi) of one value already shaped, with kube's field errors and messages.

kube-openapi ``pkg/validation/validate`` fixes the order of checks on one value — type,
allOf/anyOf/oneOf/not, string, format, number, array, enum, object — and the wording of every
message; apiextensions ``validation/validation.go`` (kubeOpenAPIResultToFieldErrors) turns its
results into field errors. Also ``schema/listtype/validation.go`` and
``schema/objectmeta/validation.go`` for list types and embedded resources. A parent skips a child
outright when the child's type is one of ``child.quick`` (nothing else to check there).
"""

from __future__ import annotations

import math
from typing import Any

from mockapi import errors
from mockapi.schema import meta
from mockapi.schema.compiled import _ALL_KINDS, _INT64_MAX, _INT64_MIN, _Node
from mockapi.schema.goformat import go_float, go_quote, go_sharp

_MAX_JSON_INTEGER = float(2**53 - 1)

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}
_GO_NUMBER_FORMATS = {"integer": "int64", "number": "float64"}


def _type_invalid(path: str, expected: str, actual: str) -> errors.FieldError:
    return errors.FieldError(
        "type_invalid", path, f"{path} in body must be of type {expected}: {go_quote(actual)}", value=actual
    )


def _invalid(path: str, value: Any, detail: str) -> errors.FieldError:
    return errors.FieldError("invalid", path, detail, value=_bad_value(value))


def _too_many(path: str, actual: int, limit: int) -> errors.FieldError:
    # field.TooMany prints the count as the bad value; errors.FieldError omits values of too_many.
    detail = f"{actual}: must have at most {limit} {'item' if limit == 1 else 'items'}"
    return errors.FieldError("too_many", path, detail)


def _too_long(path: str, limit: int) -> errors.FieldError:
    return errors.FieldError("too_long", path, f"may not be more than {limit} {'byte' if limit == 1 else 'bytes'}")


def _composite(message: str) -> errors.FieldError:
    """allOf/anyOf/oneOf/not failures are not field-level: kube reports them on the root path."""
    return errors.FieldError("invalid", "", message, value="")


def _is_json_integer(value: float) -> bool:
    """swag.IsFloat64AJSONInteger: integral within 1e-9 relative error and within ±(2^53-1)."""
    if not math.isfinite(value) or abs(value) > _MAX_JSON_INTEGER:
        return False
    whole = float(int(value))
    if value == whole:
        return True
    if whole == 0:
        return False
    return abs(value - whole) / (abs(value) + abs(whole)) < 1e-9


def _json_type(value: Any, kind: type) -> str:
    if kind is int and not _INT64_MIN <= value <= _INT64_MAX:
        return "number"  # Go decodes integers beyond int64 as float64
    return _JSON_TYPES.get(kind, "")


def _skippable(node: _Node, value: Any) -> bool:
    kind = type(value)
    return kind in node.quick and (kind is not int or _INT64_MIN <= value <= _INT64_MAX)


def _validate(node: _Node, value: Any, path: str, errs: list) -> None:
    if value is None:
        if node.types is not None and not node.nullable:
            errs.append(_type_invalid(path, node.type_label, "null"))
        if node.enum is not None:
            errs.append(errors.FieldError("not_supported", path, node.enum_detail, value="null"))
        return
    kind = type(value)
    if node.ok_kinds and (kind not in node.ok_kinds or (kind is int and not _INT64_MIN <= value <= _INT64_MAX)):
        _check_type(node, value, kind, path, errs)
    if node.junctors:
        _check_junctors(node, value, path, errs)
    if kind is str:
        if node.string_checks:
            _check_string(node, value, path, errs)
        if node.format_check is not None and not _format_ok(node, value):
            errs.append(_type_invalid(path, node.format, value))
    elif kind is int or kind is float:
        if node.number_checks:
            _check_number(node, value, kind, path, errs)
    elif kind is list:
        _validate_list(node, value, path, errs)
    if node.enum is not None and not _in_enum(node, value, kind):
        errs.append(errors.FieldError("not_supported", path, node.enum_detail, value=value))
    if kind is dict:
        _validate_object(node, value, path, errs)


def _format_ok(node: _Node, value: str) -> bool:
    try:
        return node.format_check(value)
    except (ValueError, TypeError, OverflowError, RecursionError):
        return False


def _check_type(node: _Node, value: Any, kind: type, path: str, errs: list) -> None:
    actual = _json_type(value, kind)
    types = node.types or ()
    if actual in types:
        return
    if actual == "number" and "integer" in types and _is_json_integer(float(value)):
        return
    if actual == "integer" and "number" in types:
        return
    if node.format is not None:
        if actual not in ("string", "array"):
            # kube-openapi names the format, and Go's own format of the value, in this case
            errs.append(_type_invalid(path, node.format, _GO_NUMBER_FORMATS.get(actual, "")))
            return
        if "number" not in types and "integer" not in types:
            return  # kube-openapi lets strings and arrays through a formatted non-number field
    if types:
        errs.append(_type_invalid(path, node.type_label, actual))


def _sub_errors(node: _Node, value: Any, path: str) -> list[errors.FieldError]:
    errs: list[errors.FieldError] = []
    if not _skippable(node, value):
        _validate(node, value, path, errs)
    return errs


def _check_junctors(node: _Node, value: Any, path: str, errs: list) -> None:
    if node.any_of and not any(_skippable(sub, value) for sub in node.any_of):
        failures = []
        for sub in node.any_of:
            result = _sub_errors(sub, value, path)
            if not result:
                break
            failures.append(result)
        else:
            errs.append(_composite(f"{go_quote(path)} must validate at least one schema (anyOf)"))
            errs.extend(min(failures, key=len))
    if node.one_of:
        results = [_sub_errors(sub, value, path) for sub in node.one_of]
        valid = sum(1 for result in results if not result)
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            errs.append(_composite(f"{go_quote(path)} must validate one and only one schema (oneOf). {found}"))
            if valid == 0:
                errs.extend(min(results, key=len))
    if node.all_of:
        results = [_sub_errors(sub, value, path) for sub in node.all_of]
        for result in results:
            errs.extend(result)
        failed = sum(1 for result in results if result)
        if failed:
            none = ". None validated" if failed == len(results) else ""
            errs.append(_composite(f"{go_quote(path)} must validate all the schemas (allOf){none}"))
    if node.not_ is not None and not _sub_errors(node.not_, value, path):
        errs.append(_composite(f"{go_quote(path)} must not validate the schema (not)"))


def _check_string(node: _Node, value: str, path: str, errs: list) -> None:
    """maxLength, minLength, pattern: kube-openapi stops at the first failure. Lengths count characters."""
    if node.max_length is not None and len(value) > node.max_length:
        errs.append(_too_long(path, node.max_length))
    elif node.min_length is not None and len(value) < node.min_length:
        errs.append(_invalid(path, value, f"{path} in body should be at least {node.min_length} chars long"))
    elif node.pattern is not None and not node.pattern.matches(value):
        errs.append(_invalid(path, value, f"{path} in body should match '{node.pattern_text}'"))


def _as_int_bound(bound: int | float) -> int | None:
    """Integer data is compared with int64(bound), truncated, as kube-openapi does."""
    if type(bound) is int:
        return bound
    return int(bound) if math.isfinite(bound) else None


def _check_number(node: _Node, value: int | float, kind: type, path: str, errs: list) -> None:
    if node.multiple_of is not None:
        _check_multiple_of(node.multiple_of, value, kind, path, errs)
    if node.minimum is not None:
        bound, shown = _bound(node.minimum, kind)
        if value < bound or (node.exclusive_minimum and value == bound):
            than = "greater than" if node.exclusive_minimum else "greater than or equal to"
            errs.append(_invalid(path, value, f"{path} in body should be {than} {shown}"))
    if node.maximum is not None:
        bound, shown = _bound(node.maximum, kind)
        if value > bound or (node.exclusive_maximum and value == bound):
            than = "less than" if node.exclusive_maximum else "less than or equal to"
            errs.append(_invalid(path, value, f"{path} in body should be {than} {shown}"))


def _bound(bound: int | float, kind: type) -> tuple[int | float, str]:
    """The bound a value is compared with, and how kube prints it (int64 or float64)."""
    if kind is int:
        as_int = _as_int_bound(bound)
        if as_int is not None:
            return as_int, str(as_int)
    return bound, go_float(float(bound))


def _check_multiple_of(factor: int | float, value: int | float, kind: type, path: str, errs: list) -> None:
    as_int = _as_int_bound(factor) if kind is int else None
    if as_int is not None:
        if as_int < 0:
            errs.append(_invalid(path, as_int, f"factor MultipleOf declared for {path} must be positive: {as_int}"))
        elif as_int == 0 or value % as_int:
            errs.append(_invalid(path, value, f"{path} in body should be a multiple of {as_int}"))
        return
    factor = float(factor)
    if factor < 0:
        msg = f"factor MultipleOf declared for {path} must be positive: {go_float(factor)}"
        errs.append(_invalid(path, factor, msg))
        return
    try:
        ratio = (1 / factor * value) if factor < 1 else (value / factor)
    except (ZeroDivisionError, OverflowError):
        ratio = math.inf
    if not _is_json_integer(ratio):
        errs.append(_invalid(path, value, f"{path} in body should be a multiple of {go_float(factor)}"))


def list_bounds(node: _Node, items: list, path: str, errs: list) -> None:
    """A list's own checks, over the whole list: minItems, maxItems, uniqueItems."""
    count = len(items)
    if node.min_items is not None and count < node.min_items:
        errs.append(_invalid(path, count, f"{path} in body should have at least {node.min_items} items"))
    if node.max_items is not None and count > node.max_items:
        errs.append(_too_many(path, count, node.max_items))
    if node.unique_items and len({canonical(item) for item in items}) != count:
        errs.append(_invalid(path, "", f"{path} in body shouldn't contain duplicates"))


def _validate_list(node: _Node, items: list, path: str, errs: list) -> None:
    child = node.items
    if child is not None and child.quick is not _ALL_KINDS:
        quick = child.quick
        for i, item in enumerate(items):
            kind = type(item)
            if kind is dict and child.bare_object:
                _validate_object(child, item, f"{path}[{i}]", errs)
            elif kind not in quick or (kind is int and not _INT64_MIN <= item <= _INT64_MAX):
                _validate(child, item, f"{path}[{i}]", errs)
    list_bounds(node, items, path, errs)


def _validate_object(node: _Node, obj: dict, path: str, errs: list) -> None:
    count = len(obj)
    if node.min_properties is not None and count < node.min_properties:
        errs.append(_invalid(path, count, f"{path} in body should have at least {node.min_properties} properties"))
        return
    if node.max_properties is not None and count > node.max_properties:
        errs.append(_too_many(path, count, node.max_properties))
        return
    props, additional = node.props, node.additional
    for key, value in obj.items():
        child = props.get(key)
        if child is None:
            if node.additional_forbidden:
                errs.append(_invalid(path, key, f"{path}.{key} in body is a forbidden property"))
                continue
            child = additional
            if child is None:
                continue
        kind = type(value)
        if kind is dict and child.bare_object:
            _validate_object(child, value, f"{path}.{key}" if path else f"{key}", errs)
        elif kind not in child.quick or (kind is int and not _INT64_MIN <= value <= _INT64_MAX):
            _validate(child, value, f"{path}.{key}" if path else f"{key}", errs)
    for key in node.required:
        if key not in obj:
            errs.append(errors.FieldError("required", f"{path}.{key}" if path else key))


def canonical(value: Any) -> Any:
    """A hashable stand-in for a JSON value that keeps Go's distinctions (1 is not 1.0, true is not 1)."""
    kind = type(value)
    if kind is str:
        return value  # nothing else canonicalizes to a bare str
    if kind is dict:
        return ("object", tuple(sorted((str(key), canonical(item)) for key, item in value.items())))
    if kind is list:
        return ("array", tuple(canonical(item) for item in value))
    return (kind.__name__, value)


def _in_enum(node: _Node, value: Any, kind: type) -> bool:
    if node.enum_strings is not None:
        return kind is str and value in node.enum_strings
    return any(_enum_equal(value, kind, allowed) for allowed in node.enum)


def _enum_equal(value: Any, kind: type, allowed: Any) -> bool:
    """Equality after converting the value to the enum value's type, as kube-openapi does."""
    allowed_kind = type(allowed)
    if kind is allowed_kind:
        return canonical(value) == canonical(allowed) if kind in (dict, list) else value == allowed
    if kind is int and allowed_kind is float:
        return float(value) == allowed
    if kind is float and allowed_kind is int:
        return math.isfinite(value) and int(value) == allowed
    return False


# ---------------------------------------------------------------------------------------------
# x-kubernetes-list-type set/map uniqueness and embedded resources: separate walks, as in kube,
# taken only where the schema has such fields. Paths here are field.Path's: map keys as [key].


def _list_type_errors(node: _Node, value: Any, path: str, errs: list) -> None:
    if type(value) is dict:
        for key, item in value.items():
            child = node.props.get(key)
            if child is not None:
                if child.has_list_type:
                    _list_type_errors(child, item, _join(path, key), errs)
            elif node.additional is not None and node.additional.has_list_type:
                _list_type_errors(node.additional, item, f"{path}[{key}]", errs)
    elif type(value) is list:
        if node.list_type == "set":
            for i in _second_occurrences([canonical(item) for item in value]):
                errs.append(_duplicate(f"{path}[{i}]", value[i]))
        elif node.list_type == "map":
            errs.extend(_list_map_errors(node, value, path))
        child = node.items
        if child is not None and child.has_list_type:
            for i, item in enumerate(value):
                _list_type_errors(child, item, f"{path}[{i}]", errs)


def _second_occurrences(keys: list) -> list[int]:
    """Indexes where a value is seen for the second time (kube reports each duplicate once)."""
    if len(set(keys)) == len(keys):
        return []
    seen: dict[Any, int] = {}
    found = []
    for i, key in enumerate(keys):
        times = seen.get(key, 0)
        if times == 1:
            found.append(i)
        seen[key] = times + 1
    return found


def _duplicate(path: str, value: Any) -> errors.FieldError:
    if type(value) in (dict, list):
        return errors.FieldError("duplicate", path, go_sharp(value))
    return errors.FieldError("duplicate", path, value=_bad_value(value))


def _list_map_errors(node: _Node, items: list, path: str) -> list[errors.FieldError]:
    for i, item in enumerate(items):
        if item is not None and type(item) is not dict:
            return [_invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")]
    if len(items) <= 1:
        return []
    keys = node.list_map_keys
    if len(keys) == 1:  # kube compares the single key's value; an item without it is "unspecified"
        key = keys[0]
        values = [canonical(item[key]) if item and key in item else _UNSPECIFIED_KEY for item in items]
        found = _second_occurrences(values)
    else:
        found = _second_occurrences([canonical(_key_entry(keys, item)) for item in items])
    return [errors.FieldError("duplicate", f"{path}[{i}]", go_sharp(_key_entry(keys, items[i]))) for i in found]


_UNSPECIFIED_KEY = ("unspecified",)


def _key_entry(keys: tuple[str, ...], item: dict | None) -> dict:
    return {key: item[key] for key in keys if key in item} if item else {}


def _embedded_errors(node: _Node, value: Any, path: str, errs: list, *, root: bool = False) -> None:
    """objectmeta.Validate: TypeMeta and ObjectMeta of resources embedded below the root."""
    if type(value) is dict:
        if node.embedded and not root:
            errs.extend(_embedded_resource_errors(value, path))
        for key, item in value.items():
            child = node.props.get(key)
            if child is not None:
                if child.embedded or child.has_embedded:
                    _embedded_errors(child, item, _join(path, key), errs)
            elif node.additional is not None and (node.additional.embedded or node.additional.has_embedded):
                _embedded_errors(node.additional, item, f"{path}[{key}]", errs)
    elif type(value) is list and node.items is not None and (node.items.embedded or node.items.has_embedded):
        for i, item in enumerate(value):
            _embedded_errors(node.items, item, f"{path}[{i}]", errs)


def _embedded_resource_errors(obj: dict, path: str) -> list[errors.FieldError]:
    errs = [errors.FieldError("required", _join(path, key)) for key in ("apiVersion", "kind") if key not in obj]
    for key, value in obj.items():
        if key == "apiVersion":
            errs.extend(_api_version_errors(value, _join(path, key)))
        elif key == "kind":
            errs.extend(_kind_errors(value, _join(path, key)))
        elif key == "metadata":
            errs.extend(_embedded_metadata_errors(value, _join(path, key)))
    return errs


def _api_version_errors(value: Any, path: str) -> list[errors.FieldError]:
    if type(value) is not str:
        return [_invalid(path, value, "must be a string")]
    if not value:
        return [_invalid(path, value, "must not be empty")]
    if value.count("/") > 1:
        return [_invalid(path, value, f"unexpected GroupVersion string: {value}")]
    return []


def _kind_errors(value: Any, path: str) -> list[errors.FieldError]:
    if type(value) is not str:
        return [_invalid(path, value, "must be a string")]
    if not value:
        return [_invalid(path, value, "must not be empty")]
    msgs = meta.dns1035_label_errors(value.lower())
    if msgs:
        return [_invalid(path, value, "may have mixed case, but should otherwise match: " + ",".join(msgs))]
    return []


_GO_JSON_KINDS = {str: "string", bool: "bool", int: "number", float: "number", list: "array"}


def _embedded_metadata_errors(value: Any, path: str) -> list[errors.FieldError]:
    if type(value) is not dict:
        go_kind = _GO_JSON_KINDS.get(type(value), "value")
        return [_invalid(path, value, f"json: cannot unmarshal {go_kind} into Go value of type v1.ObjectMeta")]
    metadata = dict(value)
    metadata["name"] = metadata.get("name") or "fakename"  # kube sets one "to avoid an error"
    namespaced = bool(metadata.get("namespace"))
    return meta.validate_object_meta(metadata, namespaced=namespaced, name_rule="path-segment", path=path)


def _bad_value(value: Any) -> Any:
    """field.Error renders a nil bad value as the string "null"."""
    return "null" if value is None else value


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else f"{key}"
