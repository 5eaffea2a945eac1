"""Parse a request once into a :class:`RequestInfo` value (kube-apiserver's ``requestinfo.go``).

URL shapes (``{g}`` group, ``{v}`` version, ``{ns}`` namespace, ``{r}`` resource = plural)::

    /api                                          discovery: core API versions
    /api/v1                                       discovery: core resources
    /apis                                         discovery: API groups
    /apis/{g}                                     discovery: one group
    /apis/{g}/{v}                                 discovery: a group version's resources
    /api/v1/{r}                                   list, watch, create, deletecollection (cluster-scoped r, or all namespaces)
    /api/v1/{r}/{name}                            get, update, patch, delete
    /api/v1/{r}/{name}/{subresource}              e.g. status
    /api/v1/namespaces/{ns}/{r}                   list, watch, create, deletecollection in one namespace
    /api/v1/namespaces/{ns}/{r}/{name}[/{sub}]    one namespaced object [subresource]
    /api/v1/namespaces/{ns}                       the Namespace object itself
    /api/v1/namespaces/{ns}/status|finalize       a Namespace subresource (not a resource named "status")
    /apis/{g}/{v}/...                             the same shapes for a named group
    /api/v1/watch/..., /apis/{g}/{v}/watch/...    the deprecated watch prefix: verb watch

The verb is the Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection
(GET on a collection is list, or watch with ``?watch=true``; DELETE on a collection is
deletecollection). Query parameters are parsed once into ``query`` (first value wins).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from mockapi.wire import parse_bool

NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(slots=True)
class RequestInfo:
    """A parsed request. Treat it as immutable: parsed values are cached and shared."""

    path: str
    method: str
    is_resource_request: bool = False
    verb: str = ""
    api_prefix: str = ""  # "api" or "apis"
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    query: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def is_collection(self) -> bool:
        return self.is_resource_request and not self.name


_COLLECTION_VERBS = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
_OBJECT_VERBS = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "POST": "create"}


_CACHE: dict[tuple[str, str, bytes | str], RequestInfo] = {}
_CACHE_SIZE = 4096


def parse(method: str, path: str, query_string: bytes | str = b"") -> RequestInfo:
    """Parse, or reuse the parse of an identical request line (clients repeat theirs)."""
    key = (method, path, query_string)
    info = _CACHE.get(key)
    if info is None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        info = _CACHE[key] = _parse(method, path, query_string)
    return info


def _parse(method: str, path: str, query_string: bytes | str) -> RequestInfo:
    if isinstance(query_string, bytes):
        query_string = query_string.decode("latin-1")
    query = dict(reversed(parse_qsl(query_string, keep_blank_values=True))) if query_string else {}
    parts = [p for p in path.strip("/").split("/")] if path.strip("/") else []
    base = RequestInfo(path=path, method=method, query=query)
    if not parts or parts[0] not in ("api", "apis"):
        return base
    prefix = parts[0]
    rest = parts[1:]
    if prefix == "api":
        group = ""
        if not rest:
            return _replace(base, api_prefix=prefix)
        version, rest = rest[0], rest[1:]
    else:
        if len(rest) < 2:
            return _replace(base, api_prefix=prefix, group=rest[0] if rest else "")
        group, version, rest = rest[0], rest[1], rest[2:]
    if not rest:
        return _replace(base, api_prefix=prefix, group=group, version=version)

    watch_prefix = rest[0] == "watch"
    if watch_prefix:
        rest = rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    if not rest or len(rest) > 3:
        return _replace(base, api_prefix=prefix, group=group, version=version)
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    verb = (_OBJECT_VERBS if name else _COLLECTION_VERBS).get(method, method.lower())
    if watch_prefix or (verb in ("list", "get") and parse_bool(query.get("watch"))):
        verb = "watch"
    return RequestInfo(
        path=path,
        method=method,
        is_resource_request=True,
        verb=verb,
        api_prefix=prefix,
        group=group,
        version=version,
        namespace=namespace,
        resource=resource,
        name=name,
        subresource=subresource,
        query=query,
    )


def _replace(info: RequestInfo, **changes) -> RequestInfo:
    fields = {name: getattr(info, name) for name in info.__slots__}
    return RequestInfo(**{**fields, **changes})
