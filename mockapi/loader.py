"""Apply manifests (files or directories of multi-document YAML) through the registry.

Used by ``mockapi serve --load`` and the control API: each document is created, or merged into
the existing object (like a server-side apply by field manager ``mockapi-load``), with strict
field validation so typos are caught. A failure names the file and the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from mockapi import errors, gvk
from mockapi import decoding
from mockapi.registry import rest
from mockapi.registry.options import WriteOptions

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
FIELD_MANAGER = "mockapi-load"


class LoadError(Exception):
    """A manifest could not be applied: says which file, which document and why."""


@dataclass
class Loaded:
    created: int = 0
    configured: int = 0
    unchanged: int = 0

    @property
    def total(self) -> int:
        return self.created + self.configured + self.unchanged


def manifest_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Files in the order given; a directory contributes its manifests in lexical order (like kubectl -f DIR)."""
    for path in paths:
        path = Path(path)
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.is_file() and p.suffix in MANIFEST_SUFFIXES)
        elif path.is_file():
            yield path
        else:
            raise LoadError(f"{path}: no such file or directory")


def documents(text: bytes | str, *, source: str) -> list[dict]:
    try:
        docs = decoding.load_yaml_documents(text)
    except errors.StatusError as exc:
        raise LoadError(f"{source}: {exc.message}") from None
    objects = []
    for index, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        if isinstance(doc, dict) and doc.get("kind", "").endswith("List") and isinstance(doc.get("items"), list):
            objects.extend(doc["items"])
        elif isinstance(doc, dict):
            objects.append(doc)
        else:
            raise LoadError(f"{source}, document {index}: expected a mapping with apiVersion and kind, got {type(doc).__name__}")
    return objects


def apply(registry: rest.Registry, obj: dict, *, source: str = "<input>", dry_run: bool = False) -> str:
    """Create or merge one object; returns "created", "configured" or "unchanged"."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        raise LoadError(f"{source}: apiVersion and kind are required")
    group, version = gvk.parse_api_version(api_version)
    rt = registry.types.by_kind(group, version, kind)
    if rt is None:
        raise LoadError(f'{source}: no matches for kind "{kind}" in version "{api_version}" (is its CustomResourceDefinition loaded first?)')
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    namespace = meta.get("namespace") or ("default" if rt.namespaced else "")
    name = meta.get("name") or ""
    opts = WriteOptions(field_validation="Strict", field_manager=FIELD_MANAGER, dry_run=dry_run, force=True)
    try:
        if not name:  # generateName: nothing to apply to
            registry.create(rt, namespace, obj, opts)
            return "created"
        current = registry.store.get(rt.group_resource, namespace if rt.namespaced else "", name)
        written = registry.patch(rt, namespace, name, rest.APPLY_PATCH, obj, opts)
        if current is None:
            return "created"
        return "unchanged" if written.raw == current.raw else "configured"
    except errors.StatusError as exc:
        raise LoadError(f"{source} ({kind} {name or '<generateName>'}): {exc.message}") from None


def load_paths(registry: rest.Registry, paths: Iterable[Path]) -> Loaded:
    loaded = Loaded()
    for path in manifest_files(paths):
        for index, obj in enumerate(documents(path.read_bytes(), source=str(path)), start=1):
            outcome = apply(registry, obj, source=f"{path}, document {index}")
            setattr(loaded, outcome, getattr(loaded, outcome) + 1)
    return loaded


def load_text(registry: rest.Registry, text: bytes | str, *, source: str = "<body>") -> Loaded:
    loaded = Loaded()
    for index, obj in enumerate(documents(text, source=source), start=1):
        outcome = apply(registry, obj, source=f"{source}, document {index}")
        setattr(loaded, outcome, getattr(loaded, outcome) + 1)
    return loaded
