"""Cluster and namespace overlays and their locks (format: ``overlays/README.md``).

``overlays.py`` reads ``Overlay`` documents and applies their patches to inputs or
outputs in layer order (base -> cluster -> namespace): strategic merge through
:mod:`compiler.kube.strategic_merge`, RFC 6902 through ``jsonpatch``; ``targets.py``
matches kustomize-style ``target`` selectors; ``locks.py`` enforces locked fields
against later overlays and the TrainJobs themselves.
"""
