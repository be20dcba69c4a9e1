"""The test suite is the checkout's reference: it reads the upstream artifacts from the
cache that `make setup` fills (the whole Go modules: some tests read module files the
trainc-upstream package does not ship), so the cache is named explicitly, which puts it
before an installed trainc-upstream package (compiler/upstream/artifacts.py). The
installed package is tested as users get it by tests/dist/."""

from __future__ import annotations

import os

from compiler.upstream.artifacts import cache_root

if (cache_root() / "upstream").is_dir():
    os.environ.setdefault("TRAINC_CACHE", str(cache_root()))
