"""The authentication benchmarks' set-up (bench/api.py --modes, bench/auth_cost.py) measures what it
says: the rule-walk user is outside system:masters and allowed every measured request by the bench's
ClusterRole (not by a bootstrap role), the masters user is in system:masters, and each mode's flags
are the ones documented. In process, no timing."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from mockapi.auth.authn import with_authenticated_group

BENCH = Path(__file__).resolve().parent.parent / "bench"


sys.path.insert(0, str(BENCH))
api = importlib.import_module("api")  # bench/api.py, as bench/auth_cost.py and bench/write_stages.py import it
auth_cost = importlib.import_module("auth_cost")
sys.path.remove(str(BENCH))


def test_each_mode_starts_the_server_with_its_flags(tmp_path):
    flags = {mode: api.Variant(mode, label, mode=mode).server_args(tmp_path) for mode, label in api.MODES.items()}
    assert flags["default"] == []
    assert flags["token"] == ["--token-auth-file", str(tmp_path / "tokens.csv")]
    assert flags["rbac"] == flags["masters"] == flags["token"] + ["--authorization-mode", "RBAC"]
    assert flags["tls-rbac"] == flags["rbac"] + ["--generate-certs", str(tmp_path / "certs-tls-rbac")]
    assert api.Variant("m", "", mode="masters").load_token == api.ADMIN_TOKEN
    assert api.Variant("r", "", mode="rbac").load_token == api.USER_TOKEN
    assert api.Variant("d", "").load_token is None


def test_code_variants_put_the_named_checkout_first(tmp_path):
    args = api.parse_args(["--code", str(tmp_path)])
    variants = api.compare_variants(args)
    assert [v.code for v in variants] == [tmp_path.resolve(), api.ROOT]
    assert all(v.mode == "default" for v in variants)


@pytest.fixture
def drivers(tmp_path):
    """auth_cost.Driver(mode) for the test, closed after it."""
    made = []

    def make(mode: str):
        made.append(auth_cost.Driver(mode, tmp_path))
        return made[-1]

    yield make
    for driver in made:
        driver.close()


@pytest.mark.parametrize("case", ["get", "create", "patch"])
def test_the_rule_walk_user_is_allowed_by_the_bench_role_and_is_no_master(drivers, case):
    driver = drivers("rbac")
    user = with_authenticated_group(driver.server.tokens.get(api.USER_TOKEN))
    assert "system:masters" not in user.groups
    grants = driver.server.authorizer.grants_for(user, "default")
    assert [g.binding for g in grants][-1] == "workload-writer"  # walked after the bootstrap bindings
    driver.one(case)  # raises unless 200/201


def test_the_rule_walk_user_may_read_claims_but_not_delete_namespaces(drivers):
    driver = drivers("rbac")
    run = lambda method, path, body=b"": driver.loop.run_until_complete(  # noqa: E731
        auth_cost.request(driver.app, method, path, api.USER_TOKEN, body))
    assert run("DELETE", "/api/v1/namespaces/default") == 403
    assert run("GET", "/apis/devmgmtproto.k8s.io/v1alpha1/namespaces/default/deviceclaims") == 200
    masters = drivers("masters")
    assert "system:masters" in masters.server.tokens.get(api.ADMIN_TOKEN).groups
