"""Content negotiation for ``meta.k8s.io`` renderings: Table (``kubectl get``) and metadata only.

kubectl asks ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io, ...``. The reply is a
``Table`` whose ``rows[].object`` follows ``includeObject`` (``Metadata`` by default: a
PartialObjectMetadata; ``Object``: the whole object, which ``--sort-by`` needs; ``None``). In a
watch each event's object is a one-row Table. ``as=PartialObjectMetadata`` / ``...List`` give
controllers metadata only.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Iterable

import orjson

from mockapi import errors
from mockapi.gvk import ResourceType
from mockapi.watchwire import event_line

TABLE = "Table"
METADATA = "PartialObjectMetadata"
METADATA_LIST = "PartialObjectMetadataList"
CONTENT_TYPES = {
    TABLE: b"application/json;as=Table;v=v1;g=meta.k8s.io",
    METADATA: b"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    METADATA_LIST: b"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
}
INCLUDE_OBJECT = ("None", "Metadata", "Object")
# Media types served as JSON: what kube-apiserver's negotiation accepts (YAML and protobuf replies are
# JSON here, which every client reads), and the wildcards.
PLAIN_TYPES = frozenset({"application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "*/*", "application/*"})
ACCEPTED = "application/json, application/yaml, application/vnd.kubernetes.protobuf"


@lru_cache(maxsize=256)
def negotiate(accept: str) -> str | None:
    """The meta.k8s.io rendering the client prefers, or None for the plain object (JSON); 406
    NotAcceptable when no entry of a non-empty Accept can be served (``image/png``)."""
    if not accept:
        return None
    return _negotiate(accept) if len(accept) <= 512 else _negotiate.__wrapped__(accept)  # long ones not kept


@lru_cache(maxsize=64)  # clients send one Accept again and again (kubectl: two or three in all)
def _negotiate(accept: str) -> str | None:
    if not accept.strip():
        return None
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        params = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if fields[0].lower() in PLAIN_TYPES and not params.get("as"):
            return None
        if params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1") and params.get("as") in CONTENT_TYPES:
            return params["as"]
    raise errors.not_acceptable(f"only the following media types are accepted: {ACCEPTED}")


def include_object(query: dict[str, str]) -> str:
    value = query.get("includeObject") or "Metadata"
    if value not in INCLUDE_OBJECT:
        raise errors.bad_request(f'includeObject: Unsupported value: "{value}": supported values: "Metadata", "None", "Object"')
    return value


def _printers():
    """:mod:`mockapi.registry.printers`, imported by the first Table asked for (start-up does not need it)."""
    from mockapi.registry import printers

    return printers


def _metadata_object(obj: dict) -> dict:
    return {"kind": METADATA, "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def _row(obj: dict, cells, now: datetime, include: str) -> dict:
    row: dict = {"cells": cells(obj, now)}
    if include == "Object":
        row["object"] = obj
    elif include == "Metadata":
        row["object"] = _metadata_object(obj)
    return row


def table(rt: ResourceType, raws: Iterable[bytes], *, now: datetime, include: str, list_meta: dict) -> bytes:
    columns, cells = _printers().table_for(rt)
    rows = [_row(orjson.loads(raw), cells, now, include) for raw in raws]
    return orjson.dumps(
        {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": [c.definition() for c in columns], "rows": rows}
    )


def metadata_list(raws: Iterable[bytes], *, list_meta: dict) -> bytes:
    items = [_metadata_object(orjson.loads(raw)) for raw in raws]
    return orjson.dumps({"kind": METADATA_LIST, "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "items": items})


def metadata_object(raw: bytes) -> bytes:
    return orjson.dumps(_metadata_object(orjson.loads(raw)))


def watch_encoder(rt: ResourceType, rendering: str, *, include: str, clock):
    """Encodes each watch event's object in the negotiated rendering (a one-row Table, or metadata)."""
    columns, cells = _printers().table_for(rt)
    definitions = [c.definition() for c in columns]

    def encode(event_type: str, raw: bytes) -> bytes:
        obj = orjson.loads(raw)
        if event_type in ("BOOKMARK", "ERROR"):
            return event_line(event_type, raw)
        if rendering == TABLE:
            body = {
                "kind": "Table",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                "columnDefinitions": definitions,
                "rows": [_row(obj, cells, clock.now(), include)],
            }
        else:
            body = _metadata_object(obj)
        return event_line(event_type, orjson.dumps(body))

    return encode
