"""Stage 4, validate: CRD schema and CEL rules, Trainer admission checks, user policies."""
