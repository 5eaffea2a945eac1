"""The protobuf bodies of kubectl create namespace|configmap|secret decode to JSON-shaped objects."""

import pytest

from mockapi import errors, protobuf


def field(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2, len(payload)]) + payload


def unknown(kind: str, raw: bytes) -> bytes:
    type_meta = field(1, b"v1") + field(2, kind.encode())
    return protobuf.MAGIC + field(1, type_meta) + field(2, raw)


def test_a_configmap_with_labels_and_data_decodes():
    meta = field(1, b"cfg") + field(3, b"ns") + field(11, field(1, b"app") + field(2, b"web"))
    raw = field(1, meta) + field(2, field(1, b"mode") + field(2, b"fast")) + field(3, field(1, b"bin") + field(2, b"\x00\x01"))
    assert protobuf.decode(unknown("ConfigMap", raw)) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "ns", "labels": {"app": "web"}},
        "data": {"mode": "fast"},
        "binaryData": {"bin": "AAE="},
    }


def test_a_secret_keeps_type_and_base64_data():
    raw = field(1, field(1, b"s")) + field(2, field(1, b"k") + field(2, b"v")) + field(3, b"Opaque")
    assert protobuf.decode(unknown("Secret", raw)) == {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dg=="}, "type": "Opaque"}


def test_other_kinds_are_415_and_garbage_is_400():
    with pytest.raises(errors.StatusError) as caught:
        protobuf.decode(unknown("Pod", b""))
    assert caught.value.code == 415
    with pytest.raises(errors.StatusError) as caught:
        protobuf.decode(protobuf.MAGIC + b"\x0a\xff\xff")
    assert caught.value.code == 400
    with pytest.raises(errors.StatusError):
        protobuf.decode(b"not protobuf")
