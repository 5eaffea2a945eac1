"""Shared fixtures: a real mockapi (uvicorn in a background thread) on a free port."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from mockapi.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


class _ThreadedServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # not the main thread
        pass


class RunningServer:
    """A started server: ``url``, ``server`` (the composition root) and ``kubeconfig`` path."""

    def __init__(self, server, url: str, kubeconfig: Path) -> None:
        self.server = server
        self.url = url
        self.kubeconfig = kubeconfig

    @property
    def registry(self):
        return self.server.registry


@contextlib.contextmanager
def running(tmp_path: Path, **overrides):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    from mockapi import app as app_

    settings = Settings(port=port, **overrides)
    server = app_.build(settings)
    config = uvicorn.Config(server.app, log_level="warning", access_log=False, lifespan="on")
    uv = _ThreadedServer(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("mockapi did not start")
        time.sleep(0.005)
    url = f"http://127.0.0.1:{port}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text((ROOT / "kubeconfig").read_text().replace("http://127.0.0.1:55441", url))
    try:
        yield RunningServer(server, url, kubeconfig)
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture
def live(tmp_path):
    """A fresh server for one test."""
    with running(tmp_path) as server:
        yield server


@pytest.fixture
def make_live(tmp_path):
    """A factory for servers with non-default settings (e.g. a small watch history)."""
    with contextlib.ExitStack() as stack:
        count = iter(range(1000))

        def make(**overrides):
            directory = tmp_path / f"server-{next(count)}"
            directory.mkdir()
            return stack.enter_context(running(directory, **overrides))

        yield make
