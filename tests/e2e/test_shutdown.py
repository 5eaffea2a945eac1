"""Graceful shutdown of a real ``mockapi serve``: SIGTERM or SIGINT drains it and it exits 0, fast.

An in-flight request finishes, every watch gets the end of its chunked stream, nothing is logged as
a traceback, and with ``--shutdown-delay`` ``/readyz`` answers 503 while everything else is served.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

pytestmark = pytest.mark.e2e

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def serve(*args: str) -> tuple[subprocess.Popen, str, tuple[str, int]]:
    process = subprocess.Popen([sys.executable, "-m", "mockapi", "serve", "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert "serving on http://" in line, (line, process.poll())
    url = line.split("serving on ", 1)[1].split()[0]
    host, port = url.removeprefix("http://").split(":")
    return process, url, (host, int(port))


def open_watch(address, path="/api/v1/namespaces/default/pods?watch=true") -> socket.socket:
    sock = socket.create_connection(address, timeout=5)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert b" 200 " in sock.recv(4096).split(b"\r\n")[0]
    return sock


def read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def stop(process: subprocess.Popen, how=signal.SIGTERM) -> tuple[int, float, str]:
    started = time.monotonic()
    process.send_signal(how)
    code = process.wait(timeout=10)
    seconds = time.monotonic() - started
    stderr = process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    return code, seconds, stderr


def test_sigterm_drains_finishes_the_request_ends_the_watches_and_exits_0_in_under_2s():
    process, url, address = serve()
    try:
        watches = [open_watch(address), open_watch(address, "/apis/devmgmtproto.k8s.io/v1alpha1/deviceclaims?watch=1")]
        body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"in-flight"}}'
        upload = socket.create_connection(address, timeout=5)
        upload.sendall(f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body[:20])
        time.sleep(0.2)
        idle = httpx.Client(base_url=url, timeout=5)
        assert idle.get("/livez").status_code == 200  # a keep-alive connection, idle at the signal
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        upload.sendall(body[20:])
        response = upload.recv(65536)
        assert response.startswith(b"HTTP/1.1 201 ") and b"connection: close" in response.lower()
        for watch in watches:
            assert read_all(watch).endswith(b"0\r\n\r\n")  # the terminating chunk: a clean end of stream
            watch.close()
        upload.close()
        code = process.wait(timeout=30)
        assert code == 0 and time.monotonic() - started < 4.5  # drained, not waiting out the 5 s grace period (slow machines take ~1 s)
        stderr = process.stderr.read()
        assert "Traceback" not in stderr and "CancelledError" not in stderr and "ERROR" not in stderr, stderr
        idle.close()
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


def test_sigint_exits_0_too():
    process, _, address = serve("--no-allocator")
    watch = open_watch(address)
    code, seconds, stderr = stop(process, signal.SIGINT)
    assert code == 0 and seconds < 4.5 and "Traceback" not in stderr, stderr  # not waiting out the 5 s grace period
    assert read_all(watch).endswith(b"0\r\n\r\n")
    watch.close()


def test_readyz_answers_503_during_the_shutdown_delay_while_the_rest_is_served():
    process, url, _ = serve("--no-allocator", "--shutdown-delay", "0.6")
    try:
        with httpx.Client(base_url=url, timeout=5) as http:
            assert http.get("/readyz").status_code == 200
            process.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            ready = http.get("/readyz")
            assert ready.status_code == 503 and "[-]shutdown failed" in ready.text
            assert http.get("/livez").status_code == 200
            assert http.get(CONFIGMAPS).status_code == 200
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


def test_a_request_still_running_after_the_grace_period_is_cut_without_a_traceback():
    process, _, address = serve("--no-allocator", "--shutdown-grace-period", "0.3")
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"never"}}'
    stuck = socket.create_connection(address, timeout=5)
    stuck.sendall(f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body[:5])
    time.sleep(0.2)
    code, seconds, stderr = stop(process)
    assert code == 0 and seconds < 4.5  # the 0.3 s grace period, not the default 5 s
    assert "Traceback" not in stderr and "grace period" in stderr, stderr
    stuck.close()
