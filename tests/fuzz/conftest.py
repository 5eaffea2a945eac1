"""Fixtures of the fuzz tests: one ``mockapi serve`` child process for the whole run, and the
number of examples per operation (``--fuzz-examples N`` or ``MOCKAPI_FUZZ_EXAMPLES``)."""

from __future__ import annotations

import os

import pytest

from tests.fuzz.harness import FuzzServer

DEFAULT_EXAMPLES = 3  # 2 × 3 requests per operation: the whole fuzz run stays under a minute on 2 cores


@pytest.fixture(scope="session")
def fuzz_server(tmp_path_factory):
    server = FuzzServer(tmp_path_factory.mktemp("fuzz") / "server.log")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def fuzz_examples(request) -> int:
    """Examples per operation: the option, else the environment, else a CI-sized default."""
    given = request.config.getoption("--fuzz-examples", default=None) or os.environ.get("MOCKAPI_FUZZ_EXAMPLES")
    return int(given) if given else DEFAULT_EXAMPLES


@pytest.fixture
def server(fuzz_server):
    """The shared server, checked alive around each test (one that died takes its log with it),
    with its run-time CRD served again after each."""
    assert fuzz_server.alive(), fuzz_server.log()
    yield fuzz_server
    assert fuzz_server.alive(), fuzz_server.log()
    fuzz_server.ensure_crd()  # a control reset (or a fuzzed DELETE) may have taken it
