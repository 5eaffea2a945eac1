"""One error type for the whole server, with constructors named after metav1.Status reasons.

Any layer raises ``errors.not_found(gr, name)`` and friends; the HTTP edge turns the exception
into a ``metav1.Status`` body in exactly one place (:func:`to_status`). Messages follow
kube-apiserver's wording (``k8s.io/apimachinery/pkg/api/errors``) because clients print them
verbatim and users search for them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable


@dataclass(frozen=True)
class GroupResource:
    """The (group, plural) pair kube-apiserver uses to name a resource in messages."""

    group: str
    resource: str

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


# field.ErrorType → the cause reason on the wire and the message prefix.
_CAUSE = {
    "required": ("FieldValueRequired", "Required value"),
    "invalid": ("FieldValueInvalid", "Invalid value"),
    "not_supported": ("FieldValueNotSupported", "Unsupported value"),
    "duplicate": ("FieldValueDuplicate", "Duplicate value"),
    "not_found": ("FieldValueNotFound", "Not found"),
    "forbidden": ("FieldValueForbidden", "Forbidden"),
    "too_long": ("FieldValueTooLong", "Too long"),
    "too_many": ("FieldValueTooMany", "Too many"),
    "type_invalid": ("FieldValueTypeInvalid", "Invalid value"),
    "internal": ("InternalError", "Internal error"),
}
_NO_VALUE = object()


@dataclass(frozen=True)
class FieldError:
    """One entry of ``details.causes``: a problem with one field (``k8s.io/.../field.Error``)."""

    type: str  # a key of _CAUSE
    field: str  # dotted path, e.g. "spec.claims[0].deviceClass"
    detail: str = ""
    value: Any = _NO_VALUE

    @property
    def reason(self) -> str:
        return _CAUSE[self.type][0]

    def body(self) -> str:
        """The message without the field path, as kube-apiserver puts it in ``causes[].message``."""
        prefix = _CAUSE[self.type][1]
        if self.value is not _NO_VALUE and self.type not in ("required", "forbidden", "too_many", "internal"):
            prefix = f"{prefix}: {_render_value(self.value)}"
        return f"{prefix}: {self.detail}" if self.detail else prefix

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def cause(self) -> dict:
        return {"reason": self.reason, "message": self.body(), "field": self.field}


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), default=str)[:256]


@dataclass
class StatusError(Exception):
    """An API error: renders as a ``metav1.Status`` with this code and reason."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)  # ListMeta, e.g. a fresh continue token on 410

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": self.metadata,
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def _details(gr: GroupResource | None, name: str | None, *, kind: str | None = None) -> dict:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if gr is not None:
        if gr.group:
            details["group"] = gr.group
        details["kind"] = kind or gr.resource
    return details


def not_found(gr: GroupResource, name: str) -> StatusError:
    return StatusError(404, "NotFound", f'{gr} "{name}" not found', _details(gr, name))


def already_exists(gr: GroupResource, name: str) -> StatusError:
    return StatusError(409, "AlreadyExists", f'{gr} "{name}" already exists', _details(gr, name))


def conflict(gr: GroupResource, name: str, why: str = "") -> StatusError:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return StatusError(409, "Conflict", f'Operation cannot be fulfilled on {gr} "{name}": {why}', _details(gr, name))


def invalid(kind: str, group: str, name: str, causes: Iterable[FieldError]) -> StatusError:
    """422 Invalid, worded as ``DevicePool.devmgmtproto.k8s.io "x" is invalid: <causes>``."""
    causes = list(causes)
    qualified = f"{kind}.{group}" if group else kind
    if len(causes) == 1:
        summary = str(causes[0])
    else:
        summary = "[" + ", ".join(str(c) for c in causes) + "]"
    details = {"name": name, "kind": kind, "causes": [c.cause() for c in causes]}
    if group:
        details["group"] = group
    if not name:
        details.pop("name")
    return StatusError(422, "Invalid", f'{qualified} "{name}" is invalid: {summary}', details)


def unprocessable(message: str) -> StatusError:
    """422 Invalid without causes: kubectl prints ``The request is invalid: <message>``."""
    return StatusError(422, "Invalid", message)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(gr: GroupResource, name: str, why: str) -> StatusError:
    subject = f'{gr} "{name}"' if name else str(gr)
    return StatusError(403, "Forbidden", f"{subject} is forbidden: {why}", _details(gr, name))


def method_not_supported(gr: GroupResource | None, action: str) -> StatusError:
    target = f" on {gr}" if gr is not None else ""
    return StatusError(405, "MethodNotAllowed", f"{action} is not supported{target}", _details(gr, None))


def method_not_allowed() -> StatusError:
    """405 for a method the URL has no route for (POST to a named object, PATCH on a collection), as
    kube-apiserver answers it: go-restful's 405 through ``NewGenericServerResponse``."""
    cause = {"reason": "UnexpectedServerResponse", "message": "405: Method Not Allowed"}
    return StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {"causes": [cause]})


def not_acceptable(message: str) -> StatusError:
    return StatusError(406, "NotAcceptable", message)


def unsupported_media_type(content_type: str, accepted: Iterable[str]) -> StatusError:
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
        {"causes": [{"reason": "UnexpectedHeader", "message": f"unsupported media type {content_type!r}", "field": "Content-Type"}]},
    )


def expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def gone(message: str) -> StatusError:
    return StatusError(410, "Gone", message)


def too_old_resource_version(requested: int, oldest: int) -> StatusError:
    return expired(f"too old resource version: {requested} ({oldest})")


def request_entity_too_large(limit: int) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def too_many_requests(message: str, retry_after: int = 1) -> StatusError:
    return StatusError(
        429, "TooManyRequests", message, {"retryAfterSeconds": retry_after}, {"Retry-After": str(retry_after)}
    )


def internal(message: str) -> StatusError:
    return StatusError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})


def to_status(exc: BaseException) -> StatusError:
    """Any exception → the StatusError to send. Unknown exceptions become a 500 (the caller logs them)."""
    if isinstance(exc, StatusError):
        return exc
    return internal(f"{type(exc).__name__}: {exc}")
