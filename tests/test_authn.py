"""Authentication, impersonation and authorization at the HTTP edge (mockapi.auth.chain), in process."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from mockapi import app as app_
from mockapi.auth import authn, impersonation
from mockapi.auth.authz import Attributes, Decision
from mockapi.auth.chain import forbidden, public
from mockapi.auth.user import UserInfo
from mockapi.settings import Settings

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


class AsgiClient:
    """httpx over ASGI, synchronously: each request its own event loop (no lifespan, no controllers)."""

    def __init__(self, app, **_) -> None:
        self.app = app

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        async def send():
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://testserver") as client:
                return await client.request(method, path, **kwargs)

        return asyncio.run(send())

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> httpx.Response:
        return self.request("POST", path, **kwargs)


class Table:
    """alice may list pods in "default" and impersonate bob; nobody else may do anything."""

    def authorize(self, attrs: Attributes) -> Decision:
        if attrs.user.name != "alice":
            return Decision(False)
        if attrs.verb == "list" and attrs.resource == "pods" and attrs.namespace == "default":
            return Decision(True, "alice lists pods")
        if attrs.verb == "impersonate" and attrs.resource == "users" and attrs.name == "bob":
            return Decision(True)
        return Decision(False, "not in the table")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tokens = tmp_path_factory.mktemp("auth") / "tokens.csv"
    tokens.write_text('admintoken,admin,1,"system:masters"\nalicetoken,alice,2,"dev,qa"\nbobtoken,bob,3\n')
    return app_.build(Settings(token_auth_file=tokens), authorizer=Table())


@pytest.fixture(scope="module")
def client(server):
    return AsgiClient(server.app, raise_server_exceptions=True)


def get(client, path, token=None, **headers):
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return client.get(path, headers=headers)


# ------------------------------------------------------------------ the token file
def test_the_token_file_is_read_in_kube_apiservers_format(tmp_path):
    path = tmp_path / "tokens.csv"
    path.write_text('# a comment\nt1,alice,42,"dev,qa"\n\nt2,bob,\n')
    table = authn.TokenTable()
    table.load(path)
    assert table.get("t1") == UserInfo("alice", uid="42", groups=("dev", "qa"))
    assert table.get("t2") == UserInfo("bob")


def test_a_token_file_record_with_too_few_columns_is_refused_with_kubes_words(tmp_path):
    path = tmp_path / "tokens.csv"
    path.write_text("t1,alice\n")
    with pytest.raises(authn.TokenFileError, match=r"must have at least 3 columns \(token, user name, user uid\), found 2"):
        authn.TokenTable().load(path)


def test_authenticated_users_are_in_system_authenticated_and_anonymous_ones_are_not():
    table = authn.TokenTable()
    token = table.mint("alice", groups=["dev"])
    auth = authn.Authenticator(table, anonymous=True)
    assert auth.authenticate(f"Bearer {token}".encode(), None).groups == ("dev", "system:authenticated")
    assert auth.authenticate(None, None) == UserInfo("system:anonymous", groups=("system:unauthenticated",))
    with pytest.raises(authn.Unauthorized):
        auth.authenticate(b"Bearer wrong", None)  # a bad token is refused even where anonymous requests are not


def test_a_tokens_user_is_cached_per_header_until_the_token_table_changes():
    table = authn.TokenTable()
    table.add("t1", UserInfo("alice", groups=("dev",)))
    auth = authn.Authenticator(table)
    first = auth.authenticate(b"Bearer t1", None)
    assert auth.authenticate(b"Bearer t1", None) is first  # the same object, groups and all
    assert first == UserInfo("alice", groups=("dev", "system:authenticated"))
    with pytest.raises(authn.Unauthorized, match="invalid bearer token"):
        auth.authenticate(b"Bearer t2", None)  # a failure is not cached...
    table.add("t2", UserInfo("bob"))
    assert auth.authenticate(b"Bearer t2", None).name == "bob"  # ...and a token added later is seen at once
    table.add("t1", UserInfo("carol"))
    assert auth.authenticate(b"Bearer t1", None).name == "carol"  # a re-assigned token: the table changed
    minted = table.mint("dave", groups=["system:masters"])
    assert auth.authenticate(f"Bearer {minted}".encode(), None).groups == ("system:masters", "system:authenticated")


def test_the_per_header_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(authn, "_HEADER_CACHE_LIMIT", 4)
    table = authn.TokenTable()
    tokens = [table.mint(f"u{i}") for i in range(10)]
    auth = authn.Authenticator(table)
    for i, token in enumerate(tokens):
        assert auth.authenticate(f"Bearer {token}".encode(), None).name == f"u{i}"
        assert len(auth._by_header) <= 4


def test_the_authorizer_is_not_asked_for_system_masters_public_paths_or_discovery(tmp_path):
    asked = []

    class Recording:
        def authorize(self, attrs: Attributes) -> Decision:
            asked.append((attrs.user.name, attrs.verb, attrs.path))
            return Decision(False)

    tokens = tmp_path / "tokens.csv"
    tokens.write_text('admintoken,admin,1,"system:masters"\nalicetoken,alice,2\n')
    client = AsgiClient(app_.build(Settings(token_auth_file=tokens), authorizer=Recording()).app)
    assert get(client, "/api/v1/namespaces/default/pods", "admintoken").status_code == 200
    assert get(client, "/healthz", "alicetoken").status_code == 200
    assert get(client, "/apis", "alicetoken").status_code == 200
    assert asked == []
    assert get(client, "/api/v1/namespaces/default/pods", "alicetoken").status_code == 403
    assert asked == [("alice", "list", "/api/v1/namespaces/default/pods")]


def test_only_the_first_authorization_header_counts_and_impersonation_is_found_among_the_others(client):
    headers = [("User-Agent", "x"), ("Authorization", "Bearer alicetoken"), ("Authorization", "Bearer admintoken"), ("Impersonate-User", "bob")]
    review = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", content=b"{}", headers=headers)
    assert review.status_code == 201  # alice may impersonate bob (admin would have been allowed anything)
    assert review.json()["status"]["userInfo"] == {"username": "bob", "groups": ["system:authenticated"]}
    headers[-1] = ("Impersonate-User", "carol")
    assert client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", content=b"{}", headers=headers).status_code == 403


@pytest.mark.parametrize("header, token", [(b"Bearer abc", "abc"), (b"bearer  abc ", "abc"), (b"Basic abc", ""), (b"Bearer", ""), (None, "")])
def test_the_bearer_token_is_read_from_the_authorization_header(header, token):
    assert authn.bearer_token(header) == token


# ------------------------------------------------------------------ the edge
def test_a_request_without_credentials_gets_kubes_401_body(client):
    response = get(client, "/api/v1/namespaces/default/pods")
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


def test_a_bad_token_gets_401_even_on_a_health_check(client):
    assert get(client, "/api/v1/pods", "nope").json() == UNAUTHORIZED
    assert get(client, "/healthz", "nope").status_code == 401


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/readyz/ping", "/version"])
def test_health_checks_and_the_version_need_no_credentials(client, path):
    assert get(client, path).status_code == 200


def test_discovery_and_openapi_are_open_to_any_authenticated_user(client):
    for path in ("/api", "/apis", "/api/v1", "/apis/apps/v1", "/openapi/v3"):
        assert get(client, path, "bobtoken").status_code == 200, path
        assert get(client, path).status_code == 401, path


def test_an_authorized_request_runs_and_a_refused_one_gets_kubes_403(client):
    assert get(client, "/api/v1/namespaces/default/pods", "alicetoken").status_code == 200
    response = get(client, "/api/v1/namespaces/kube-system/pods", "alicetoken")
    assert response.status_code == 403
    assert response.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "kube-system": not in the table',
        "reason": "Forbidden", "details": {"kind": "pods"}, "code": 403,
    }  # fmt: skip


def test_a_refused_named_request_names_the_object_group_and_scope(client):
    body = get(client, "/apis/apps/v1/namespaces/default/deployments/web", "bobtoken").json()
    assert body["message"] == 'deployments.apps "web" is forbidden: User "bob" cannot get resource "deployments" in API group "apps" in the namespace "default"'
    assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}


def test_system_masters_may_do_anything_and_the_control_api_is_theirs(client):
    assert get(client, "/api/v1/namespaces/kube-system/pods", "admintoken").status_code == 200
    assert get(client, "/mockapi/v1/requests", "admintoken").status_code == 200
    response = get(client, "/mockapi/v1/requests", "alicetoken")
    assert response.status_code == 403
    assert response.json()["message"] == 'forbidden: User "alice" cannot get path "/mockapi/v1/requests": not in the table'
    assert response.json()["details"] == {}


def test_impersonation_runs_the_request_as_the_impersonated_user(client):
    review = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", content=b"{}", headers={"Authorization": "Bearer alicetoken", "Impersonate-User": "bob"})
    assert review.status_code == 201
    assert review.json()["status"]["userInfo"] == {"username": "bob", "groups": ["system:authenticated"]}


def test_impersonating_someone_not_allowed_gets_kubes_403(client):
    response = get(client, "/api/v1/namespaces/default/pods", "alicetoken", **{"Impersonate-User": "carol"})
    assert response.status_code == 403
    assert response.json()["message"] == 'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope: not in the table'
    sa = get(client, "/api/v1/pods", "bobtoken", **{"Impersonate-User": "system:serviceaccount:ns1:robot"}).json()
    assert sa["message"] == 'serviceaccounts "robot" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"'
    group = get(client, "/api/v1/pods", "alicetoken", **{"Impersonate-User": "bob", "Impersonate-Group": "admins"}).json()
    assert group["message"].startswith('groups "admins" is forbidden: User "alice" cannot impersonate resource "groups"')


def test_whoami_answers_with_the_requesters_user_info(client):
    review = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, headers={"Authorization": "Bearer alicetoken"})
    assert review.status_code == 201
    assert review.json() == {
        "kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": None},
        "status": {"userInfo": {"username": "alice", "uid": "2", "groups": ["dev", "qa", "system:authenticated"]}},
    }  # fmt: skip


def test_whoami_without_authentication_is_the_admin():
    client = AsgiClient(app_.build(Settings()).app)
    review = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json={})
    assert review.json()["status"]["userInfo"]["username"] == "system:admin"
    assert client.get("/apis/authentication.k8s.io/v1/selfsubjectreviews").status_code == 405


def test_writes_carry_the_user_into_the_registry(server, client):
    seen = []
    original = server.registry.create

    def create(rt, namespace, body, opts, **kwargs):
        seen.append(opts.user)
        return original(rt, namespace, body, opts, **kwargs)

    server.registry.create = create
    try:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "who"}}
        assert client.post("/api/v1/namespaces/default/configmaps", json=cm, headers={"Authorization": "Bearer admintoken"}).status_code == 201
    finally:
        del server.registry.create
    assert seen[0].name == "admin"


def test_the_control_api_mints_tokens_for_test_users(client):
    minted = client.post("/mockapi/v1/users", json={"name": "dave", "groups": ["ops"]}, headers={"Authorization": "Bearer admintoken"})
    assert minted.status_code == 201
    token = minted.json()["token"]
    review = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json={}, headers={"Authorization": f"Bearer {token}"})
    assert review.json()["status"]["userInfo"] == {"username": "dave", "groups": ["ops", "system:authenticated"]}
    bad = client.post("/mockapi/v1/users", json={"groups": ["ops"]}, headers={"Authorization": "Bearer admintoken"})
    assert bad.status_code == 400 and bad.json()["reason"] == "BadRequest"


# ------------------------------------------------------------------ pieces
def test_impersonation_headers_are_read_in_kubes_order_and_groups():
    asked, user = impersonation.parse([(b"impersonate-user", b"system:serviceaccount:ns:sa"), (b"impersonate-extra-scopes", b"view"), (b"impersonate-uid", b"u1")])
    assert [(a.resource, a.name, a.namespace, a.group, a.subresource) for a in asked] == [
        ("serviceaccounts", "sa", "ns", "", ""), ("userextras", "view", "", "authentication.k8s.io", "scopes"), ("uids", "u1", "", "authentication.k8s.io", ""),
    ]  # fmt: skip
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")
    assert user.extra == {"scopes": ("view",)} and user.uid == "u1"
    _, anonymous = impersonation.parse([(b"impersonate-user", b"system:anonymous")])
    assert anonymous.groups == ("system:unauthenticated",)


def test_impersonating_a_group_without_a_user_is_refused():
    with pytest.raises(Exception, match="without impersonating a user"):
        impersonation.parse([(b"impersonate-group", b"admins")])


def test_a_refused_non_resource_request_says_path_and_has_empty_details():
    status = forbidden(Attributes(UserInfo("alice"), "post", resource_request=False, path="/mockapi/v1/reset"), Decision(False)).status()
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert status["message"] == 'forbidden: User "alice" cannot post path "/mockapi/v1/reset"' and status["details"] == {}


@pytest.mark.parametrize("path, expected", [("/healthz", True), ("/healthz/ping", True), ("/healthzz", False), ("/version", True), ("/versions", False), ("/metrics", False)])
def test_which_paths_need_no_credentials(path, expected):
    assert public(path) is expected


def test_the_default_mode_installs_no_filter():
    server = app_.build(Settings())
    assert server.tokens is None and server.audit is None
    assert server.app.__class__.__name__ == "function"


# ------------------------------------------------------------------ the command line
@pytest.mark.parametrize(
    "flags, message",
    [
        (["--token-auth-file", "/nonexistent/tokens.csv"], "mockapi serve: /nonexistent/tokens.csv: No such file or directory"),
        (["--tls-private-key-file", "/some/key.pem"], "mockapi serve: --tls-private-key-file needs --tls-cert-file"),
        (["--tls-cert-file", "/nonexistent/cert.pem", "--tls-private-key-file", "/nonexistent/key.pem"], "mockapi serve: /nonexistent/cert.pem: No such file or directory"),
        (["--audit-policy-file", "POLICY"], "mockapi serve: POLICY: expected an audit.k8s.io/v1 Policy"),
        (["--anonymous-auth=perhaps"], "mockapi serve: argument --anonymous-auth: expected true or false, not 'perhaps' (see `mockapi serve --help`)"),
    ],
)
def test_serve_refuses_bad_auth_settings_in_one_line(tmp_path, flags, message):
    import os
    import subprocess
    import sys

    policy = tmp_path / "policy.yaml"
    policy.write_text("kind: Policy\n")
    flags = [str(policy) if f == "POLICY" else f for f in flags]
    message = message.replace("POLICY", str(policy))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOCKAPI_")}
    done = subprocess.run([sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", *flags], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode in (1, 2)
    assert done.stderr.strip().splitlines()[-1] == message
