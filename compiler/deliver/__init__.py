"""Delivery steps around the compiler: diffs, explain, the stale-output check, Argo CD, apply.

* :mod:`compiler.deliver.diff` — semantic diff of two renders, impact of input changes;
* :mod:`compiler.deliver.git_revision` — render a revision in a temporary worktree;
* :mod:`compiler.deliver.diff_format` — the diff as text or as Markdown for a PR comment;
* :mod:`compiler.deliver.version_diff` — ``trainc diff --between-versions``;
* :mod:`compiler.deliver.explain` — ``trainc explain``: where a rendered field came from;
* :mod:`compiler.deliver.stale` — ``trainc check --rendered``: is ``rendered/`` current?
* :mod:`compiler.deliver.staged` — ``render --staged``: the output folder against git's index;
* :mod:`compiler.deliver.argocd` — the Argo CD Config Management Plugin's contract
  (settings, parameters, the checkout, ``generate``);
* :mod:`compiler.deliver.apply` — ``trainc apply``: server-side apply, live diff, prune.

Each takes what the driver (:mod:`compiler.plan.driver`) made, or asks it for renders.
"""
