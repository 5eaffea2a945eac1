"""The three PATCH bodies kube-apiserver accepts besides apply, applied to plain dicts.

- :func:`merge_patch` — ``application/merge-patch+json`` (RFC 7386, as evanphx/json-patch v4 does it).
- :func:`json_patch` — ``application/json-patch+json`` (RFC 6902, with evanphx/json-patch v4's
  leniencies, which kube-apiserver inherits: ``replace`` of a missing object key adds it, negative
  array indices count from the end, ``test`` for ``null`` passes on a missing key).
- :func:`strategic_merge_patch` — ``application/strategic-merge-patch+json``, a port of the apply
  half of ``k8s.io/apimachinery/pkg/util/strategicpatch``, reading patch metadata from the kind's
  OpenAPI schema (``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``).

All three are pure: they never mutate their inputs and share no containers with them (unless asked:
``in_place``, or a merge patch's ``share``, which leaves the target alone and shares with it what
the patch does not touch). Errors are
raised as kube-apiserver words them (``k8s.io/apiserver/pkg/endpoints/handlers/patch.go``). Where
kube answers bad input with a 500 (unknown SMP directives fall through to a plain error there), this
server answers 400 with the same message.
"""

from mockapi.patch.jsonpatch import (
    MAX_COPY_BYTES,
    MAX_JSON_PATCH_OPERATIONS,
    PATCH_REJECTED,
    json_patch,
)
from mockapi.patch.merge import merge_patch
from mockapi.patch.strategic import strategic_merge_patch

__all__ = ["merge_patch", "json_patch", "strategic_merge_patch", "PATCH_REJECTED", "MAX_JSON_PATCH_OPERATIONS", "MAX_COPY_BYTES"]
