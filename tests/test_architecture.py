"""The layers of DESIGN.md as import contracts: a machine checks the architecture."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mockapi"
BASE = {"errors", "gvk", "clock", "wire", "watchwire", "decoding", "selectors", "patch", "schema", "models", "fieldmanager", "jsonpath", "protobuf", "cel", "quantity"}
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
