"""The pytest plugin (entry point ``pytest11``: ``mockapi``), loaded when mockapi is installed.

Loading it changes nothing: it only declares the marker and the fixtures below, and imports
nothing heavy; a server starts when a test first asks for one of them.

- ``mockapi_server`` (session): one server for the whole run — a :class:`MockAPIServer` in this
  process, or, when ``MOCKAPI_URL`` is set (a CI service container), a handle on that server.
- ``mockapi`` (function): ``mockapi_server`` reset before the test (CRDs and the default namespaces
  stay; recent requests are forgotten; fault rules are removed; the allocation mode goes back to the
  server's), then the test's ``@pytest.mark.mockapi(...)`` applied. ``mockapi.faults.inject(...)``
  makes requests fail, wait or break (docs/fault-injection.md).
- ``kube_client`` (function): a ``kubernetes.client.ApiClient`` for it, closed after the test.
- ``kubeconfig_path`` (function): a kubeconfig file for it (for kubectl, or client libraries).
- ``mockapi_rbac_server`` (session) and ``mockapi_rbac`` (function): the same for a second server
  with authentication and RBAC on (``MockAPIServer(rbac=True)``, HTTPS): ``mockapi_rbac.user_client(...)``,
  ``.service_account_client(ns, name)``, ``.kubeconfig_for(...)`` act as anyone; the handle itself is
  an admin (docs/auth.md). Started only when a test asks for it.

With ``MOCKAPI_URL`` set, ``MOCKAPI_TOKEN`` (an admin's bearer token) and ``MOCKAPI_CA_FILE`` (its CA)
reach a server that authenticates; ``MOCKAPI_RBAC_URL`` (with the same two) names the RBAC one.

``@pytest.mark.mockapi(load=[...], allocation="manual", delay=..., jitter=...)``: manifests to apply
(files, directories or YAML text; relative paths from the rootdir) and the allocation mode.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

URL_VARIABLE = "MOCKAPI_URL"
MARKER = (
    "mockapi(load=[...], allocation=None, delay=None, jitter=None): state for the mockapi fixture — "
    "manifests to apply (files, directories or YAML text) and the allocation mode (immediate, delay, manual)"
)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", MARKER)


@pytest.fixture(scope="session")
def mockapi_server():
    """One mockapi for the session: started here, or the one at ``$MOCKAPI_URL``."""
    from mockapi.testing.server import MockAPIServer, connect

    url = os.environ.get(URL_VARIABLE)
    if url:
        with connect(url, token=os.environ.get("MOCKAPI_TOKEN"), ca_file=os.environ.get("MOCKAPI_CA_FILE")) as handle:
            yield handle
        return
    with MockAPIServer() as server:
        yield server


@pytest.fixture(scope="session")
def mockapi_rbac_server():
    """One mockapi with authentication and RBAC on, for the session (or the one at ``$MOCKAPI_RBAC_URL``)."""
    from mockapi.testing.server import MockAPIServer, connect

    url = os.environ.get("MOCKAPI_RBAC_URL")
    if url:
        with connect(url, token=os.environ.get("MOCKAPI_TOKEN"), ca_file=os.environ.get("MOCKAPI_CA_FILE")) as handle:
            yield handle
        return
    with MockAPIServer(rbac=True) as server:
        yield server


@pytest.fixture
def mockapi_rbac(mockapi_rbac_server, request):
    """The RBAC server, reset, with this test's ``@pytest.mark.mockapi`` applied (as the admin)."""
    return _prepared(mockapi_rbac_server, request)


@pytest.fixture
def mockapi(mockapi_server, request):
    """The session's mockapi, reset, with this test's ``@pytest.mark.mockapi`` applied."""
    return _prepared(mockapi_server, request)


def _prepared(server, request):
    """``server`` reset, with the test's ``@pytest.mark.mockapi`` applied."""
    server.reset()
    marker = request.node.get_closest_marker("mockapi")
    if marker is not None:
        _apply(server, marker, request.config.rootpath)
    return server


@pytest.fixture
def kube_client(mockapi):
    """A ``kubernetes.client.ApiClient`` for the test's mockapi."""
    with mockapi.api_client() as api_client:
        yield api_client


@pytest.fixture
def kubeconfig_path(mockapi) -> Path:
    """A kubeconfig file for the test's mockapi (``kubectl --kubeconfig``)."""
    return mockapi.kubeconfig_path


def _apply(server, marker, rootpath: Path) -> None:
    options = dict(marker.kwargs)
    unknown = set(options) - {"load", "allocation", "delay", "jitter"}
    if unknown or marker.args:
        raise pytest.UsageError(f"@pytest.mark.mockapi takes load=, allocation=, delay= and jitter= only, not {sorted(unknown) or marker.args}")
    load = options.get("load") or ()
    if isinstance(load, (str, Path)):
        load = [load]
    if load:
        server.load([_resolve(item, rootpath) for item in load])
    if options.get("allocation"):
        server.set_allocation(options["allocation"], delay=options.get("delay"), jitter=options.get("jitter"))


def _resolve(item, rootpath: Path):
    if isinstance(item, str) and "\n" in item:
        return item  # YAML text
    path = Path(item)
    return path if path.is_absolute() else rootpath / path
