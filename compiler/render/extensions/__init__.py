"""Opt-in extensions: behaviour Kubeflow Trainer v2.3.0 does not have, rendered by trainc.

Everything under ``compiler/render/plugins/`` reproduces upstream; everything here goes
beyond it, and only runs for a runtime that declares it (``base.DECLARATION``) in a
cluster whose ``trainc.yaml`` entry enables it (``extensions: [...]``). One module per
extension, its test beside it; ``catalog`` lists them and turns a runtime's annotations
into plugins or located problems.
"""
