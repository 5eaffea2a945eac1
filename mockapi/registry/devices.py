"""The device kinds' own rules: CEL constraints bounded by cost, and who may hold a
DevicePrivilegedClaim.

- **Constraints** (DeviceClaim, DevicePrivilegedClaim, DeviceClass, DeviceClaimTemplate): a CEL constraint whose
  estimated worst-case cost exceeds DRA's limit is refused, as DRA's ``validateCELSelector`` does
  (``Forbidden: too complex, exceeds cost limit``). Expressions that do not compile are left to the
  allocator (ConstraintCompileError, ALLOCATOR.md rule 4); on update, expressions the old object
  already had are not checked again (stored objects stay writable, as kube ratchets).
- **Privileged claims**: a DevicePrivilegedClaim grants admin access to devices, so only a
  namespace labelled ``devmgmtproto.k8s.io/admin-access=true`` may hold one (403 Forbidden on
  create otherwise; ALLOCATOR.md, DevicePrivilegedClaim).
"""

from __future__ import annotations

from mockapi import cel, errors
from mockapi.registry.cluster import Cluster
from mockapi.registry.strategy import CustomResourceStrategy

GROUP = "devmgmtproto.k8s.io"
ADMIN_ACCESS_LABEL = "devmgmtproto.k8s.io/admin-access"
NAMESPACES = errors.GroupResource("", "namespaces")


class DeviceConstraintsStrategy(CustomResourceStrategy):
    claim_spec_at = "spec"
    pure_create = True  # the constraints' cost, from the spec alone (a privileged claim's admission is apart)
    validated_fields = ("spec",)  # expressions an update keeps are not checked again anyway

    def validate(self, obj: dict, old: dict | None) -> list[errors.FieldError]:
        at = self.claim_spec_at
        known = {expression for _, expression in constraints_of(old, at=at)} if old is not None else set()
        return [
            errors.FieldError("forbidden", path, "too complex, exceeds cost limit")
            for path, expression in constraints_of(obj, at=at)
            if expression not in known and _over_cost_limit(expression)
        ]


class DeviceClaimTemplateStrategy(DeviceConstraintsStrategy):
    claim_spec_at = "spec.spec"  # the claims made from it are checked again when created


class DevicePrivilegedClaimStrategy(DeviceConstraintsStrategy):
    def admit(self, cluster: Cluster, obj: dict) -> None:
        namespace = obj["metadata"]["namespace"]
        stored = cluster.get(NAMESPACES, "", namespace)
        if stored is None or (stored.labels or {}).get(ADMIN_ACCESS_LABEL) != "true":
            raise errors.forbidden(
                self.rt.group_resource,
                obj["metadata"].get("name", ""),
                f'namespace "{namespace}" does not allow admin access to devices: label it {ADMIN_ACCESS_LABEL}=true',
            )


def constraints_of(obj: dict, *, at: str = "spec") -> list[tuple[str, str]]:
    """(field path, expression) of every CEL constraint in a claim or class (``at``: where the
    DeviceClaimSpec is, ``spec.spec`` in a template)."""
    spec: object = obj
    for part in at.split("."):
        spec = spec.get(part) if isinstance(spec, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    found = [(f"{at}.constraints", spec.get("constraints"))]
    for index, entry in enumerate(spec.get("claims") or []):
        if not isinstance(entry, dict):
            continue
        found.append((f"{at}.claims[{index}].constraints", entry.get("constraints")))
        for alternative, detail in enumerate(entry.get("oneOf") or []):
            if isinstance(detail, dict):
                found.append((f"{at}.claims[{index}].oneOf[{alternative}].constraints", detail.get("constraints")))
    return [(path, expression) for path, expression in found if isinstance(expression, str)]


def _over_cost_limit(expression: str) -> bool:
    try:
        cel.compile(expression)
    except cel.CostLimitExceeded:
        return True
    except cel.CompileError:
        return False
    return False
