"""Resolve: find the runtime each TrainJob references (``runtimes``), and v2.0.0's
TrainJob name rule (``names``).
"""
