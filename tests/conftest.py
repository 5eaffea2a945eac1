"""Shared fixtures: a real mockapi (uvicorn in a background thread) on a free port.

The servers are :class:`mockapi.testing.MockAPIServer`, the same class users get; the pytest plugin
(``mockapi.testing.plugin``, installed as a ``pytest11`` entry point) is loaded by hand when the
package is not installed, so ``python3 -m pytest`` works from a bare checkout too.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from pathlib import Path

import pytest

from mockapi import watchwire
from mockapi.testing import MockAPIServer

# Every watch event the store shares with in-process watchers as the written dict is checked
# against its line's parse, types included, when shared and when read: a write path that hands
# over an object it changes later, or one holding a value JSON does not give back, fails the test
# that did it. Servers the tests start in other processes check too (the variable).
os.environ["MOCKAPI_CHECK_SHARED_EVENTS"] = "1"
watchwire.checking = True

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]  # tests/testing/test_plugin.py runs small suites that use our plugin


def pytest_addoption(parser) -> None:
    parser.addoption("--fuzz-examples", type=int, default=None, help="how long tests/fuzz runs: 2 x N requests per operation (default 3; MOCKAPI_FUZZ_EXAMPLES)")


def pytest_configure(config) -> None:
    if not config.pluginmanager.has_plugin("mockapi"):
        config.pluginmanager.register(importlib.import_module("mockapi.testing.plugin"), "mockapi")


class RunningServer:
    """A started server: ``url``, ``server`` (the composition root), ``kubeconfig`` path, ``mockapi``."""

    def __init__(self, mockapi: MockAPIServer) -> None:
        self.mockapi = mockapi
        self.server = mockapi.server
        self.url = mockapi.url
        self.kubeconfig = mockapi.kubeconfig_path

    @property
    def registry(self):
        return self.server.registry


@contextlib.contextmanager
def running(tmp_path: Path | None = None, **overrides):
    overrides.setdefault("allocator", False)  # the API alone, as these tests expect; allocator tests turn it on
    with MockAPIServer(**overrides) as mockapi:
        yield RunningServer(mockapi)


@pytest.fixture
def live():
    """A fresh server for one test."""
    with running() as server:
        yield server


@pytest.fixture
def make_live():
    """A factory for servers with non-default settings (e.g. a small watch history)."""
    with contextlib.ExitStack() as stack:

        def make(**overrides):
            return stack.enter_context(running(**overrides))

        yield make
