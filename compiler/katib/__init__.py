"""Katib (the pinned release, upstream/versions.py KATIB_VERSION): Katib's decoding,
defaulting and validating webhooks (experiment.py), the trials it could create and their
substituted TrainJobs (trials.py), the unstructured decoder's number rule (gojson.py),
Experiments among the inputs and their trials' TrainJobs (inputs.py), the peak requests at
parallelTrialCount (peak.py)."""
