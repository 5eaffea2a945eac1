"""The ``scale`` subresource of the apps workloads and ReplicationControllers (kube's ``ScaleREST``):
an ``autoscaling/v1`` Scale read from and written to the object's ``spec.replicas``.

GET builds the Scale (``spec.replicas``, ``status.replicas``, and ``status.selector``: the
object's label selector as a string); PUT and PATCH change ``spec.replicas`` only, through a
normal update of the object (so generation counts it), with the Scale's ``resourceVersion`` as a
precondition when given. Custom resources' scale subresource is not served.
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.selectors import LabelSelector

SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}


def scale_of(obj: dict) -> dict:
    meta = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
    scale_status: dict[str, Any] = {"replicas": status.get("replicas", 0)}
    selector = spec.get("selector")
    if obj.get("kind") == "ReplicationController" and isinstance(selector, dict):  # a plain label map
        selector = {"matchLabels": selector}
    selector = selector_string(selector)
    if selector:
        scale_status["selector"] = selector
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": {"replicas": spec.get("replicas", 0)}, "status": scale_status}


def selector_string(selector: Any) -> str:
    """metav1.LabelSelectorAsSelector(selector).String(): requirements sorted by key ("" where
    the selector converts to none)."""
    return LabelSelector.render(selector) or ""


def replicas_of(scale: Any, name: str) -> int:
    """The replicas a Scale body asks for, validated as kube's ValidateScale."""
    if not isinstance(scale, dict):
        raise errors.bad_request("the body of the request is not a Scale object")
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise errors.bad_request(f"Scale.autoscaling \"{name}\" is invalid: spec.replicas must be an integer")
    if replicas < 0:
        problem = errors.FieldError("invalid", "spec.replicas", "must be greater than or equal to 0", value=replicas)
        raise errors.invalid("Scale", "autoscaling", name, [problem])
    return replicas
