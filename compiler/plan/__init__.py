"""The build plan: what a command works on, and the stage chain every verb runs.

``build_plan`` (PATHs, or one plan per project cluster), ``stages`` (load -> overlays
-> admit -> resolve -> render -> output overlays -> cluster checks), ``compile``
(admission, resolution and render), ``outputs`` (the create path of the rendered
objects), ``check`` (the validation stages and rule names), ``gitops`` (the delivery-hint
annotations, a stage) and ``policy_testing`` (``trainc policy test``).
"""
