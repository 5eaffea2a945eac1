"""scripts/gen-builtin-schemas: kube's published definitions (in kubernetes-validate's JSON-Schema
form) back into the CRD-shaped manifests of mockapi/registry/builtin/."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
from pathlib import Path

from mockapi.registry import builtin

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "gen-builtin-schemas"


def load_script():
    loader = importlib.machinery.SourceFileLoader("gen_builtin_schemas", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


DEFINITIONS = {
    "io.example.Thing": {
        "description": "A thing.",
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "example.io", "kind": "Thing", "version": "v1"}],
        "properties": {
            "apiVersion": {"type": ["string", "null"], "enum": ["example.io/v1"]},
            "metadata": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": "meta"},
            "spec": {"$ref": "#/$defs/io.example.ThingSpec", "description": "The spec."},
        },
    },
    "io.example.ThingSpec": {
        "type": ["object", "null"],
        "properties": {
            "port": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
            "size": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.api.resource.Quantity"},
            "since": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
            "items": {"type": ["array", "null"], "items": {"type": ["string", "null"]}, "x-kubernetes-list-type": "set"},
            "ports": {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port"], "x-kubernetes-patch-merge-key": "port", "x-kubernetes-patch-strategy": "merge"},
            "labels": {"type": ["object", "null"], "additionalProperties": {"type": ["string", "null"]}, "x-kubernetes-map-type": "atomic"},
        },
        "required": ["port"],
    },
}


def test_references_are_inlined_and_turned_back_into_kubes_openapi_form():
    script = load_script()
    schema = script.convert(DEFINITIONS, DEFINITIONS["io.example.Thing"], top=True)
    assert schema["type"] == "object" and "x-kubernetes-group-version-kind" not in schema
    assert schema["properties"]["apiVersion"] == {"type": "string"}
    assert schema["properties"]["metadata"] == {"type": "object"}
    spec = schema["properties"]["spec"]
    assert spec["description"] == "The spec." and spec["type"] == "object" and spec["required"] == ["port"]
    props = spec["properties"]
    assert props["port"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    assert props["size"]["pattern"] == script.QUANTITY_PATTERN
    assert props["since"] == {"type": "string", "format": "date-time", "nullable": True}
    assert props["items"] == {"type": "array", "items": {"type": "string"}}
    assert props["ports"] == {"type": "array", "items": {"type": "object"}, "x-kubernetes-patch-merge-key": "port", "x-kubernetes-patch-strategy": "merge"}
    assert props["labels"] == {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic"}


def test_static_defaults_land_on_the_named_fields():
    script = load_script()
    schema = {"properties": {"spec": {"properties": {"ports": {"items": {"properties": {"protocol": {"type": "string"}}}}}}}}
    script.set_default(schema, "spec.ports[].protocol", "TCP")
    assert schema["properties"]["spec"]["properties"]["ports"]["items"]["properties"]["protocol"]["default"] == "TCP"


def test_every_generated_kind_is_committed_with_the_generators_mark():
    script = load_script()
    directory = Path(builtin.__file__).parent
    for name, entry in script.KINDS.items():
        text = (directory / f"{name}.json").read_text()
        manifest = json.loads(text)
        assert manifest["metadata"]["annotations"] == {script.GENERATED: script.GENERATED_BY}, name
        assert script.KUBE_VERSION in script.GENERATED_BY
        assert text == script.render(manifest)
        assert manifest["spec"]["names"] == entry["names"]
        assert manifest["spec"]["group"] == entry["group"]
