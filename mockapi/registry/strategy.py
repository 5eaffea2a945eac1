"""Per-kind behaviour, kept out of the generic REST code (kube's ``rest.RESTCreateStrategy`` idea).

The REST layer runs the same recipe for every kind and asks the kind's strategy at fixed points:
prepare on create, prepare on update (main resource or ``/status``), extra validation, a few flags
kube-apiserver sets per kind (generation tracking, unconditional updates, create-on-update, what
DELETE returns), and lifecycle hooks where kube runs an admission plugin or a controller beside the
write (admission on create, before/after store, before/after delete, termination). Hooks get a
:class:`~mockapi.registry.cluster.Cluster`, never the registry. Custom resources share
:class:`CustomResourceStrategy`; the core kinds have small subclasses here; namespaces
(:mod:`.namespaces`), CustomResourceDefinitions (:mod:`.crds`) and the device kinds
(:mod:`.devices`) each have a module of their own; :mod:`.kinds` maps a kind to its strategy.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import orjson

from typing import TYPE_CHECKING

from mockapi import errors
from mockapi.gvk import ResourceType
from mockapi.schema.goformat import go_quote

if TYPE_CHECKING:
    from mockapi.registry.cluster import Cluster

_NOT_SPEC = ("apiVersion", "kind", "metadata", "status")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def spec_of(obj: dict) -> dict:
    """Everything generation tracks: the object minus apiVersion, kind, metadata and status.
    (DeviceDriver keeps its payload, ``deviceTypes``, at the top level; this covers it.)"""
    return {k: v for k, v in obj.items() if k not in _NOT_SPEC}


class Strategy:
    """The defaults are core v1's; custom resources override them below."""

    tracks_generation = False
    unconditional_update = True
    create_on_update = False
    return_deleted_object = False
    name_rule = "subdomain"
    # Typed kinds reject wrongly typed values at decode time (400), not at validation (422).
    typed = True
    # prepare_for_create reads and changes only the fields other than apiVersion, kind and
    # metadata, and validate(obj, None) reads only them: a create's verdict on them may be
    # remembered for the next create with the same fields (registry/verdicts.py). Say so per class.
    pure_create = False
    # The top-level fields validate(obj, old) reads, when it reads nothing else and finds nothing in
    # values equal (==) to those a write it passed stored: an update that leaves all of them as
    # stored (by an object admitted under today's schema, Registry._validated_before) is not
    # validated by the kind again. None: unknown (always validated).
    validated_fields: tuple[str, ...] | None = None
    # How deep the values ``admit`` adds to an object nest at most, counted from the object's root
    # (level 1, as decoding.depth_exceeds counts); None: not bounded. Read from the class that
    # defines ``admit`` only (a subclass that admits otherwise says again): with it, a create
    # whose own fields a verdict settled proves its stored depth without encoding those fields.
    admission_depth: int | None = None

    def __init__(self, rt: ResourceType) -> None:
        self.rt = rt

    def prepare_for_create(self, obj: dict) -> None:
        if self.rt.has_status:
            obj.pop("status", None)

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        """The object to store, given the requested one and the current one."""
        if subresource == "status":
            return _status_only(new, old)
        if self.rt.has_status:
            if "status" in old:
                new["status"] = json_copy(old["status"])
            else:
                new.pop("status", None)
        return new

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        return []

    def validate_meta(self, obj: dict) -> list[errors.FieldError]:
        """Kind-family rules on ObjectMeta beyond the generic ones (core: finalizer names)."""
        return finalizer_errors(obj) if self.rt.builtin and not self.rt.group else []

    def warnings(self, obj: dict, old: dict | None) -> list[str]:
        """Warnings for a valid write (kube's ``WarningsOnCreate`` / ``WarningsOnUpdate``)."""
        return []

    def field_value(self, obj: dict, path: str) -> Any:
        """The value a field selector on ``path`` compares against (a dotted path by default)."""
        return get_path(obj, path)

    # Lifecycle hooks: no-ops unless the kind has a controller or admission rule of its own.
    defers_delete = False  # DELETE marks the object Terminating even without finalizers (namespaces)

    def deletion_grace(self, obj: dict, grace: int | None, *, kubelet: bool) -> int:
        """Seconds a DELETE leaves the object terminating before it goes (pods on a node: their
        kubelet's time); 0 removes it at once, finalizers aside."""
        return 0

    def admit(self, cluster: "Cluster", obj: dict) -> None:
        """Admission on create, after validation (raise a StatusError to refuse)."""

    # Who writes: the requester (WriteOptions.user; None in-process) and the server's authorizer
    # (Registry.access; None for AlwaysAllow). RBAC's escalation checks (registry/rbac.py).
    def check_requester(self, cluster: "Cluster", obj: dict, old: dict | None, requester: Any, access: Any) -> None:
        """Refuse (raise) a write the requester may not make whatever the request's own authorization."""

    # Create-only kinds answered and never stored (the access reviews: registry/reviews.py).
    answers_create = False

    def answer(self, cluster: "Cluster", obj: dict, requester: Any, access: Any) -> dict:
        """The response to a create of an ``answers_create`` kind, after validation."""
        raise NotImplementedError

    def before_store(self, cluster: "Cluster", obj: dict, old: dict | None) -> None:
        """Last changes to a valid object about to be stored (not on dry run: see rest)."""

    def after_store(self, cluster: "Cluster", obj: dict, old: dict | None) -> None:
        """What follows a stored create or update (the object as stored)."""

    def before_delete(self, cluster: "Cluster", obj: dict) -> None:
        """Admission on delete (raise to refuse)."""

    def on_terminating(self, cluster: "Cluster", obj: dict) -> None:
        """Changes to an object being marked for deletion, before it is stored so."""

    def after_terminating(self, cluster: "Cluster", obj: dict) -> None:
        """What follows an object's being marked for deletion."""

    def after_delete(self, cluster: "Cluster", obj: dict) -> None:
        """What follows an object's removal (its final state)."""


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value, through orjson (ten times copy.deepcopy's speed)."""
    return orjson.loads(orjson.dumps(value))


def status_only_sharing(new: dict, old: dict) -> dict:
    """:func:`_status_only`'s object without its copy of ``old``: every top-level field but
    metadata and status is ``old``'s own value, shared — for a caller that knows nothing on the
    write's path changes those in place (``Registry._shares_untouched``). Metadata is a fresh copy
    (the write sets its system fields) but for its managedFields list; status is ``new``'s."""
    meta = old.get("metadata")
    if type(meta) is not dict:
        return _status_only(new, old)
    result = dict(old)
    result["metadata"] = _metadata_copy(meta)
    return _with_status(result, new)


def _status_only(new: dict, old: dict) -> dict:
    """A /status write changes status and nothing else (apiextensions' statusStrategy). The stored
    managedFields list is kept, not copied: writes replace that list, never change it in place
    (registry/loads.py lends one parse of it to many loads)."""
    meta = old.get("metadata")
    if type(meta) is not dict:
        return _with_status(json_copy(old), new)
    result = json_copy({**old, "metadata": None})  # the key keeps its place
    result["metadata"] = _metadata_copy(meta)
    return _with_status(result, new)


def _metadata_copy(meta: dict) -> dict:
    """A deep copy of ``meta`` but for its managedFields list, which is kept (never changed in place)."""
    managed = meta.get("managedFields")
    if type(managed) is not list:
        return json_copy(meta)
    copied = json_copy({**meta, "managedFields": []})  # the key keeps its place
    copied["managedFields"] = managed
    return copied


def _with_status(result: dict, new: dict) -> dict:
    """``result`` with ``new``'s status (or none, if ``new`` has none)."""
    if "status" in new:
        result["status"] = new["status"]
    else:
        result.pop("status", None)
    return result


class CustomResourceStrategy(Strategy):
    tracks_generation = True
    unconditional_update = False
    return_deleted_object = True
    typed = False
    pure_create = True  # status dropped, nothing validated beyond the schema (subclasses: say again)

    def warnings(self, obj: dict, old: dict | None) -> list[str]:
        return finalizer_warnings(obj, old)


# Finalizers kube-apiserver knows without a domain (core's standardFinalizers).
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def finalizer_warnings(obj: dict, old: dict | None) -> list[str]:
    """apiextensions' warnings for custom resources: each finalizer the write adds that has no
    ``/`` and is not a standard one (kube 1.32 wording, sorted like the Go set it comes from)."""
    added = set(_finalizers(obj)) - set(_finalizers(old) if old is not None else ())
    return [
        f"metadata.finalizers: {go_quote(name)}: prefer a domain-qualified finalizer name including a path (/) "
        "to avoid accidental conflicts with other finalizer writers"
        for name in sorted(added)
        if "/" not in name and name not in STANDARD_FINALIZERS
    ]


def finalizer_errors(obj: dict) -> list[errors.FieldError]:
    """Core v1 kinds refuse what custom resources only warn about (core's ValidateFinalizerName)."""
    return [
        errors.FieldError("invalid", f"metadata.finalizers[{index}]", "name is neither a standard finalizer name nor is it fully qualified", value=name)
        for index, name in enumerate(_finalizers(obj))
        if "/" not in name and name not in STANDARD_FINALIZERS
    ]


def _finalizers(obj: dict) -> list[str]:
    finalizers = (obj.get("metadata") or {}).get("finalizers") or ()
    return [name for name in finalizers if isinstance(name, str)]


class ConfigMapStrategy(Strategy):
    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems = _config_keys(obj, ("data", "binaryData"))
        both = set(obj.get("data") or {}) & set(obj.get("binaryData") or {})
        problems += [errors.FieldError("invalid", "data", "duplicate of key present in binaryData", value=k) for k in sorted(both)]
        if _text_bytes(obj.get("data")) + _base64_bytes(obj.get("binaryData")) > MAX_SECRET_SIZE:
            problems.append(_too_big("[]"))  # kube's field.NewPath(""): the whole object
        return problems + _immutable(obj, old, ("data", "binaryData"))


class SecretStrategy(Strategy):
    def prepare_for_create(self, obj: dict) -> None:
        _fold_string_data(obj)
        obj.setdefault("type", "Opaque")

    def prepare_for_update(self, new: dict, old: dict, *, subresource: str) -> dict:
        _fold_string_data(new)
        new.setdefault("type", old.get("type", "Opaque"))
        return super().prepare_for_update(new, old, subresource=subresource)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems = _config_keys(obj, ("data",))
        if _base64_bytes(obj.get("data")) > MAX_SECRET_SIZE:
            problems.append(_too_big("data"))
        if old is not None and obj.get("type") != old.get("type"):
            problems.append(errors.FieldError("invalid", "type", "field is immutable", value=obj.get("type")))
        return problems + _immutable(obj, old, ("data",))


MAX_SECRET_SIZE = 1024 * 1024  # api.MaxSecretSize, the bound on a Secret's or ConfigMap's data


def _too_big(path: str) -> errors.FieldError:
    return errors.FieldError("too_long", path, f"may not be more than {MAX_SECRET_SIZE} bytes")


def _text_bytes(values: Any) -> int:
    """Go's len() of the string values: their UTF-8 bytes."""
    if not isinstance(values, dict):
        return 0
    return sum(len(v) if v.isascii() else len(v.encode()) for v in values.values() if isinstance(v, str))


def _base64_bytes(values: Any) -> int:
    """The decoded size of base64 values ([]byte fields), without decoding them."""
    if not isinstance(values, dict):
        return 0
    return sum(len(v) * 3 // 4 - v.endswith("=") - v.endswith("==") for v in values.values() if isinstance(v, str))


def _fold_string_data(obj: dict) -> None:
    if not isinstance(obj.get("stringData", {}), dict):
        return  # not a map[string]string: validation refuses it as kube's decoding does
    string_data = obj.pop("stringData", None)
    if string_data:
        data = obj.setdefault("data", {}) or {}
        obj["data"] = data
        for key, value in string_data.items():
            if isinstance(value, str):
                data[key] = base64.b64encode(value.encode()).decode()


def _config_keys(obj: dict, fields: tuple[str, ...]) -> list[errors.FieldError]:
    problems = []
    for name in fields:
        for key in obj.get(name) or {}:
            if not _CONFIG_KEY.match(key) or len(key) > 253:
                problems.append(
                    errors.FieldError(
                        "invalid",
                        f"{name}[{key}]",
                        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                        "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                        value=key,
                    )
                )
    return problems


def _immutable(obj: dict, old: dict | None, fields: tuple[str, ...]) -> list[errors.FieldError]:
    if old is None or not old.get("immutable"):
        return []
    problems = [
        errors.FieldError("forbidden", name, "field is immutable when `immutable` is set")
        for name in fields
        if obj.get(name) != old.get(name)
    ]
    if not obj.get("immutable"):
        problems.append(errors.FieldError("forbidden", "immutable", "field is immutable when `immutable` is set"))
    return problems


class NodeStrategy(Strategy):
    def prepare_for_create(self, obj: dict) -> None:
        """Nodes may set status on create (kube's nodeStrategy)."""


class EventStrategy(Strategy):
    create_on_update = True

    def field_value(self, obj: dict, path: str) -> Any:
        if path == "source":  # kube: source.component, or reportingComponent when that is empty
            return get_path(obj, "source.component") or obj.get("reportingComponent")
        return get_path(obj, path)

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        involved = obj.get("involvedObject") or {}
        namespace = obj["metadata"].get("namespace", "")
        if involved.get("namespace") and involved["namespace"] != namespace:
            return [errors.FieldError("invalid", "involvedObject.namespace", "does not match event.namespace", value=involved["namespace"])]
        return []


class LeaseStrategy(Strategy):
    """coordination.k8s.io/v1 Lease: kube's ValidateLeaseSpec (the leader-election fields; the
    alpha coordinated-election ``strategy`` is stored as given)."""

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        problems = []
        duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
        if isinstance(duration, int) and duration <= 0:
            problems.append(errors.FieldError("invalid", "spec.leaseDurationSeconds", "must be greater than 0", value=duration))
        if isinstance(transitions, int) and transitions < 0:
            problems.append(errors.FieldError("invalid", "spec.leaseTransitions", "must be greater than or equal to 0", value=transitions))
        if spec.get("preferredHolder") and not spec.get("strategy"):
            problems.append(errors.FieldError("forbidden", "spec.preferredHolder", "may only be specified if `strategy` is defined"))
        return problems


def not_supported(path: str, value: Any, supported: tuple[str, ...]) -> errors.FieldError:
    """field.NotSupported: the value and the values that are."""
    return errors.FieldError("not_supported", path, "supported values: " + ", ".join(f'"{s}"' for s in supported), value=value)


def get_path(obj: Any, path: str) -> Any:
    """The value at a dotted path (``spec.nodeName``), or None."""
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj
