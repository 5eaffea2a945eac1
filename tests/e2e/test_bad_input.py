"""Bad input gets a clear Status error and changes nothing; the server never crashes or hangs."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import GROUP, VERSION, device_class

pytestmark = pytest.mark.e2e

CLASSES = f"/apis/{GROUP}/{VERSION}/deviceclasses"


def assert_status(response, code, reason):
    body = response.json()
    assert response.status_code == code, body
    assert body["kind"] == "Status" and body["code"] == code and body["reason"] == reason
    return body


def assert_unchanged(http, live, rv_before):
    assert live.server.store.resource_version == rv_before
    assert http.get("/readyz").status_code == 200


@pytest.mark.parametrize(
    "content, content_type",
    [
        (b"{not json", "application/json"),
        (b'{"a": "\xff"}', "application/json"),
        (b"[" * 5000 + b"]" * 5000, "application/json"),
        (b"key: [unclosed", "application/yaml"),
        (b"a: &x [1]\nb: *x", "application/yaml"),
        (b'"just a string"', "application/json"),
        (b"", None),
    ],
)
def test_malformed_bodies_are_400_and_change_nothing(http, live, content, content_type):
    before = live.server.store.resource_version
    headers = {"Content-Type": content_type} if content_type else {}
    assert_status(http.post(CLASSES, content=content, headers=headers), 400, "BadRequest")
    assert_unchanged(http, live, before)


def test_a_body_of_another_kind_or_version_is_400(http, live):
    before = live.server.store.resource_version
    wrong_kind = dict(device_class("x"), kind="DevicePool")
    assert "does not match the expected kind" in assert_status(http.post(CLASSES, json=wrong_kind), 400, "BadRequest")["message"]
    wrong_version = dict(device_class("x"), apiVersion="devmgmtproto.k8s.io/v9")
    assert_status(http.post(CLASSES, json=wrong_version), 400, "BadRequest")
    assert_unchanged(http, live, before)


def test_a_body_in_another_namespace_than_the_url_is_400(http):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "kube-system"}}
    assert_status(http.post("/api/v1/namespaces/default/configmaps", json=body), 400, "BadRequest")


def test_an_oversized_body_is_413(make_live):
    import httpx

    live = make_live(max_body=1024)
    with httpx.Client(base_url=live.url) as http:
        body = device_class("big", constraints="x" * 2000)
        assert_status(http.post(CLASSES, json=body), 413, "RequestEntityTooLarge")
        assert http.get("/readyz").status_code == 200


def test_unknown_paths_and_methods_are_statuses(http):
    assert_status(http.get("/apis/nope.example.com/v1/things"), 404, "NotFound")
    assert_status(http.get("/nothing/here"), 404, "NotFound")
    assert_status(http.put(CLASSES, json=device_class("x")), 405, "MethodNotAllowed")
    assert_status(http.get(f"/apis/{GROUP}/{VERSION}/deviceclasses/x/scale"), 404, "NotFound")


def test_an_unknown_patch_content_type_is_415(http):
    http.post(CLASSES, json=device_class("p"))
    response = http.patch(f"{CLASSES}/p", content=b"{}", headers={"Content-Type": "text/plain"})
    assert_status(response, 415, "UnsupportedMediaType")


def test_bad_query_parameters_are_400(http):
    assert_status(http.get(CLASSES, params={"labelSelector": "a in (b"}), 400, "BadRequest")
    assert_status(http.get(CLASSES, params={"limit": "many"}), 400, "BadRequest")
    assert_status(http.get(CLASSES, params={"continue": "garbage!"}), 400, "BadRequest")
    assert_status(http.post(CLASSES, params={"dryRun": "Some"}, json=device_class("x")), 400, "BadRequest")
    assert_status(http.post(CLASSES, params={"fieldValidation": "Loud"}, json=device_class("x")), 400, "BadRequest")


def test_yaml_bodies_are_accepted_for_create(http):
    body = b"apiVersion: devmgmtproto.k8s.io/v1alpha1\nkind: DeviceClass\nmetadata:\n  name: from-yaml\nspec:\n  driver: d\n  deviceType: gpu\n"
    response = http.post(CLASSES, content=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 201 and response.json()["metadata"]["name"] == "from-yaml"


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
METHOD_NOT_ALLOWED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server does not allow this method on the requested resource",
    "reason": "MethodNotAllowed",
    "details": {"causes": [{"reason": "UnexpectedServerResponse", "message": "405: Method Not Allowed"}]},
    "code": 405,
}


def configmap(name, **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_post_to_a_named_object_is_405_and_creates_nothing(http, live):
    before = live.server.store.resource_version
    response = http.post(f"{CONFIGMAPS}/some-name", json=configmap("some-name"))
    assert response.status_code == 405 and response.json() == METHOD_NOT_ALLOWED
    assert http.get(f"{CONFIGMAPS}/some-name").status_code == 404
    assert_unchanged(http, live, before)


def test_patch_and_put_on_a_collection_are_405(http):
    merge = {"Content-Type": "application/merge-patch+json"}
    assert http.patch(CONFIGMAPS, content=b"{}", headers=merge).json() == METHOD_NOT_ALLOWED
    assert http.put(CONFIGMAPS, json=configmap("x")).json() == METHOD_NOT_ALLOWED


def test_an_unparsable_content_type_is_415_not_json(http, live):
    before = live.server.store.resource_version
    response = http.post(CONFIGMAPS, content=b'{"metadata":{"name":"x"}}', headers={"Content-Type": ";;;==="})
    assert_status(response, 415, "UnsupportedMediaType")
    assert_unchanged(http, live, before)


def test_an_accept_nothing_can_serve_is_406(http, live):
    before = live.server.store.resource_version
    body = assert_status(http.get(CONFIGMAPS, headers={"Accept": "image/png"}), 406, "NotAcceptable")
    assert body["message"] == "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    assert_status(http.post(CONFIGMAPS, json=configmap("png"), headers={"Accept": "image/png"}), 406, "NotAcceptable")
    assert_unchanged(http, live, before)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"limit": "1_0"}, 'strconv.ParseInt: parsing "1_0": invalid syntax'),
        ({"limit": "12345678901234567890123"}, 'strconv.ParseInt: parsing "12345678901234567890123": value out of range'),
        ({"watch": "true", "timeoutSeconds": "1_0"}, 'strconv.ParseInt: parsing "1_0": invalid syntax'),
    ],
)
def test_integer_query_parameters_are_parseint(http, params, message):
    assert assert_status(http.get(CONFIGMAPS, params=params), 400, "BadRequest")["message"] == message


def test_watch_maybe_is_a_watch_as_in_kube(http):
    """kube converts query booleans with Convert_Slice_string_To_bool: only 0/false are false."""
    assert http.post(CONFIGMAPS, json=configmap("seen")).status_code == 201
    with http.stream("GET", CONFIGMAPS, params={"watch": "maybe"}) as response:
        assert response.status_code == 200
        first = next(response.iter_lines())
    assert '"type":"ADDED"' in first.replace(" ", "")


DUPLICATE = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"x":"1","x":"2"}}'


def test_duplicate_json_fields_are_400_under_strict(http, live):
    before = live.server.store.resource_version
    response = http.post(CONFIGMAPS, params={"fieldValidation": "Strict"}, content=DUPLICATE, headers={"Content-Type": "application/json"})
    body = assert_status(response, 400, "BadRequest")
    assert body["message"] == 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.x"'
    assert_unchanged(http, live, before)


def test_duplicate_json_fields_warn_by_default_and_pass_under_ignore(http):
    response = http.post(CONFIGMAPS, content=DUPLICATE, headers={"Content-Type": "application/json"})
    assert response.status_code == 201 and response.json()["data"] == {"x": "2"}
    assert response.headers["warning"] == '299 - "duplicate field \\"data.x\\""'
    update = DUPLICATE.replace(b'"2"}', b'"3"}')
    response = http.put(f"{CONFIGMAPS}/dup", params={"fieldValidation": "Ignore"}, content=update, headers={"Content-Type": "application/json"})
    assert response.status_code == 200 and "warning" not in response.headers
