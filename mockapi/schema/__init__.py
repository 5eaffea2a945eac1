"""Schema machinery for every served kind: structural pruning, defaulting and validation
(:mod:`.structural`), ObjectMeta rules (:mod:`.meta`) and CustomResourceDefinition checks (:mod:`.crd`)."""
