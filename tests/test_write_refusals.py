"""Writes kube-apiserver refuses, in process: each answers kube's code and message and changes nothing."""

from __future__ import annotations

import base64

import orjson
import pytest

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import rest
from mockapi.registry.options import WriteOptions
from mockapi.registry.pods import container_port_errors, port_name_errors
from mockapi.registry.strategy import MAX_SECRET_SIZE

MIB = 1024 * 1024


@pytest.fixture
def server():
    return app_.build(clock=FakeClock(), uids=SequentialUIDs())


def core(server, kind):
    return server.types.by_kind("", "v1", kind)


def refused(call) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as caught:
        call()
    return caught.value


# -- a patch may not drop or change the object's name (kube's checkName: 400) --------------------


@pytest.mark.parametrize(
    "patch_type, body",
    [
        (rest.MERGE_PATCH, {"apiVersion": None, "kind": None, "metadata": None, "data": None}),
        (rest.MERGE_PATCH, {"metadata": {"name": None}}),
        (rest.STRATEGIC_PATCH, {"$patch": "delete"}),
        (rest.JSON_PATCH, [{"op": "remove", "path": "/metadata"}]),
    ],
)
def test_a_patch_that_drops_the_name_is_400_and_keeps_the_object(server, patch_type, body):
    configmaps = core(server, "ConfigMap")
    before = server.registry.create(configmaps, "default", {"metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}}, WriteOptions())
    error = refused(lambda: server.registry.patch(configmaps, "default", "c", patch_type, body, WriteOptions()))
    assert (error.code, error.reason, error.message) == (400, "BadRequest", "the name of the object () does not match the name on the URL (c)")
    assert server.registry.get(configmaps, "default", "c").raw == before.raw


def test_a_patch_that_renames_is_400(server):
    configmaps = core(server, "ConfigMap")
    server.registry.create(configmaps, "default", {"metadata": {"name": "c"}}, WriteOptions())
    error = refused(lambda: server.registry.patch(configmaps, "default", "c", rest.MERGE_PATCH, {"metadata": {"name": "d"}}, WriteOptions()))
    assert error.message == "the name of the object (d) does not match the name on the URL (c)"


def test_a_patch_that_keeps_the_name_still_works(server):
    configmaps = core(server, "ConfigMap")
    server.registry.create(configmaps, "default", {"metadata": {"name": "c"}, "data": {"k": "v"}}, WriteOptions())
    written = server.registry.patch(configmaps, "default", "c", rest.MERGE_PATCH, {"data": None}, WriteOptions())
    assert "data" not in orjson.loads(written.raw)


# -- ConfigMap and Secret data are bounded by api.MaxSecretSize (1 MiB) --------------------------


def test_a_configmap_over_one_mib_is_422_too_long_on_the_whole_object(server):
    configmaps = core(server, "ConfigMap")
    body = {"metadata": {"name": "big"}, "data": {"a": "x" * (MIB - 10)}, "binaryData": {"b": base64.b64encode(b"y" * 11).decode()}}
    error = refused(lambda: server.registry.create(configmaps, "default", body, WriteOptions()))
    assert (error.code, error.reason) == (422, "Invalid")
    assert error.message == 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes'
    assert error.details["causes"] == [{"reason": "FieldValueTooLong", "message": "Too long: may not be more than 1048576 bytes", "field": "[]"}]
    assert server.store.get(configmaps.group_resource, "default", "big") is None


def test_a_configmap_of_exactly_one_mib_is_stored_and_counts_utf8_bytes(server):
    configmaps = core(server, "ConfigMap")
    server.registry.create(configmaps, "default", {"metadata": {"name": "full"}, "data": {"a": "x" * MIB}}, WriteOptions())
    error = refused(lambda: server.registry.create(configmaps, "default", {"metadata": {"name": "wide"}, "data": {"a": "é" * (MIB // 2 + 1)}}, WriteOptions()))
    assert error.code == 422


def test_a_secret_over_one_mib_decoded_is_422_on_data(server):
    secrets = core(server, "Secret")
    exact = {"metadata": {"name": "ok"}, "data": {"a": base64.b64encode(b"x" * MAX_SECRET_SIZE).decode()}}
    server.registry.create(secrets, "default", exact, WriteOptions())
    over = {"metadata": {"name": "big"}, "stringData": {"a": "x" * MAX_SECRET_SIZE, "b": "y"}}
    error = refused(lambda: server.registry.create(secrets, "default", over, WriteOptions()))
    assert error.message == 'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes'


# -- container ports (kube's validateContainerPorts) ---------------------------------------------


def test_a_container_port_out_of_range_is_422(server):
    pods = core(server, "Pod")
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 99999999}]}]}}
    error = refused(lambda: server.registry.create(pods, "default", body, WriteOptions()))
    assert error.code == 422
    assert error.message == 'Pod "p" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 99999999: must be between 1 and 65535, inclusive'
    assert server.store.get(pods.group_resource, "default", "p") is None


def test_port_rules_in_kubes_words():
    ports = [
        {"containerPort": 0, "hostPort": 70000, "name": "http"},
        {"containerPort": 80, "hostPort": 0, "name": "http"},
        {"containerPort": 65535, "hostPort": 1},
    ]
    assert [str(e) for e in container_port_errors(ports, "spec.initContainers[1].ports")] == [
        "spec.initContainers[1].ports[0].containerPort: Required value",
        "spec.initContainers[1].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        'spec.initContainers[1].ports[1].name: Duplicate value: "http"',
    ]


@pytest.mark.parametrize(
    "name, messages",
    [
        ("http", []),
        ("a-1", []),
        ("sixteen-chars-xx", ["must be no more than 15 characters"]),
        ("Web", ["must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"]),
        ("80", ["must contain at least one letter (a-z)"]),
        ("a--b", ["must not contain consecutive hyphens"]),
        ("-a", ["must not begin or end with a hyphen"]),
    ],
)
def test_port_names_are_iana_service_names(name, messages):
    assert port_name_errors(name) == messages


def test_valid_ports_are_stored_with_the_default_protocol(server):
    pods = core(server, "Pod")
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080, "name": "http"}]}]}}
    stored = orjson.loads(server.registry.create(pods, "default", body, WriteOptions()).raw)
    assert stored["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "hostPort": 8080, "name": "http", "protocol": "TCP"}]


def test_an_empty_port_protocol_is_defaulted_to_tcp_not_refused(server):
    pods = core(server, "Pod")
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": ""}]}]}}
    stored = orjson.loads(server.registry.create(pods, "default", body, WriteOptions()).raw)
    assert stored["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"
    bad = {"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": "tcp"}]}]}}
    error = refused(lambda: server.registry.create(pods, "default", bad, WriteOptions()))
    assert 'protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"' in error.message


def test_a_patch_that_moves_the_object_to_another_namespace_is_400(server):
    configmaps = core(server, "ConfigMap")
    server.registry.create(configmaps, "default", {"metadata": {"name": "c"}}, WriteOptions())
    error = refused(lambda: server.registry.patch(configmaps, "default", "c", rest.MERGE_PATCH, {"metadata": {"namespace": "other"}}, WriteOptions()))
    assert (error.code, error.message) == (400, "the namespace of the object (other) does not match the namespace on the URL (default)")


def test_two_containers_may_not_take_the_same_host_port(server):
    pods = core(server, "Pod")
    containers = [{"name": n, "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]} for n in ("a", "b")]
    containers.append({"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}]})
    error = refused(lambda: server.registry.create(pods, "default", {"metadata": {"name": "p"}, "spec": {"containers": containers}}, WriteOptions()))
    assert error.message == 'Pod "p" is invalid: spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"'
