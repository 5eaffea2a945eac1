"""storage.k8s.io/v1 StorageClass as kube-apiserver stores it (``pkg/apis/storage/validation``).
No provisioner runs: a StorageClass is stored and listed, and no PersistentVolume is made.

- **Defaults** (``SetDefaults_StorageClass``, in the schema): ``reclaimPolicy: Delete``,
  ``volumeBindingMode: Immediate``.
- **Validation**: ``provisioner`` is required (schema) and at most 63 characters;
  ``reclaimPolicy`` is ``Delete`` or ``Retain``; ``volumeBindingMode`` is ``Immediate`` or
  ``WaitForFirstConsumer``. On update ``parameters``, ``provisioner`` and ``reclaimPolicy`` are
  forbidden to change and ``volumeBindingMode`` is immutable.
- The NAME column says ``(default)`` after the class annotated
  ``storageclass.kubernetes.io/is-default-class: "true"`` (kubectl's printer does the same).
"""

from __future__ import annotations

from mockapi import errors
from mockapi.registry.strategy import Strategy, not_supported

GROUP = "storage.k8s.io"
DEFAULT_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
MAX_PROVISIONER = 63


class StorageClassStrategy(Strategy):
    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        problems = []
        provisioner = obj.get("provisioner")
        if isinstance(provisioner, str) and len(provisioner) > MAX_PROVISIONER:
            problems.append(errors.FieldError("too_long", "provisioner", f"may not be more than {MAX_PROVISIONER} bytes"))
        if obj.get("reclaimPolicy") not in RECLAIM_POLICIES:
            problems.append(not_supported("reclaimPolicy", obj.get("reclaimPolicy"), RECLAIM_POLICIES))
        if obj.get("volumeBindingMode") not in BINDING_MODES:
            problems.append(not_supported("volumeBindingMode", obj.get("volumeBindingMode"), BINDING_MODES))
        if old is not None:
            for key in ("parameters", "provisioner", "reclaimPolicy"):
                if obj.get(key) != old.get(key):
                    problems.append(errors.FieldError("forbidden", key, f"updates to {key} are forbidden."))
            if obj.get("volumeBindingMode") != old.get("volumeBindingMode"):
                problems.append(errors.FieldError("invalid", "volumeBindingMode", "field is immutable", value=obj.get("volumeBindingMode")))
        return problems
