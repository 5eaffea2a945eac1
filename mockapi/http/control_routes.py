"""The control endpoints' routes (:mod:`mockapi.http.control` says what they do), mounted on the
cold endpoints' FastAPI app when it is built (``mockapi.app`` imports this module then): it imports
starlette, which start-up does not need (docs/startup.md), and FastAPI resolves the handlers'
annotations (``Request``, ``Response``) in this module's globals.
"""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from mockapi import decoding, errors
from mockapi.http import bodies, responses
from mockapi.http.control import ENDPOINTS, JSON, PREFIX, YAML, ControlPlane, kubeconfig
from mockapi.wire import strict_query_bool


def mount(app, control: ControlPlane) -> None:
    """Add the control routes to the FastAPI app of the cold endpoints."""

    def json(value, status: int = 200) -> Response:
        return Response(orjson.dumps(value), status_code=status, media_type=JSON)

    async def status_error(request: Request, exc: errors.StatusError) -> Response:
        return responses.error_response(exc)

    app.add_exception_handler(errors.StatusError, status_error)

    @app.get(PREFIX)
    async def index() -> Response:
        return json({"kind": "MockAPIControl", "endpoints": ENDPOINTS})

    @app.post(f"{PREFIX}/reset")
    async def reset(request: Request) -> Response:
        query = request.query_params
        keep_crds = strict_query_bool(query, "keepCRDs", default=True)
        keep_namespaces = strict_query_bool(query, "keepNamespaces", default=False)
        return json(control.reset(keep_crds=keep_crds, keep_namespaces=keep_namespaces))

    @app.post(f"{PREFIX}/load")
    async def load(request: Request) -> Response:
        loaded = control.load(await _read(request, control), request.query_params.get("source") or "request body")
        return json({"created": loaded.created, "configured": loaded.configured, "unchanged": loaded.unchanged})

    @app.get(f"{PREFIX}/snapshot")
    async def snapshot(request: Request) -> Response:
        return Response(control.snapshot(namespace=request.query_params.get("namespace", "")), media_type=YAML)

    @app.get(f"{PREFIX}/requests")
    async def requests(request: Request) -> Response:
        return json({"kind": "RequestList", "items": control.requests.query(dict(request.query_params))})

    @app.delete(f"{PREFIX}/requests")
    async def forget_requests() -> Response:
        return json({"deleted": control.requests.clear()})

    @app.get(f"{PREFIX}/kubeconfig")
    async def get_kubeconfig(request: Request) -> Response:
        query = request.query_params
        token = control.mint(query["user"], query.getlist("group"), query.get("uid", "")) if "user" in query else query.get("token")
        return Response(kubeconfig(str(request.base_url).rstrip("/"), ca=control.ca, token=token, certificate=control.admin_certificate), media_type=YAML)

    @app.post(f"{PREFIX}/users")
    async def mint_user(request: Request) -> Response:
        body = await _json_body(request, control)
        name = body.get("name")
        token = control.mint(name, body.get("groups") or [], body.get("uid") or "")
        return json({"kind": "User", "name": name, "groups": body.get("groups") or [], "token": token}, 201)

    @app.get(f"{PREFIX}/audit")
    async def audit(request: Request) -> Response:
        limit = request.query_params.get("limit", "")
        if limit and not limit.isdigit():
            raise errors.bad_request(f"limit must be a non-negative integer, not {limit!r}")
        return json({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": _audit(control).events(limit=int(limit) if limit else None)})

    @app.delete(f"{PREFIX}/audit")
    async def forget_audit() -> Response:
        return json({"deleted": _audit(control).clear()})

    @app.get(f"{PREFIX}/allocation")
    async def allocation() -> Response:
        return json(_gate(control).describe())

    @app.put(f"{PREFIX}/allocation")
    async def configure_allocation(request: Request) -> Response:
        body = await _json_body(request, control)
        gate = _gate(control)
        try:
            gate.configure(mode=body.get("mode"), delay=body.get("delaySeconds"), jitter=body.get("jitterSeconds"))
        except (TypeError, ValueError) as exc:
            raise errors.bad_request(str(exc)) from None
        return json(gate.describe())

    @app.post(f"{PREFIX}/allocation/step")
    async def step(request: Request) -> Response:
        body = await _json_body(request, control)
        gate = _gate(control)
        stepped = gate.step(_claim_key(gate, body), all=bool(body.get("all")))
        return json({"stepped": [key.to_dict() for key in stepped], **gate.describe()})

    _mount_faults(app, control, json)


def _mount_faults(app, control: ControlPlane, json) -> None:
    faults = control.faults

    @app.get(f"{PREFIX}/faults")
    async def list_faults() -> Response:
        return json({"kind": "FaultList", "items": [rule.to_dict() for rule in faults.rules.values()]})

    @app.post(f"{PREFIX}/faults")
    async def add_fault(request: Request) -> Response:
        return json(faults.add(await _json_body(request, control)).to_dict(), 201)

    @app.delete(f"{PREFIX}/faults")
    async def clear_faults() -> Response:
        return json({"deleted": faults.clear()})

    # Before /faults/{id}: these two are actions, not rules.
    @app.post(f"{PREFIX}/faults/close-watches")
    async def close_watches() -> Response:
        return json({"closed": control.close_watches()})

    @app.post(f"{PREFIX}/faults/compact")
    async def compact() -> Response:
        return json({"oldestResourceVersion": str(control.compact())})

    @app.get(f"{PREFIX}/faults/{{rule_id}}")
    async def get_fault(rule_id: str) -> Response:
        return json(faults.get(rule_id).to_dict())

    @app.delete(f"{PREFIX}/faults/{{rule_id}}")
    async def remove_fault(rule_id: str) -> Response:
        return json(faults.remove(rule_id).to_dict())


async def _read(request: Request, control: ControlPlane) -> bytes:
    """The request's body, refused with 413 past --max-body before it is read whole."""
    declared = request.headers.get("content-length", "")
    return await bodies.read(request.receive, limit=control.max_body, declared_length=int(declared) if declared.isdigit() else None)


async def _json_body(request, control: ControlPlane) -> dict:
    raw = await _read(request, control)
    if not raw.strip():
        return {}
    body = decoding.decode_json(raw)
    if not isinstance(body, dict):
        raise errors.bad_request("the body must be a JSON object")
    return body


def _audit(control: ControlPlane):
    if control.audit is None:
        raise errors.StatusError(404, "NotFound", "the audit log is off in this server (see `mockapi serve --audit-log-path`)", {})
    return control.audit


def _gate(control: ControlPlane):
    if control.gate is None:
        raise errors.StatusError(404, "NotFound", "this server has no allocation gate", {})
    return control.gate


def _claim_key(gate, body: dict):
    if not body.get("name"):
        if body.get("namespace"):
            raise errors.bad_request("name is required when namespace is given")
        return None
    resource = body.get("resource") or "deviceclaims"
    try:
        return gate.key(f"{resource}/{body.get('namespace') or 'default'}/{body['name']}")
    except ValueError as exc:
        raise errors.bad_request(str(exc)) from None
