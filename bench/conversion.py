"""In-process cost of serving a multi-version CRD in each version, beside a single-version kind.

    python3 bench/conversion.py

Prints microseconds per registry.get and per registry.list of 1,000 objects (best of 5): a
ConfigMap (single-version: no conversion code runs), a Gizmo read in its storage version (one
``startswith`` per object) and read through the other version (the stored apiVersion prefix is
swapped). A benchmark, not a test.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockapi import app as app_  # noqa: E402
from mockapi.registry.options import ListOptions, WriteOptions  # noqa: E402

OBJECTS = 1000
SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def build():
    server = app_.build()
    crds = server.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    versions = [{"name": v, "served": True, "storage": v == "v2", "schema": SCHEMA} for v in ("v1", "v2")]
    names = {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"}
    spec = {"group": "example.com", "scope": "Namespaced", "names": names, "versions": versions}
    server.registry.create(crds, "", {"metadata": {"name": "gizmos.example.com"}, "spec": spec}, WriteOptions())
    configmaps = server.types.by_kind("", "v1", "ConfigMap")
    v1, v2 = (server.types.lookup("example.com", v, "gizmos") for v in ("v1", "v2"))
    for i in range(OBJECTS):
        server.registry.create(configmaps, "default", {"metadata": {"name": f"o{i}"}, "data": {"k": "v" * 1000}}, WriteOptions())
        server.registry.create(v2, "default", {"metadata": {"name": f"o{i}"}, "spec": {"k": "v" * 1000}}, WriteOptions())
    return server, [("ConfigMap (one version)", configmaps), ("Gizmo v2 (storage)", v2), ("Gizmo v1 (converted)", v1)]


def best(call, number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=5)) / number * 1e6


def main() -> None:
    server, cases = build()
    print(f"{'kind':<26}{'get us':>10}{f'list({OBJECTS}) us':>18}")
    for label, rt in cases:
        get = best(lambda: server.registry.get(rt, "default", "o500"), 20000)
        listed = best(lambda: server.registry.list(rt, "default", ListOptions()), 50)
        print(f"{label:<26}{get:>10.2f}{listed:>18.0f}")


if __name__ == "__main__":
    main()
