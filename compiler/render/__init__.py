"""Render: the Trainer runtime framework re-expressed as pure Python functions.

``framework`` declares the phases as interfaces a plugin implements, ``registry`` lists
the plugins in their order, ``plugins/`` holds one module per upstream plugin and
``extensions/`` trainc's opt-in ones (behaviour upstream lacks, off unless a cluster
enables it); ``pipeline`` renders one TrainJob, ``webhooks`` has the admission checks
beside the plugins they call, and ``info``, ``runtime_info``, ``resources`` and
``upsert`` are the data and helpers the plugins share.
"""
