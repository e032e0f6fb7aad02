"""citebound's model training pipeline (`make models`): never imported at run time."""
