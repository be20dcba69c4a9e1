"""Kueue: the queue setup among the inputs, each queued job's Workload, and whether the
pinned Kueue release (``compiler.upstream.versions.KUEUE_VERSION``) can ever admit it.

``objects``   ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass
              (CRD schema and CEL rules of the pinned release), LimitRange, RuntimeClass,
              Kueue's Configuration.resources
``workload``  the PodSets of Kueue's JobSet and TrainJob integrations and their requests
``assign``    the quota tree (ClusterQueues, Cohorts, lending and borrowing limits) and
              the scheduler's flavor assignment on an empty cluster
``verdict``   what ``trainc check`` reports (rule ``kueue``), located at the queue label
"""
