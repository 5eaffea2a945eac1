"""``python3 -m mockapi.registry.builtin``: rewrite ``index.json`` from the manifests beside it."""

from mockapi.registry import builtin

builtin.write_index()
print(f"wrote {builtin.INDEX}")
