"""The built-in kinds cost nothing until used: served from the manifests' index, each kind's schema
read on first use — and served exactly as if every manifest had been read at start-up.

Not timed (bench/startup.py measures): which schemas a fresh process has read is checked in a
subprocess; what is served (types, OpenAPI, discovery) is compared with the eager path in process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

from mockapi import app, gvk
from mockapi.http import discovery as discovery_
from mockapi.http import openapi
from mockapi.registry import builtin, kinds
from mockapi.registry.strategy import Strategy
from mockapi.registry.types import TypeRegistry
from mockapi.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
# What start-up itself writes (the seed): the default namespaces (and their ServiceAccounts), the
# system PriorityClasses, our CRDs, the APIServices of the built-in group-versions.
SEEDED = {"Namespace", "ServiceAccount", "PriorityClass", "CustomResourceDefinition", "APIService"}


def _eager_types() -> list[gvk.ResourceType]:
    return [rt for manifest in app.builtin_manifests() for rt in gvk.from_crd(manifest, builtin=True)]


def _registry(types: list[gvk.ResourceType]) -> TypeRegistry:
    registry = TypeRegistry()
    for rt in types:
        registry.register(rt)
    return registry


def _read_schemas(rts) -> set[str]:
    return {rt.kind for rt in rts if not callable(rt.__dict__["_schema"])}


def test_the_index_says_what_the_manifests_say():
    assert builtin.index() == builtin.build_index(), "a manifest changed: rewrite the index with `python3 -m mockapi.registry.builtin`"


def test_types_from_the_index_equal_types_read_from_the_full_manifests():
    lazy, eager = app.builtin_types(), _eager_types()
    assert [(rt.group, rt.version, rt.plural) for rt in lazy] == [(rt.group, rt.version, rt.plural) for rt in eager]
    assert lazy == eager  # every field, the schema too (read now)
    assert [orjson.dumps(rt.schema) for rt in lazy] == [orjson.dumps(rt.schema) for rt in eager]


def test_a_schema_is_read_on_first_use_only():
    (deployment,) = [rt for rt in app.builtin_types() if rt.kind == "Deployment"]
    assert not _read_schemas([deployment])
    assert deployment.group_resource.resource == "deployments" and deployment.subresources == {"scale", "status"}  # no schema needed
    assert not _read_schemas([deployment])
    schema = deployment.schema
    assert _read_schemas([deployment]) == {"Deployment"} and deployment.schema is schema
    containers = schema["properties"]["spec"]["properties"]["template"]["properties"]["spec"]["properties"]["containers"]
    assert containers["type"] == "array"  # the pod template's spec is the Pod's


def test_openapi_and_discovery_are_the_same_bytes_as_from_the_full_manifests():
    lazy, eager = _registry(app.builtin_types()), _registry(_eager_types())
    lazy_api, eager_api = openapi.OpenAPI(lazy), openapi.OpenAPI(eager)
    assert lazy_api.root() == eager_api.root()
    for key in orjson.loads(eager_api.root())["paths"]:
        assert lazy_api.document(key) == eager_api.document(key), key
    lazy_discovery, eager_discovery = discovery_.Discovery(lazy, server_address="h:1"), discovery_.Discovery(eager, server_address="h:1")
    assert _discovery(lazy_discovery, eager.groups()) == _discovery(eager_discovery, eager.groups())


def _discovery(discovery: discovery_.Discovery, groups: dict[str, list[str]]) -> list[bytes]:
    documents = [discovery.api_versions(), discovery.group_list(), discovery.aggregated(core=True), discovery.aggregated(core=False)]
    for group, versions in groups.items():
        documents += [discovery.group(group)] if group else []
        documents += [discovery.resource_list(group, version) for version in versions]
    return documents


def _last_json_line(script: str):
    """What a fresh interpreter running ``script`` printed last, as JSON (what start-up left loaded)."""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_building_a_server_reads_only_the_schemas_of_the_kinds_it_seeds():
    script = (
        "import json\nfrom mockapi import app\nfrom mockapi.settings import Settings\n"
        "server = app.build(Settings(allocator=True))\n"
        "read = sorted({rt.kind for rt in server.types.all() if rt.builtin and not callable(rt.__dict__['_schema'])})\n"
        "print(json.dumps({'read': read, 'yaml': __import__('sys').modules.get('yaml') is not None}))"
    )
    read = set(_last_json_line(script)["read"])
    assert read <= SEEDED, f"start-up read the schemas of {sorted(read - SEEDED)}"


def test_building_a_server_imports_no_controller_until_its_task_starts():
    script = (
        "import json, sys\nfrom mockapi import app\nfrom mockapi.settings import Settings\n"
        "server = app.build(Settings(allocator=True, scheduler=True, kubelet=True, garbage_collector=True))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mockapi.controllers'))))"
    )
    loaded = set(_last_json_line(script))
    assert not {m for m in loaded if m.startswith(("mockapi.controllers.allocator", "mockapi.controllers.scheduler", "mockapi.controllers.pods", "mockapi.controllers.kubelet", "mockapi.controllers.gc"))}


def test_a_second_server_in_the_process_shares_the_first_ones_schemas():
    first, second = app.build(Settings()), app.build(Settings())
    kind = ("apps", "v1", "Deployment")
    assert first.types.by_kind(*kind).schema is second.types.by_kind(*kind).schema


def test_every_strategy_named_in_the_kinds_table_resolves_and_its_module_serves_that_group():
    for (group, _), name in {**kinds.BUILTIN, **kinds.CUSTOM}.items():
        cls = kinds.strategy_class(name)
        assert issubclass(cls, Strategy), name
        module = sys.modules[cls.__module__]
        assert getattr(module, "GROUP", group) == group or module.__name__.endswith(".strategy"), name


def test_building_a_server_imports_only_the_strategies_of_the_kinds_it_seeds():
    script = (
        "import json, sys\nfrom mockapi import app\nfrom mockapi.settings import Settings\n"
        "server = app.build(Settings(allocator=True))\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = set(_last_json_line(script))
    unused = {"mockapi.registry.devices", "mockapi.registry.batch", "mockapi.registry.networking", "mockapi.registry.corekinds", "mockapi.cel"}
    assert not loaded & unused


def test_the_allocation_policies_checked_at_build_are_the_allocators():
    from mockapi.controllers.allocator import score

    assert app._ALLOCATION_POLICIES == score.POLICIES
