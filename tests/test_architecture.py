"""The layers of DESIGN.md as import contracts: a machine checks the architecture."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mockapi"
# The base layer's own module graph: what each base module (or package) may import from the others.
# Everything may import `errors` (the one error type). Leaves first; an edge not written here is a finding.
BASE_GRAPH = {
    "errors": set(),
    "names": set(),  # names, label keys and values: shared by schema/meta.py and selectors
    "clock": set(),
    "jsonpath": set(),
    "models": set(),
    "quantity": set(),
    "watchwire": set(),
    "gvk": set(),
    "decoding": set(),
    "patch": set(),
    "protobuf": set(),
    "wire": set(),
    "faults": set(),  # users' fault rules: the control API (http) holds them, the dispatcher consults them
    "cel": {"protobuf", "quantity"},
    "schema": {"names", "cel", "quantity", "wire"},
    # go_quote (Go's strconv.Quote) lives in schema's Go rendering module; selectors may use that one,
    # no other schema internals.
    "selectors": {"names", "schema.goformat"},
    "fieldmanager": {"decoding", "schema", "wire"},
}
BASE = set(BASE_GRAPH)
LAYERS = {
    # layer: the mockapi layers it may import (besides itself and the base modules)
    "base": set(),
    "store": set(),
    "registry": {"store"},
    "http": {"registry"},
    "controllers": {"client"},
}


def layer_of(module: str) -> str:
    top = module.split(".")[1] if module.count(".") else ""
    return "base" if top in BASE else top


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mockapi"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("mockapi"))
    return found


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        name = "mockapi." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        yield name.removesuffix(".__init__"), path


@pytest.mark.parametrize("module, path", list(modules()), ids=lambda v: str(v) if isinstance(v, str) else "")
def test_each_module_imports_only_its_own_layer_and_the_layers_below(module, path):
    layer = layer_of(module)
    if layer not in LAYERS:
        return  # the composition root (app, cli, loader, settings) may import anything
    allowed = LAYERS[layer] | {layer, "base"}
    for imported in imports(path):
        target = layer_of(imported)
        if imported == "mockapi" or imported == "mockapi.__version__":
            continue
        assert target in allowed, f"{module} ({layer}) imports {imported} ({target})"


def imported_names(path: Path) -> set[str]:
    """Each name an import binds, in full: ``from mockapi.a import b`` is ``mockapi.a.b``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mockapi"):
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("mockapi"))
    return found


def base_import_allowed(own: str, imported: str) -> bool:
    dotted = imported.removeprefix("mockapi.")
    allowed = BASE_GRAPH[own] | {"errors", own}
    return _base_target(imported) is None or any(dotted == a or dotted.startswith(a + ".") for a in allowed)


def test_the_base_graph_check_itself():
    assert base_import_allowed("selectors", "mockapi.names.qualified_name_errors")
    assert base_import_allowed("selectors", "mockapi.schema.goformat.go_quote")
    assert not base_import_allowed("selectors", "mockapi.schema.meta.qualified_name_errors")
    assert not base_import_allowed("selectors", "mockapi.schema")
    assert not base_import_allowed("names", "mockapi.schema.meta")
    assert base_import_allowed("names", "mockapi.errors")
    assert base_import_allowed("schema", "mockapi.store")  # layers are the other test's business


def _base_target(imported: str) -> str | None:
    parts = imported.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in BASE else None


@pytest.mark.parametrize("module, path", list(modules()), ids=lambda v: str(v) if isinstance(v, str) else "")
def test_each_base_module_imports_only_what_the_base_graph_allows(module, path):
    own = _base_target(module)
    if own is None:
        return
    for imported in imported_names(path):
        assert base_import_allowed(own, imported), (
            f"{module} (base: {own}) imports {imported}; the base graph allows {sorted(BASE_GRAPH[own] | {'errors'})}"
        )


def _module_graph() -> dict[str, set[str]]:
    """module → the mockapi modules it imports anywhere in its text (function-local imports and
    ``TYPE_CHECKING`` blocks included: a circle hidden in a function is still a circle)."""
    known = dict(modules())
    graph = {}
    for module, path in known.items():
        edges = set()
        for imported in imports(path):
            while imported and imported not in known:
                imported = imported.rpartition(".")[0]
            if imported and imported != module:
                edges.add(imported)
        graph[module] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle, or []. A package's ``__init__`` importing its own submodules (re-exports)
    is not a circle unless a submodule imports the package back."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return []


def test_the_cycle_check_itself():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_module_imports_itself_back_through_others():
    graph = _module_graph()
    # a package's __init__ re-exporting its submodules is the package's face, not a dependency
    for module in graph:
        if (PACKAGE / Path(*module.split(".")[1:]) / "__init__.py").exists():
            graph[module] = {t for t in graph[module] if not t.startswith(module + ".")}
    assert _cycle(graph) == []


# Within the registry: the strategies and their hooks see the narrow Cluster handle, never the
# generic REST code that calls them.
REGISTRY_HOOK_MODULES = ("strategy", "cluster", "namespaces", "crds", "devices", "pods", "kinds")


@pytest.mark.parametrize("name", REGISTRY_HOOK_MODULES)
def test_strategies_never_see_the_registry(name):
    path = PACKAGE / "registry" / f"{name}.py"
    assert path.exists()
    for imported in imports(path):
        assert not imported.startswith(("mockapi.registry.rest", "mockapi.registry.reset")), f"registry.{name} imports {imported}"
