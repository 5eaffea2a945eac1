"""Overload protection against a real ``mockapi serve`` with tiny bounds: 429s, watcher caps, the
per-request deadline, the header limit and timeouts, and the connection bound.

Requests are held in flight honestly: a POST whose body is sent half stays in its handler (reading
the body) until the rest comes.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import pytest

pytestmark = pytest.mark.e2e

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
BOUNDS = (
    "--max-requests-inflight", "1", "--max-mutating-requests-inflight", "1", "--max-watchers", "4", "--max-watchers-per-client", "2",
    "--read-header-timeout", "0.5", "--idle-timeout", "0.5", "--max-header-bytes", "8192", "--max-connections", "40", "--request-timeout", "2",
)  # fmt: skip
TOO_MANY = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Too many requests, please try again later.",
            "reason": "TooManyRequests", "details": {"retryAfterSeconds": 1}, "code": 429}  # fmt: skip


@pytest.fixture(scope="module")
def server():
    process = subprocess.Popen([sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", *BOUNDS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        assert "serving on http://" in line, (line, process.poll())
        url = line.split("serving on ", 1)[1].split()[0]
        host, port = url.removeprefix("http://").split(":")
        yield process, url, (host, int(port))
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server[1], timeout=10) as session:
        yield session


def connect(address) -> socket.socket:
    sock = socket.create_connection(address, timeout=5)
    return sock


def half_sent_post(address, name: str, query: str = "") -> tuple[socket.socket, bytes]:
    """A create whose body is half sent: its handler waits for the rest, in flight."""
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"}}' % name.encode()
    sock = connect(address)
    head = f"POST {CONFIGMAPS}{query} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    sock.sendall(head + body[:10])
    return sock, body[10:]


def read_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next((line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), b"0"))
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def until(predicate, seconds: float = 5.0) -> None:
    end = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_a_write_over_the_mutating_bound_is_kubes_429_and_reads_are_bounded_apart(server, http):
    held, rest = half_sent_post(server[2], "held")
    fresh = {"Connection": "close"}  # a connection answered 429 is not read for a second: a new one each time
    try:
        until(lambda: http.post(CONFIGMAPS, json={"metadata": {"name": "probe"}}, headers=fresh).status_code == 429)
        response = http.post(CONFIGMAPS, json={"metadata": {"name": "second"}}, headers=fresh)
        assert response.status_code == 429 and response.headers["retry-after"] == "1"
        assert response.json() == TOO_MANY
        assert http.get(CONFIGMAPS, headers=fresh).status_code == 200  # read-only requests have their own bound
        held.sendall(rest)
        assert b" 201 " in read_response(held).split(b"\r\n")[0]
    finally:
        held.close()
    assert http.post(CONFIGMAPS, json={"metadata": {"name": "after"}}).status_code == 201


def test_after_a_429_the_connection_is_not_read_before_its_retry_after(server):
    """A client that ignores Retry-After waits in its own socket buffer, not in the event loop."""
    held, rest = half_sent_post(server[2], "held-off")
    body = b'{"metadata":{"name":"eager"}}'
    post = f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    eager = connect(server[2])
    try:
        until(lambda: eager.sendall(post) or b" 429 " in read_response(eager).split(b"\r\n")[0])
        answered = time.monotonic()
        eager.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        with connect(server[2]) as other:  # other connections are served meanwhile
            other.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert read_response(other).startswith(b"HTTP/1.1 200")
            assert time.monotonic() - answered < 0.9  # served while the eager one is still held off
        assert read_response(eager).startswith(b"HTTP/1.1 200")  # then it is read again, kept alive
        assert time.monotonic() - answered >= 0.9
        held.sendall(rest)
        assert b" 201 " in read_response(held).split(b"\r\n")[0]
    finally:
        held.close()
        eager.close()


def test_watches_are_not_counted_in_flight_but_a_client_gets_429_past_its_watcher_cap(server, http):
    watches = []
    try:
        for _ in range(2):
            sock = connect(server[2])
            sock.sendall(b"GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b" 200 " in sock.recv(4096).split(b"\r\n")[0]
            watches.append(sock)
        assert http.get("/api/v1/namespaces").status_code == 200  # the read-only bound (1) is not taken by the watches
        third = http.get("/api/v1/namespaces/default/configmaps", params={"watch": "true"})
        assert third.status_code == 429 and third.headers["retry-after"] == "1"
        assert third.json()["reason"] == "TooManyRequests" and "--max-watchers-per-client" in third.json()["message"]
    finally:
        for sock in watches:
            sock.close()
    until(lambda: http.get("/api/v1/namespaces/default/pods", params={"watch": "true", "timeoutSeconds": "1"}).status_code == 200)


def test_a_request_past_its_timeout_is_kubes_504(server):
    sock, _ = half_sent_post(server[2], "late", "?timeout=300ms")
    try:
        sock.settimeout(5)
        started = time.monotonic()
        response = read_response(sock)
        assert b" 504 " in response.split(b"\r\n")[0], response
        assert time.monotonic() - started < 2
        assert b'"reason":"Timeout"' in response and b"Timeout: request did not complete within requested timeout - context deadline exceeded" in response
    finally:
        sock.close()


def test_headers_over_the_limit_are_gos_431_and_the_connection_closes(server):
    sock = connect(server[2])
    try:
        sock.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n")
        response = read_response(sock)
        assert response.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), response
        assert response.endswith(b"431 Request Header Fields Too Large")
        assert closed_within(sock, 3)
    finally:
        sock.close()


def test_a_body_sent_with_the_headers_does_not_count_against_the_header_limit(server, http):
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"x":"' + b"y" * 30_000 + b'"}}'
    assert http.post(CONFIGMAPS, content=body, headers={"Content-Type": "application/json"}).status_code == 201


@pytest.mark.parametrize("sent", [b"", b"GET /api/v1/names", b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: a"])
def test_a_connection_that_does_not_finish_its_headers_is_closed_after_the_read_header_timeout(server, sent):
    sock = connect(server[2])
    try:
        sock.sendall(sent)
        started = time.monotonic()
        assert closed_within(sock, 3)
        assert 0.3 < time.monotonic() - started < 2
    finally:
        sock.close()


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout(server):
    sock = connect(server[2])
    try:
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(sock).endswith(b"ok")
        started = time.monotonic()
        assert closed_within(sock, 3)
        assert 0.3 < time.monotonic() - started < 2
    finally:
        sock.close()


def test_past_the_connection_bound_a_new_connection_evicts_the_oldest_idle_one_and_readyz_answers(server):
    silent = [connect(server[2]) for _ in range(60)]
    try:
        with httpx.Client(base_url=server[1], timeout=5) as fresh:
            assert fresh.get("/readyz").text == "ok"
        assert sum(closed_within(sock, 0.01) for sock in silent) >= 20  # the oldest ones made room
        assert server[0].poll() is None
    finally:
        for sock in silent:
            sock.close()


def test_a_client_that_stops_reading_its_response_is_cut_off_after_the_request_timeout(server, http):
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": "big"}}).status_code == 201
    for i in range(6):
        cm = {"metadata": {"name": f"big-{i}"}, "data": {"x": "y" * 1_000_000}}
        assert http.post("/api/v1/namespaces/big/configmaps", json=cm).status_code == 201
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a client that reads nothing, with a small window
    sock.connect(server[2])
    try:
        sock.sendall(b"GET /api/v1/namespaces/big/configmaps HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(3.5)  # the server's write stays paused past --request-timeout (2 s): it aborts the connection
        received = b""
        sock.settimeout(2)
        try:
            while chunk := sock.recv(1 << 20):
                received += chunk
        except ConnectionResetError:
            pass
        assert 0 < len(received) < 6_000_000
    finally:
        sock.close()
    assert http.get("/readyz").status_code == 200
