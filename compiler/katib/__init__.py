"""Katib (the pinned release, upstream/versions.py KATIB_VERSION): Experiments among the
inputs, Katib's defaulting and validating webhooks (experiment.py), the trials it could
create and their substituted TrainJobs (trials.py), Go's JSON text they are made from
(gojson.py)."""
