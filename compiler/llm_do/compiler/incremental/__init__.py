"""What a build keeps between builds of the same project so that an edit costs only what it
changed: the canonical text of the lock's nodes (`node_packs`, `splice`)."""
