"""Names the Trainer v2.3.0 controller uses (its pkg/constants and plugin constants).

The names more than one module needs live here; a name only one plugin uses (an env
variable it sets, say) stays in that plugin's module, beside the code that uses it.
"""

TRAINER_API_VERSION = "trainer.kubeflow.org/v1alpha1"
TRAINER_GROUP = "trainer.kubeflow.org"
TRAINJOB_KIND = "TrainJob"
TRAINING_RUNTIME_KIND = "TrainingRuntime"
CLUSTER_TRAINING_RUNTIME_KIND = "ClusterTrainingRuntime"
TRAINJOB_CONTROLLER = "trainer.kubeflow.org/trainjob-controller"

JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"
JOBSET_KIND = "JobSet"

LABEL_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
NODE = "node"
LAUNCHER = "launcher"

ENV_STORAGE_URI = "STORAGE_URI"
VOLUME_INITIALIZER = "initializer"

COSCHEDULING_API_VERSION = "scheduling.x-k8s.io/v1alpha1"
COSCHEDULING_POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_API_VERSION = "scheduling.volcano.sh/v1beta1"
VOLCANO_GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
POD_GROUP_KIND = "PodGroup"

# runtime labels the webhooks read
WEBHOOK_VALIDATION_LABEL = "trainer.kubeflow.org/webhook-validation"
SUPPORT_LABEL = "trainer.kubeflow.org/support"
DEPRECATION_POLICY_URL = (
    "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
)
# the same page before v2.3.0 moved the docs to trainer.kubeflow.org
DEPRECATION_POLICY_URL_V2_1 = (
    "https://www.kubeflow.org/docs/components/trainer/operator-guides/runtime/"
    "#runtime-deprecation-policy"
)
