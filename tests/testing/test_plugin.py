"""The pytest plugin, as a user's test suite sees it (pytester runs small suites that use it)."""

from __future__ import annotations

import importlib
import pkgutil
import threading

import kubernetes.client  # noqa: F401 - imported before the inline runs (see warm_imports)
import pytest

from mockapi import app
from mockapi.testing import MockAPIServer

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: seeded, namespace: default}\n"


@pytest.fixture(scope="module", autouse=True)
def warm_imports():
    """Inline pytester runs drop the modules they import (a later import makes second copies of
    their classes, and ``isinstance`` fails across the copies), so import every mockapi module
    first: a server imports its controllers and most kinds' strategies only when they are used."""
    import mockapi

    for module in pkgutil.walk_packages(mockapi.__path__, "mockapi."):
        if module.name != "mockapi.__main__":
            importlib.import_module(module.name)
    app.build()


def test_loading_the_plugin_changes_nothing_until_a_fixture_is_used(pytester):
    pytester.makepyfile(
        """
        import sys, threading

        def test_nothing_started():
            assert not [t for t in threading.enumerate() if t.name.startswith("mockapi:")]
            assert "uvicorn" not in sys.modules and "kubernetes" not in sys.modules
        """
    )
    result = pytester.runpytest_subprocess("-p", "mockapi", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    from importlib.metadata import entry_points

    assert "mockapi.testing.plugin" in [ep.value for ep in entry_points(group="pytest11")]


def test_fixtures_give_each_test_a_reset_server_a_client_and_a_kubeconfig(pytester):
    pytester.makepyfile(
        test_user=f"""
        import subprocess
        from kubernetes import client

        CONFIGMAP = {CONFIGMAP!r}

        def test_one_creates_a_configmap(mockapi, kube_client):
            mockapi.load(CONFIGMAP)
            names = [c.metadata.name for c in client.CoreV1Api(kube_client).list_namespaced_config_map("default").items]
            assert names == ["seeded"]

        def test_two_starts_from_a_clean_server(mockapi, kube_client, kubeconfig_path):
            assert client.CoreV1Api(kube_client).list_namespaced_config_map("default").items == []
            out = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig_path), "get", "namespaces", "-o", "name"],
                                 capture_output=True, text=True, check=True).stdout
            assert out.split() == ["namespace/default", "namespace/kube-public", "namespace/kube-system"]

        def test_three_sees_only_its_own_requests(mockapi, kube_client):
            client.CoreV1Api(kube_client).list_namespaced_config_map("default")
            assert [r["verb"] for r in mockapi.requests()] == ["list"]
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_the_marker_loads_manifests_and_sets_the_allocation_mode(pytester, tmp_path):
    manifest = pytester.path / "manifests" / "cm.yaml"
    manifest.parent.mkdir()
    manifest.write_text(CONFIGMAP)
    pytester.makepyfile(
        """
        import pytest
        from kubernetes import client

        @pytest.mark.mockapi(load=["manifests/"], allocation="manual")
        def test_marked(mockapi, kube_client):
            assert client.CoreV1Api(kube_client).read_namespaced_config_map("seeded", "default")
            assert mockapi.allocation()["mode"] == "manual"
            assert mockapi.step("default/a-claim") == ["default/a-claim"]

        @pytest.mark.mockapi(load="apiVersion: v1\\nkind: Namespace\\nmetadata: {name: inline}\\n", allocation="delay", delay=0.25)
        def test_inline_yaml(mockapi, kube_client):
            assert client.CoreV1Api(kube_client).read_namespace("inline")
            assert mockapi.allocation()["delaySeconds"] == 0.25

        def test_unmarked_is_back_to_defaults(mockapi):
            assert mockapi.allocation()["mode"] == "immediate"
            assert "seeded" not in mockapi.snapshot()
        """
    )
    pytester.runpytest("-p", "no:cacheprovider", "--strict-markers").assert_outcomes(passed=3)


def test_a_misused_marker_is_a_usage_error(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.mockapi(lod=["x"])
        def test_typo(mockapi):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*takes load=, allocation=, delay= and jitter= only*"])


def test_with_mockapi_url_the_fixtures_use_that_server_and_reset_it_over_http(pytester, monkeypatch):
    with MockAPIServer() as outside:
        monkeypatch.setenv("MOCKAPI_URL", outside.url)
        running = sorted(t.name for t in threading.enumerate() if t.name.startswith("mockapi:"))
        pytester.makepyfile(
            f"""
            import threading

            def test_uses_the_running_server(mockapi):
                assert mockapi.url == {outside.url!r}
                assert sorted(t.name for t in threading.enumerate() if t.name.startswith("mockapi:")) == {running!r}
                mockapi.load({CONFIGMAP!r})
            """
        )
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
        assert "name: seeded" in outside.snapshot()
        assert [r["verb"] for r in outside.requests()] == []  # the fixture reset it first


def test_pytest_fixtures_lists_the_plugin_fixtures(pytester):
    pytester.makepyfile("def test_nothing(): pass")
    out = pytester.runpytest("--fixtures", "-p", "no:cacheprovider").stdout.str()
    for name in ("mockapi_server", "mockapi", "kube_client", "kubeconfig_path"):
        assert f"{name} " in out or f"{name} [" in out, name
