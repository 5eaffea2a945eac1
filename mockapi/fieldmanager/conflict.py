"""The 409 an apply gets when it would change fields other managers own, worded as kube-apiserver
words it (apimachinery ``util/managedfields/internal/conflict.go``, ``errors.NewApplyConflict``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mockapi import errors
from mockapi.fieldmanager.fieldset import Path, path_string
from mockapi.fieldmanager.managed import Entry
from mockapi.schema.goformat import go_quote


@dataclass
class Conflict(errors.StatusError):
    """409 Conflict with a ``FieldManagerConflict`` cause per field; ``conflicts`` holds the
    (manager, field path) pairs, e.g. ``("kubectl-client-side-apply", ".spec.driver")``."""

    conflicts: list[tuple[str, str]] = field(default_factory=list)


def conflict_error(found: list[tuple[Entry, Path]]) -> Conflict:
    """The error for conflicts in the order structured-merge-diff lists them (manager, then path)."""
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {describe(entry)}", "field": path_string(path)}
        for entry, path in found
    ]
    pairs = [(entry.manager, path_string(path)) for entry, path in found]
    return Conflict(409, "Conflict", _message(found), {"causes": causes}, conflicts=pairs)


def _message(found: list[tuple[Entry, Path]]) -> str:
    if len(found) == 1:
        entry, path = found[0]
        return f"Apply failed with 1 conflict: conflict with {describe(entry)}: {path_string(path)}"
    by_manager: dict[str, tuple[Entry, list[str]]] = {}
    for entry, path in found:
        by_manager.setdefault(entry.identifier(), (entry, []))[1].append(path_string(path))
    lines = []
    for identifier in sorted(by_manager):
        entry, paths = by_manager[identifier]
        lines.append(f"conflicts with {describe(entry)}:")
        lines.extend(f"- {path}" for path in paths)
    return f"Apply failed with {len(found)} conflicts: " + "\n".join(lines)


def describe(entry: Entry) -> str:
    """printManager: ``"kubectl"``, ``"kube-controller-manager" using apps/v1``,
    ``"kubelet" with subresource "status" using v1``."""
    text = go_quote(entry.manager)
    if entry.subresource:
        text += f" with subresource {go_quote(entry.subresource)}"
    if not entry.applied:
        text += f" using {entry.api_version}"
    return text
