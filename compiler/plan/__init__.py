"""The stage chains and the driver that runs them over build plans.

``build_plan`` (the plans of a command: PATHs, or one per project cluster), ``stages``
(the render chain: load -> overlays -> admit -> resolve -> render -> output overlays ->
GitOps hints -> output admission -> cluster checks), ``compile`` (admission, resolution
and render), ``outputs`` (the create path of the rendered objects), ``gitops`` (the
delivery-hint annotations, a stage), ``check`` (the check chain: the validation stages),
``driver`` (one entry point: a chain over plans, by chunks or whole), ``chunks`` and
``check_chunks`` (how a plan is cut into chunks, rendered or checked in ``-j`` processes,
cached and merged) and ``policy_testing`` (``trainc policy test``). The records the
stages hand on are in :mod:`compiler.model`.
"""
