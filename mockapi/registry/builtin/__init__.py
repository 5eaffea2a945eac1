"""The kinds the server ships — core v1 and apiextensions.k8s.io/v1 — written as CRD manifests.

Each ``*.yaml`` (written by hand) and ``*.json`` (generated) file beside this module is one
``apiextensions.k8s.io/v1`` CustomResourceDefinition-shaped manifest. ``mockapi.gvk.from_crd(manifest, builtin=True)``
turns it into the served :class:`~mockapi.gvk.ResourceType`. So a core kind and a CRD applied at
run time follow the same path: validation, pruning and reporting of unknown fields, defaulting,
strategic merge patch, OpenAPI (``kubectl explain``), printer columns and field selectors.

Conventions:

* ``metadata.name`` is ``<plural>.<group>``, with ``core`` standing for the empty core group
  (``pods.core``, ``customresourcedefinitions.apiextensions.k8s.io``). The name is internal and
  never served. Only ``spec`` matters.
* Schemas are structural. Every node has a ``type`` except quantities, which are
  ``anyOf: [integer, string]`` with ``x-kubernetes-int-or-string: true`` and the Kubernetes
  quantity ``pattern``. ``metadata`` is ``type: object`` only. Timestamps are
  ``format: date-time`` and ``nullable: true``, because Go clients send a zero ``metav1.Time`` as
  ``null``.
* Strategic merge patch metadata (``x-kubernetes-patch-strategy`` and
  ``x-kubernetes-patch-merge-key``) matches what kube-apiserver's OpenAPI publishes for core/v1.
  ``x-kubernetes-list-type`` is left out: kube-apiserver validates built-in kinds with
  hand-written code, not their listType. Enforcing it here would reject objects that kube accepts,
  such as repeated Pod condition types.
* The kinds named in ``scripts/gen-builtin-schemas`` are generated from Kubernetes' published API
  definitions (docs/builtin-kinds.md), as JSON (parsed ten times faster than YAML at start-up); a
  pod template's ``spec`` there is filled in from the Pod's schema below when the manifests load.
* Parts of core/v1 that are not modelled are kept, not rejected. The Pod's ``spec``, each
  container, each volume and the Pod and Node ``status`` are
  ``x-kubernetes-preserve-unknown-fields: true``. Declared fields are still validated.
* The Pod carries the devmgmtproto prototype's extensions: ``spec.deviceClaims[]`` (name plus
  exactly one of ``claim``, ``claimName`` or ``claimTemplateName``) and
  ``spec.containers[].devices[]`` (also on ``initContainers``, which share the container schema).
  ``claim`` is a preserve-unknown placeholder object for the DeviceClaimSpec schema.
* Defaults are limited to the static ones kube-apiserver applies to a Pod (``restartPolicy``,
  ``dnsPolicy``, ``schedulerName``, ``terminationGracePeriodSeconds``, ``enableServiceLinks``,
  ``securityContext``, container ``terminationMessagePath`` / ``terminationMessagePolicy``, port
  ``protocol``) and the CRD's ``conversion``. Defaults that depend on other fields, such as
  ``imagePullPolicy`` or Secret ``type`` on update, are left to the kinds' strategies.
* ``selectableFields`` lists the field selectors kube-apiserver accepts for each kind.
  ``metadata.name`` and ``metadata.namespace`` are always accepted. The Event's ``source`` is
  computed upstream: ``source.component``, or ``reportingComponent`` when that is empty.
* ``additionalPrinterColumns`` lists the kube-apiserver columns that one JSONPath can express.
  ``Age`` is listed explicitly because, as for any CRD, it is added by default only when no column
  is given.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import orjson
import yaml

_DIRECTORY = Path(__file__).parent
PLACEHOLDER = "x-mockapi-schema"  # {x-mockapi-schema: pod-spec}: a pod template's spec (scripts/gen-builtin-schemas)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def manifests() -> list[dict[str, Any]]:
    """Every built-in manifest, parsed; fresh objects on each call, so callers may change them."""
    return orjson.loads(_serialized())


@cache
def _serialized() -> bytes:
    """All manifests, parsed once and kept as JSON bytes (which also undoes YAML anchor sharing)."""
    paths = sorted([*_DIRECTORY.glob("*.yaml"), *_DIRECTORY.glob("*.json")], key=lambda p: p.stem)
    manifests = [orjson.loads(path.read_bytes()) if path.suffix == ".json" else _load(path) for path in paths]
    pod = next(m for m in manifests if m["spec"]["group"] == "" and m["spec"]["names"]["kind"] == "Pod")
    pod_spec = pod["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    # SetDefaults_Pod, not SetDefaults_PodSpec, sets enableServiceLinks: a template has no default
    template_spec = orjson.loads(orjson.dumps(pod_spec))
    template_spec["properties"]["enableServiceLinks"].pop("default", None)
    for manifest in manifests:
        _fill(manifest, template_spec)
    return orjson.dumps(manifests)


def _fill(node: Any, pod_spec: dict[str, Any]) -> None:
    """Put the Pod's spec schema where a generated manifest's pod template has its placeholder."""
    if isinstance(node, list):
        for item in node:
            _fill(item, pod_spec)
    elif isinstance(node, dict):
        if node.get(PLACEHOLDER) == "pod-spec":
            description = node.get("description")
            node.clear()
            node.update(pod_spec, **({"description": description} if description else {}))
            return
        for value in node.values():
            _fill(value, pod_spec)


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as stream:
        return yaml.load(stream, Loader=_LOADER)  # a safe loader: plain data only
