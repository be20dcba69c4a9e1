"""Upstream artifacts (CRDs, OpenAPI document, Go type facts, script templates).

They are dependencies, fetched at pinned versions by ``scripts/fetch-upstream.sh``
into a cache outside the repository, never committed.
"""
