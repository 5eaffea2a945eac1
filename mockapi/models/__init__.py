"""Pydantic models of the kinds we serve, one module per group-version, and the CRD generator.

* :mod:`mockapi.models.devmgmt_v1alpha1` — the devmgmtproto.k8s.io/v1alpha1 kinds (typed access,
  e.g. allocator input; the server itself stores plain dicts).
* :mod:`mockapi.models.crdgen` — ``schemas/*.yaml`` generated from those models.
"""
