"""Nesting bombs against a real server process: each is a 400 Status, and the server stays up.

The server runs as ``python3 -m mockapi serve --port 0`` in a child process: these bodies used to
kill the process with SIGSEGV (the C YAML composer recursing past the stack), which an in-process
server would turn into a dead pytest.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mockapi import protobuf

pytestmark = pytest.mark.e2e

DEEP = 30_000
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TOO_DEEP = "nesting deeper than 100 levels"
YAML = {"Content-Type": "application/yaml"}

BOMBS = {
    "flow sequences": ("[" * DEEP + "]" * DEEP, YAML),
    "flow mappings": ("{a: " * DEEP + "x" + "}" * DEEP, YAML),
    "compact sequences": ("- " * DEEP + "x", YAML),
    "compact keys": ("? " * DEEP + "x", YAML),
    "indented mappings": ("".join(" " * i + "a:\n" for i in range(2000)) + " " * 2000 + "x\n", YAML),
    "deep JSON": ('{"a":' * 1000 + "1" + "}" * 1000, {"Content-Type": "application/json"}),
    "very deep JSON": ("[" * DEEP + "]" * DEEP, {"Content-Type": "application/json"}),
    "JSON without a content type": ("[" * DEEP + "]" * DEEP, {}),
}


def _serve(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )


@pytest.fixture(scope="module")
def server():
    process = _serve()
    try:
        line = process.stdout.readline()  # the banner: "mockapi serving on http://127.0.0.1:PORT (...)"
        assert "serving on http://" in line, (line, process.poll())
        url = line.split("serving on ", 1)[1].split()[0]
        with httpx.Client(base_url=url, timeout=30) as http:
            yield process, http
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()


def assert_400_and_alive(server, response, message=TOO_DEEP):
    process, http = server
    body = response.json()
    assert response.status_code == 400, body
    assert body["kind"] == "Status" and body["reason"] == "BadRequest" and message in body["message"]
    assert process.poll() is None
    assert http.get("/readyz").status_code == 200


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_nesting_bomb_is_400_and_the_server_lives(server, name):
    content, headers = BOMBS[name]
    _, http = server
    response = http.post(CONFIGMAPS, content=content.encode(), headers=headers)
    assert_400_and_alive(server, response, TOO_DEEP if "JSON" not in name else "")


def test_an_apply_patch_bomb_is_400(server):
    _, http = server
    headers = {"Content-Type": "application/apply-patch+yaml"}
    response = http.patch(f"{CONFIGMAPS}/c?fieldManager=t", content=("[" * DEEP + "]" * DEEP).encode(), headers=headers)
    assert_400_and_alive(server, response)


def test_a_bomb_sent_to_the_load_endpoint_is_400(server):
    _, http = server
    response = http.post("/mockapi/v1/load", content=("- " * DEEP + "x").encode())
    assert_400_and_alive(server, response)


def _varint(value: int) -> bytes:
    encoded = b""
    while True:
        byte, value = value & 0x7F, value >> 7
        encoded += bytes([byte | (0x80 if value else 0)])
        if not value:
            return encoded


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _deep_message(depth: int) -> bytes:
    message = b""
    for _ in range(depth):
        message = _field(1, message)
    return message


def test_a_deeply_nested_protobuf_body_is_answered_and_the_server_lives(server):
    """The decoder reads a fixed shape and skips unknown fields without descending into them."""
    process, http = server
    meta = _field(1, b"deep-proto") + _field(99, _deep_message(5000))  # an unknown field, 5,000 levels deep
    raw = _field(1, meta) + _field(2, _field(1, b"k") + _field(2, b"v"))
    body = protobuf.MAGIC + _field(1, _field(1, b"v1") + _field(2, b"ConfigMap")) + _field(2, raw)
    response = http.post(CONFIGMAPS, content=body, headers={"Content-Type": protobuf.MEDIA_TYPE})
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"k": "v"}
    groups = protobuf.MAGIC + bytes([1 << 3 | 3]) * DEEP  # start-group tags, 30,000 deep
    assert_400_and_alive(server, http.post(CONFIGMAPS, content=groups, headers={"Content-Type": protobuf.MEDIA_TYPE}), "protobuf")
    assert process.poll() is None


def test_serve_load_of_a_bomb_exits_1_with_one_line(tmp_path: Path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("[" * DEEP + "]" * DEEP)
    result = subprocess.run(
        [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", "--load", str(bomb)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1, (result.returncode, result.stderr[-500:])
    last = result.stderr.strip().splitlines()[-1]
    assert last == f"mockapi serve: {bomb}: error decoding YAML body: {TOO_DEEP}"
