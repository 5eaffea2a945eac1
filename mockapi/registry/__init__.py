"""The type registry and the generic REST semantics (see :mod:`mockapi.registry.rest`)."""
