"""http/connections.OneWrite: a response with a body of known length leaves in one transport
write (status line, headers and body); everything else is written as uvicorn writes it."""

import asyncio
import logging

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from mockapi.http.connections import OneWrite


class Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        if data:  # (as asyncio's and uvloop's transports: an empty write is nothing)
            self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...


def cycle_on(transport: Transport, method: str = "GET", *, expect_100_continue: bool = False) -> RequestResponseCycle:
    scope = {"type": "http", "method": method, "path": "/", "http_version": "1.1", "headers": []}
    cycle = RequestResponseCycle(scope=scope, transport=transport, flow=FlowControl(transport), logger=logging.getLogger("t"),
                                 access_logger=logging.getLogger("t"), access_log=False, default_headers=[], message_event=asyncio.Event(),
                                 expect_100_continue=expect_100_continue, keep_alive=True, on_response=lambda: None)
    cycle.transport = OneWrite(transport, cycle)
    return cycle


def respond(cycle, *messages) -> None:
    async def go():
        for message in messages:
            await cycle.send(message)

    asyncio.run(go())


START = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]}


def test_headers_and_a_body_of_known_length_go_out_in_one_write():
    transport = Transport()
    respond(cycle_on(transport), START, {"type": "http.response.body", "body": b"{}"})
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"]


def test_a_chunked_answer_sends_its_headers_at_once():
    transport = Transport()
    cycle = cycle_on(transport)
    respond(cycle, {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"]
    respond(cycle, {"type": "http.response.body", "body": b"{}", "more_body": True})
    assert transport.writes[1:] == [b"2\r\n{}\r\n"]


def test_head_and_empty_answers_are_not_held():
    transport = Transport()
    respond(cycle_on(transport, "HEAD"), START, {"type": "http.response.body", "body": b""})
    empty = Transport()
    respond(cycle_on(empty), {"type": "http.response.start", "status": 204, "headers": [(b"content-length", b"0")]},
            {"type": "http.response.body", "body": b""})
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"]
    assert empty.writes == [b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n"]


def test_100_continue_goes_out_before_the_answer_and_a_close_sends_what_is_held():
    transport = Transport()
    cycle = cycle_on(transport, "POST", expect_100_continue=True)
    cycle.message_event.set()

    async def go():
        await cycle.receive()
        await cycle.send(START)

    asyncio.run(go())
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    cycle.transport.close()  # uvicorn's answer to an app that failed after starting its response
    assert transport.writes[1:] == [b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"] and transport.closed
