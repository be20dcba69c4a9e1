"""Stage 5, emit: canonical YAML, one file per object, written atomically."""
