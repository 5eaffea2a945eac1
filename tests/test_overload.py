"""Overload protection in process (mockapi.http.overload): admission, the per-request deadline, Go durations."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from mockapi import errors
from mockapi.http import overload


def scope(method="GET", path="/api/v1/namespaces/default/pods", query=b"", client=("10.0.0.1", 4000)):
    return {"type": "http", "method": method, "path": path, "query_string": query, "client": client, "headers": []}


async def ok(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def answer(app, s):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app(s, receive, send)
    return sent


def status_of(sent):
    start = sent[0]
    body = orjson.loads(sent[1]["body"]) if len(sent) > 1 and sent[1]["body"].startswith(b"{") else None
    return start["status"], dict(start["headers"]), body


# ------------------------------------------------------------------ admission
def test_mutating_requests_over_their_bound_get_kubes_429_with_retry_after():
    admission = overload.Admission(overload.Limits(max_mutating_requests_inflight=2))
    held = [admission.admit(scope("POST"), ok), admission.admit(scope("DELETE"), ok)]
    rejected = admission.admit(scope("PATCH"), ok)
    code, headers, body = status_of(asyncio.run(answer(rejected, scope("PATCH"))))
    assert code == 429 and headers[b"retry-after"] == b"1"
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Too many requests, please try again later.",
                    "reason": "TooManyRequests", "details": {"retryAfterSeconds": 1}, "code": 429}  # fmt: skip
    assert admission.mutating == 2 and admission.admit(scope("GET"), ok) is not ok  # reads have their own bound
    asyncio.run(answer(held[0], scope("POST")))
    assert admission.mutating == 1
    assert isinstance(admission.admit(scope("PUT"), ok), overload.Counted)


def test_read_only_requests_over_their_bound_get_429_and_the_slot_comes_back_when_they_end():
    admission = overload.Admission(overload.Limits(max_requests_inflight=1))
    first = admission.admit(scope(), ok)
    assert status_of(asyncio.run(answer(admission.admit(scope(), ok), scope())))[0] == 429
    asyncio.run(answer(first, scope()))
    assert admission.readonly == 0
    assert status_of(asyncio.run(answer(admission.admit(scope(), ok), scope())))[0] == 200


def test_a_failing_request_gives_its_slot_back():
    admission = overload.Admission(overload.Limits(max_requests_inflight=1))

    async def boom(scope, receive, send):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        asyncio.run(answer(admission.admit(scope(), boom), scope()))
    assert admission.readonly == 0


def test_watches_are_not_counted_in_flight_but_bounded_per_client_and_in_total():
    admission = overload.Admission(overload.Limits(max_requests_inflight=1, max_watchers=3, max_watchers_per_client=2))
    watch = scope(query=b"watch=true")
    mine = [admission.admit(watch, ok), admission.admit(scope(path="/api/v1/watch/namespaces/default/pods"), ok)]
    assert admission.readonly == 0 and admission.watchers == 2
    code, headers, body = status_of(asyncio.run(answer(admission.admit(watch, ok), watch)))
    assert code == 429 and headers[b"retry-after"] == b"1" and "--max-watchers-per-client" in body["message"]
    other = scope(query=b"watch=1", client=("10.0.0.2", 1))
    admission.admit(other, ok)
    code, _, body = status_of(asyncio.run(answer(admission.admit(scope(query=b"watch=1", client=("10.0.0.3", 1)), ok), other)))
    assert code == 429 and "--max-watchers)" in body["message"]
    asyncio.run(answer(mine[0], watch))
    assert admission.watchers == 2 and admission.watchers_by_client == {"10.0.0.1": 1, "10.0.0.2": 1}
    assert admission.admit(scope(), ok) is not ok  # a GET that is not a watch is counted as read-only


def test_health_checks_are_never_throttled_and_readyz_fails_while_draining():
    admission = overload.Admission(overload.Limits(max_requests_inflight=1))
    admission.admit(scope(), ok)
    for path in ("/livez", "/readyz", "/healthz", "/readyz/ping"):
        sent = asyncio.run(answer(admission.admit(scope(path=path), ok), scope(path=path)))
        assert sent[0]["status"] == 200 and sent[1]["body"] == b"ok"  # answered at once, bytes as mockapi.http.health's
    assert admission.admit(scope("POST", path="/livez"), ok) is ok  # not a health check: the app says 405
    admission.draining = True
    assert asyncio.run(answer(admission.admit(scope(path="/livez"), ok), scope(path="/livez")))[0]["status"] == 200
    sent = asyncio.run(answer(admission.admit(scope(path="/readyz"), ok), scope(path="/readyz")))
    assert sent[0]["status"] == 503 and b"[-]shutdown failed: reason withheld" in sent[1]["body"]
    assert admission.readonly == 1


def test_an_answer_renders_as_http_bytes_for_the_connection_protocol():
    too_many = overload.Admission(overload.Limits(max_requests_inflight=0, max_mutating_requests_inflight=1))
    too_many.admit(scope("POST"), ok)
    raw = too_many.admit(scope("POST"), ok).http_bytes(b"HTTP/1.1 429 Too Many Requests\r\n", [(b"server", b"x")], keep_alive=False)
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b"\r\n") == [b"HTTP/1.1 429 Too Many Requests", b"server: x", b"content-type: application/json", b"retry-after: 1", f"content-length: {len(body)}".encode(), b"connection: close"]
    assert orjson.loads(body)["reason"] == "TooManyRequests"


def test_a_bound_of_zero_is_no_bound():
    admission = overload.Admission(overload.Limits(max_requests_inflight=0, max_mutating_requests_inflight=0, max_watchers=0, max_watchers_per_client=0))
    for _ in range(1000):
        assert admission.admit(scope("POST"), ok) is not admission._too_many
        assert admission.admit(scope(query=b"watch=true"), ok).__class__ is overload._Watch


# ------------------------------------------------------------------ the deadline
@pytest.mark.parametrize("text, seconds", [("0", 0.0), ("1ms", 0.001), ("1m30s", 90.0), ("1.5h", 5400.0), ("-2s", -2.0), ("300us", 0.0003), ("2h45m", 9900.0)])
def test_go_durations_parse_as_go_does(text, seconds):
    assert overload.parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text, message", [("5", 'time: missing unit in duration "5"'), ("abc", 'time: invalid duration "abc"'), ("1x", 'time: invalid duration "1x"'), ("", 'time: invalid duration ""'), ("s", 'time: invalid duration "s"')])
def test_bad_go_durations_raise_gos_message(text, message):
    with pytest.raises(ValueError, match=message):
        overload.parse_go_duration(text)


def test_the_requested_timeout_is_capped_by_the_server_default_as_kube_does():
    assert overload.requested_timeout(b"", 60) == 60
    assert overload.requested_timeout(b"timeout=10s", 60) == 10
    assert overload.requested_timeout(b"timeout=2m", 60) == 60
    assert overload.requested_timeout(b"timeout=0s", 60) == 60
    assert overload.requested_timeout(b"timeoutSeconds=5", 60) == 60
    with pytest.raises(errors.StatusError) as caught:
        overload.requested_timeout(b"timeout=soon", 60)
    assert caught.value.code == 400
    assert caught.value.message == 'invalid timeout specified in the request URL - time: invalid duration "soon"'


KUBE_504 = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Timeout: request did not complete within requested timeout - context deadline exceeded",
            "reason": "Timeout", "details": {}, "code": 504}  # fmt: skip


class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = self.aborted = False

    def get_extra_info(self, name, default=None):
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 80)}.get(name, default)

    def write(self, data) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def pause_reading(self) -> None:
        pass

    resume_reading = pause_reading


def connection(app, reset_contextvars=False, **limits):
    """The guarded protocol on a fake transport, in the running loop (what `mockapi serve` runs)."""
    import uvicorn
    from uvicorn.server import ServerState

    from mockapi.http import connections

    guard = connections.Guard(overload.Admission(overload.Limits(**limits)), max_connections=0, read_header_timeout=0, max_header_bytes=1 << 20, write_stall_timeout=0)
    protocol_class = connections.protocol_class(guard)
    config = uvicorn.Config(app, http=protocol_class, lifespan="off", log_config=None, proxy_headers=False)
    config.load()
    config.reset_contextvars = reset_contextvars
    state = ServerState()
    protocol = protocol_class(config=config, server_state=state, app_state={}, _loop=asyncio.get_running_loop())
    transport = Transport()
    protocol.connection_made(transport)
    return protocol, transport, state


async def settle(state, seconds=2.0):
    end = asyncio.get_running_loop().time() + seconds
    while state.tasks and asyncio.get_running_loop().time() < end:
        await asyncio.sleep(0.01)
    return not state.tasks


def test_a_request_still_waiting_for_its_body_at_its_deadline_gets_kubes_504_and_ends():
    async def reads_body(scope, receive, send):
        from mockapi.http import bodies

        await bodies.read(receive, limit=1000, declared_length=100)
        await ok(scope, receive, send)

    async def run():
        protocol, transport, state = connection(reads_body)
        protocol.data_received(b"POST /api/v1/namespaces/default/configmaps?timeout=50ms HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        assert await settle(state)  # the handler saw its client gone and ended
        return transport

    transport = asyncio.run(run())
    head, _, body = transport.written.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 504 ") and b"connection: close" in head
    assert orjson.loads(body) == KUBE_504 and transport.closed


def test_a_response_cut_by_the_deadline_aborts_its_connection():
    async def half(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await receive()  # the (empty) request body
        await receive()  # waits until the client is gone

    async def run():
        protocol, transport, state = connection(half)
        protocol.data_received(b"GET /api/v1/namespaces?timeout=50ms HTTP/1.1\r\nHost: x\r\n\r\n")
        assert await settle(state)
        return transport

    transport = asyncio.run(run())
    assert transport.aborted and transport.written.startswith(b"HTTP/1.1 200 ")


@pytest.mark.parametrize("reset_contextvars", [False, True])  # uvicorn's task on the app itself, or the wrapper
def test_a_plain_get_past_the_request_timeout_gets_504_and_its_slot_back(reset_contextvars):
    async def slow(scope, receive, send):
        await receive()
        await receive()  # waits until the client is gone

    async def run():
        protocol, transport, state = connection(slow, reset_contextvars=reset_contextvars, request_timeout=0.05)
        protocol.data_received(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n\r\n")
        assert protocol.admission.readonly == 1
        assert await settle(state)
        return protocol, transport

    protocol, transport = asyncio.run(run())
    assert transport.written.startswith(b"HTTP/1.1 504 ") and protocol.admission.readonly == 0


def test_watches_have_no_deadline_and_a_quick_request_is_untouched():
    async def slow(scope, receive, send):
        await asyncio.sleep(0.2)
        await ok(scope, receive, send)

    async def run(path):
        protocol, transport, state = connection(slow, request_timeout=0.05)
        protocol.data_received(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert await settle(state)
        return transport.written

    assert asyncio.run(run(b"/api/v1/pods?watch=true")).startswith(b"HTTP/1.1 200 ")
    assert asyncio.run(run(b"/api/v1/pods")).startswith(b"HTTP/1.1 504 ")


def test_a_malformed_timeout_is_kubes_400_and_takes_no_slot():
    admission = overload.Admission(overload.Limits())
    refused = admission.admit(scope(query=b"timeout=5"), ok)
    code, _, body = status_of(asyncio.run(answer(refused, scope())))
    assert code == 400 and body["message"] == 'invalid timeout specified in the request URL - time: missing unit in duration "5"'
    assert admission.readonly == 0


def test_the_deadline_is_kept_on_a_second_event_loop_too():
    async def slow(scope, receive, send):
        await receive()

    admission = overload.Admission(overload.Limits(request_timeout=0.05))

    async def once():
        running = []
        request = admission.admit(scope(), slow)
        admission.track(request, asyncio.get_running_loop(), lambda: running.append("timed out"))
        await asyncio.sleep(0.2)
        return running

    for _ in range(2):  # an admission may outlive the loop it first ran on (tests that call asyncio.run repeatedly)
        assert asyncio.run(once()) == ["timed out"]
