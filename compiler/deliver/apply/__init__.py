"""``trainc apply``: push what a build renders to a cluster with server-side apply.

One module per concern: :mod:`.plan` (what to send, in which order), :mod:`.client`
(kubeconfig, requests, retries, the deadline), :mod:`.answers` (what an answer must be
before it counts), :mod:`.ssa` (server-side apply of one object),
:mod:`.live` (what an apply would change, computed locally), :mod:`.immutable` (JobSet
changes its rules forbid), :mod:`.secrets` (required Secrets with generated keys),
:mod:`.applyset` (ApplySet membership and prune), :mod:`.wait` (``--wait``),
:mod:`.live_diff` (``--diff``) and :mod:`.run` (one apply, start to end).
"""
