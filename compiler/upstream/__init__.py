"""The pinned upstream: its artifacts and the facts trainc reads from them.

Artifacts (CRDs, OpenAPI document, Go type facts, script templates) are dependencies,
fetched at pinned versions by ``scripts/fetch-upstream.sh`` into a cache outside the
repository, never committed (``artifacts``, ``openapi``, ``typeinfo``, ``templates``).
``names`` holds the Trainer's names and constants; ``versions`` the emulated Trainer
releases (``TRAINER_VERSIONS``, the one list of them) and the gates between them.
"""
