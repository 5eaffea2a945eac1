"""Field management: server-side apply and ``metadata.managedFields``, as kube-apiserver does them
(apimachinery ``util/managedfields`` on top of ``sigs.k8s.io/structured-merge-diff/v4``).

Two pure functions, both given the kind's ``openAPIV3Schema``:

- :func:`apply` merges an applied configuration into the live object for one field manager,
  removes what that manager applied before and no longer applies, and raises a 409 :class:`Conflict`
  when it would change fields other managers own (unless forced).
- :func:`update` computes the ``managedFields`` of any other write (create, update, patch): what
  changed becomes the writer's, and leaves everyone else's set.

Both take ``ignore``: top-level fields the strategy resets and field management leaves alone
(kube's reset fields) — ``("status",)`` for the main resource of a kind with a ``/status``
subresource, ``("spec",)`` for ``/status`` writes. ``apiVersion``, ``kind`` and the server-set
``metadata`` fields (name, namespace, uid, resourceVersion, generation, creationTimestamp,
managedFields, ...) are never recorded.

Kube's layers, in the order a request meets them: version check (the caller's), the kubectl
last-applied upgrade (an apply by ``kubectl`` may take over fields its client-side apply
annotation vouches for, and keeps that annotation in step), tracking starts at the first apply of
an untracked object (``before-first-apply``), at most ten Update entries (older ones merge into
``ancient-changes``), entry times, stripped metadata, then the merge itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mockapi import decoding, errors
from mockapi.fieldmanager import managed as entries
from mockapi.fieldmanager.conflict import Conflict, conflict_error
from mockapi.fieldmanager.fieldset import covers, difference, has, intersection, paths, union
from mockapi.fieldmanager.managed import (
    APPLY,
    UPDATE,
    DecodeError,
    Entry,
    Managers,
    key_of,
)
from mockapi.fieldmanager.schematype import TypeNode, root_type
from mockapi.fieldmanager.typed import (
    TypedError,
    added_object,
    compare_objects,
    merge,
    object_field_set,
    remove_object_items,
)
from mockapi.schema.goformat import go_json
from mockapi.schema.prune import copy_json

__all__ = ["LAST_APPLIED", "Conflict", "apply", "update"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
BEFORE_FIRST_APPLY = "before-first-apply"


def update(
    schema: dict | None,
    old: dict | None,
    new: dict,
    *,
    manager: str,
    now: str,
    api_version: str,
    subresource: str = "",
    ignore: Iterable[str] = (),
    own_fields: dict | None = None,
) -> list[dict]:
    """The ``managedFields`` to store with ``new`` after a create (``old`` None), update or patch by
    ``manager``. Fields that changed or appeared become ``manager``'s (its Update entry for this
    apiVersion and subresource, stamped ``now``) and leave every other entry; removed fields leave
    every entry; entries left empty go. ``new``'s own managedFields win when they are valid and
    non-empty (clients may edit them), ``[]`` or ``[{}]`` resets them, and an object stored
    without managedFields stays untracked until it is applied to. An empty list means: store no
    managedFields. The result may share entries with ``old``; treat it as read-only.

    ``own_fields`` (a create only): ``typed.added_fields`` of ``new`` with this schema and
    ``ignore``, when the caller knows it (a create verdict's, registry/verdicts.py).
    """
    ignore = tuple(ignore)
    managers, stored = _live_or_new(old, new, subresource=subresource)
    if not managers and old is not None:
        return []  # untracked objects stay untracked until the first apply (skipnonapplied.go)
    try:
        if old is None:
            added, modified, removed = added_object(root_type(schema), new, ignore, own=own_fields), {}, {}
        else:
            added, modified, removed = compare_objects(root_type(schema), old, new, ignore)
    except TypedError:
        return list(_managed_fields(old) or ())  # UpdateNoErrors keeps what was there
    if not managers:  # a create that sends no managedFields: the writer's entry is all there is
        return [Entry(manager, UPDATE, api_version, subresource, now, added).encode()] if added else []
    if not (added or modified or removed):
        return list(stored) if stored is not None else entries.encode(_disown(managers, {}, keep=None))
    changed = union(modified, added)
    key = key_of(manager, UPDATE, api_version, subresource)
    if not removed and _within_own_fields(managers, key, changed):
        # a manager writes again within its own fields, which no other entry shares (a controller's
        # status, a label flip): every entry keeps its fields ((F - C) | C is F), only its time moves
        managers[key] = managers[key].with_time(now)  # managers is a fresh dict (_live_or_new)
        return entries.encode(entries.cap_update_managers(managers))
    managers = _disown(managers, union(changed, removed), keep=None)
    mine = difference(changed, removed)
    if mine:
        previous = managers.get(key)
        fields = union(previous.fields, mine) if previous is not None else mine
        managers[key] = Entry(manager, UPDATE, api_version, subresource, now, fields)
    return entries.encode(entries.cap_update_managers(managers))


def apply(
    schema: dict | None,
    live: dict | None,
    config: dict,
    *,
    manager: str,
    force: bool,
    now: str,
    api_version: str,
    subresource: str = "",
    ignore: Iterable[str] = (),
) -> dict:
    """Server-side apply of ``config`` by ``manager`` onto ``live`` (None when creating).

    Returns a new object (sharing nothing with the inputs) with its ``metadata.managedFields``.
    Maps merge, atomic lists and maps are replaced, sets are unions, map-lists merge item by item;
    what ``manager`` applied before and no longer applies is removed unless another manager owns
    it. Raises :class:`Conflict` (409) when a field another manager owns would change, unless
    ``force`` (then it becomes ``manager``'s); 400 when ``config`` carries managedFields; 500 with
    kube's wording when a list cannot be keyed (a duplicate or missing key).
    """
    ignore = tuple(ignore)
    meta = config.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise errors.bad_request("metadata.managedFields must be nil")
    root = root_type(schema)
    base = _without_managed_fields(live) if live is not None else _empty_like(config)
    try:
        applied = object_field_set(root, config, ignore, strict=True)
    except TypedError as exc:
        raise _typed_failure("patch", config, exc) from None
    managers = _stored_managers(live)
    entry = Entry(manager, APPLY, api_version, subresource, None, {})
    request = _Apply(root, base, config, applied, entry, ignore, now)
    request.creating = live is None
    try:
        if not managers and live is not None:
            managers = _before_first_apply(root, base, api_version, subresource, now, ignore)
        obj, managers = _apply_resolving_last_applied(request, managers, force=force)
    except TypedError as exc:
        raise _typed_failure("live", base, exc) from None
    result = copy_json(obj)
    if manager == "kubectl" and _annotation(result, LAST_APPLIED):
        result["metadata"]["annotations"][LAST_APPLIED] = _last_applied(config)
    encoded = entries.encode(managers)
    metadata = result.setdefault("metadata", {})
    if encoded:
        metadata["managedFields"] = copy_json(encoded)  # unchanged entries are the live object's
    else:
        metadata.pop("managedFields", None)
    return result


# -- apply ------------------------------------------------------------------------------------


class _Apply:
    """One apply request: structured-merge-diff's ``Updater.Apply`` for one manager."""

    def __init__(self, root: TypeNode, live: dict, config: dict, applied: dict, entry: Entry,
                 ignore: tuple, now: str) -> None:  # fmt: skip
        self.root, self.live, self.config, self.applied = root, live, config, applied
        self.entry, self.ignore, self.now = entry, ignore, now
        self.creating = False

    def run(self, managers: Managers, *, force: bool) -> tuple[dict, Managers]:
        key = self.entry.key
        merged = merge(self.root, self.live, self.config)
        last = managers.get(key)
        managers = dict(managers)
        managers[key] = self.entry.with_fields(self.applied).with_time(last.time if last else None)
        if last is not None and last.fields:
            merged = self._prune(merged, managers, last.fields)
        added, modified, removed = compare_objects(self.root, self.live, merged, self.ignore)
        changed = union(modified, added)
        found = _conflicts(managers, changed, skip=key)
        if found and not force:
            raise _Conflicts(found)
        managers = _disown(managers, union(changed, removed), keep=key)
        # Creating, there is no live object to keep even when no tracked field changed (an object
        # of only a name): the merged one is the object.
        unchanged = not (added or modified or removed) and not self.creating
        if not managers[key].fields:
            del managers[key]
        elif not unchanged:
            managers[key] = managers[key].with_time(self.now)
        return (self.live if unchanged else merged), managers

    def _prune(self, merged: dict, managers: Managers, last: dict) -> dict:
        """Remove what the manager applied last time and not this time, unless someone owns it
        (update.go's prune, addBackOwnedItems and addBackDanglingItems)."""
        root, ignore = self.root, self.ignore
        owned: dict = {}
        for entry in managers.values():
            owned = union(owned, entry.fields)
        merged_set = object_field_set(root, merged, ignore)
        pruned = remove_object_items(root, merged, last)
        unowned = difference(merged_set, union(object_field_set(root, pruned, ignore), owned))
        pruned = remove_object_items(root, merged, unowned)
        dangling = intersection(difference(merged_set, object_field_set(root, pruned, ignore)), last)
        return remove_object_items(root, merged, dangling)


class _Conflicts(Exception):
    def __init__(self, found: list[tuple[Entry, tuple]]) -> None:
        super().__init__(found)
        self.found = found


def _conflicts(managers: Managers, changed: dict, *, skip: tuple) -> list[tuple[Entry, tuple]]:
    found = []
    for entry in sorted(managers.values(), key=Entry.identifier):
        if entry.key != skip:
            both = intersection(entry.fields, changed)
            found.extend((entry, path) for path in paths(both))
    return found


def _apply_resolving_last_applied(request: _Apply, managers: Managers, *, force: bool) -> tuple[dict, Managers]:
    """lastappliedmanager.go: ``kubectl`` may take over, without force, the conflicting fields
    that its client-side apply annotation shows it applied and that still hold those values."""
    try:
        return request.run(managers, force=force)
    except _Conflicts as conflicts:
        allowed = _vouched_by_last_applied(request) if request.entry.manager == "kubectl" else None
        if allowed is None:
            raise conflict_error(conflicts.found) from None
        remaining = [(entry, path) for entry, path in conflicts.found if not has(allowed, path)]
        if remaining:
            raise conflict_error(remaining) from None
        return request.run(managers, force=True)


def _vouched_by_last_applied(request: _Apply) -> dict | None:
    text = _annotation(request.live, LAST_APPLIED)
    try:
        last = decoding.load_embedded_json(text) if text else None
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != request.entry.api_version:
        return None
    try:
        fields = object_field_set(request.root, last, strict=True)
        added, modified, removed = compare_objects(request.root, last, request.live)
    except TypedError:
        return None
    return difference(difference(difference(fields, modified), added), removed)


def _last_applied(config: dict) -> str:
    """The annotation kubectl's server-side apply keeps up to date: the applied configuration
    without that annotation, as encoding/json writes it."""
    config = dict(config)
    meta = config.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        annotations = {k: v for k, v in meta["annotations"].items() if k != LAST_APPLIED}
        config["metadata"] = dict(meta, annotations=annotations)
    return go_json(config) + "\n"


def _before_first_apply(
    root: TypeNode, live: dict, api_version: str, subresource: str, now: str, ignore: tuple
) -> Managers:
    """An object nobody tracked yet: its fields first become ``before-first-apply``'s."""
    added, _, _ = compare_objects(root, {}, live, ignore)
    if not added:
        return {}
    entry = Entry(BEFORE_FIRST_APPLY, UPDATE, api_version, subresource, now, added)
    return {entry.key: entry}


# -- shared -----------------------------------------------------------------------------------


def _within_own_fields(managers: Managers, key: Key, changed: dict) -> bool:
    """Whether ``changed`` lies within the fields of ``key``'s entry and outside every other
    (non-empty) entry's: then disowning it and giving it back to ``key`` changes no entry's fields."""
    mine = managers.get(key)
    if mine is None or not covers(mine.fields, changed):
        return False
    for entry in managers.values():
        fields = entry.fields
        if entry is not mine and not (fields and (fields.keys().isdisjoint(changed) or difference(fields, changed) is fields)):
            return False
    return True


def _disown(managers: Managers, fields: dict, *, keep: tuple | None) -> Managers:
    """Every entry but ``keep`` without ``fields``; entries left empty go."""
    out = {}
    for key, entry in managers.items():
        if key != keep:
            entry = entry.with_fields(difference(entry.fields, fields))
            if not entry.fields:
                continue
        out[key] = entry
    return out


def _live_or_new(old: dict | None, new: dict, *, subresource: str) -> tuple[Managers, list | None]:
    """decodeLiveOrNew: the entries to start from and, when they are the stored ones, the stored list."""
    stored = _managed_fields(old)
    if not subresource:
        sent = _managed_fields(new)
        if _is_reset(sent):
            return {}, None
        if sent is not None and sent is not stored and sent != stored:
            try:
                managers = entries.decode(sent, trusted=False)
            except DecodeError:
                managers = {}
            if managers:
                return managers, None
    try:
        return entries.decode(stored, trusted=True), stored
    except DecodeError:
        return {}, None


def _stored_managers(live: dict | None) -> Managers:
    try:
        return entries.decode(_managed_fields(live), trusted=True)
    except DecodeError as exc:
        raise errors.StatusError(500, "", f"failed to decode managed fields: {exc}") from None


def _is_reset(sent: Any) -> bool:
    """A non-nil empty list, or one empty entry, asks for managedFields to be reset."""
    if sent == []:
        return True
    return isinstance(sent, list) and len(sent) == 1 and isinstance(sent[0], dict) and not any(sent[0].values())


def _managed_fields(obj: dict | None) -> Any:
    meta = obj.get("metadata") if obj else None
    return meta.get("managedFields") if isinstance(meta, dict) else None


def _annotation(obj: dict, name: str) -> str:
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    value = annotations.get(name) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else ""


def _without_managed_fields(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    return dict(obj, metadata={k: v for k, v in meta.items() if k != "managedFields"})


def _empty_like(config: dict) -> dict:
    """What kube merges a creating apply into: a new, empty object of the kind."""
    return {key: config[key] for key in ("apiVersion", "kind") if key in config}


def _typed_failure(what: str, obj: dict, exc: TypedError) -> errors.StatusError:
    """The 500 kube-apiserver answers when an object cannot be typed (not a metav1.Status: no reason)."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
    where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {group}/{version}, Kind={obj.get('kind') or ''}"
    return errors.StatusError(500, "", f"failed to create typed {what} object ({where}): {exc}")
