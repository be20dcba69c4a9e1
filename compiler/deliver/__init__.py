"""Delivery steps around the compiler: diff against a git revision, stale-output check.

* :mod:`compiler.deliver.diff` — semantic diff of two renders, impact of input changes;
* :mod:`compiler.deliver.git_revision` — render a revision in a temporary worktree;
* :mod:`compiler.deliver.diff_format` — the diff as text or as Markdown for a PR comment;
* :mod:`compiler.deliver.stale` — ``trainc check --rendered``: is ``rendered/`` current?
"""
