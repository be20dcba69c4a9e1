package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	"github.com/kubeflow/training-operator/pkg/controller.v1/control"
	"github.com/kubeflow/training-operator/pkg/controller.v1/jax"
	paddlepaddle "github.com/kubeflow/training-operator/pkg/controller.v1/paddlepaddle"
	"github.com/kubeflow/training-operator/pkg/controller.v1/pytorch"
	"github.com/kubeflow/training-operator/pkg/controller.v1/tensorflow"
	"github.com/kubeflow/training-operator/pkg/controller.v1/xgboost"
	"github.com/kubeflow/training-operator/pkg/core"
	jaxwebhook "github.com/kubeflow/training-operator/pkg/webhooks/jax"
	paddlewebhook "github.com/kubeflow/training-operator/pkg/webhooks/paddlepaddle"
	pytorchwebhook "github.com/kubeflow/training-operator/pkg/webhooks/pytorch"
	tfwebhook "github.com/kubeflow/training-operator/pkg/webhooks/tensorflow"
	xgbwebhook "github.com/kubeflow/training-operator/pkg/webhooks/xgboost"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() {
	// The operator's flag defaults (cmd/training-operator.v1/main.go).
	config.Config.PyTorchInitContainerImage = config.PyTorchInitContainerImageDefault
	config.Config.PyTorchInitContainerTemplateFile = config.PyTorchInitContainerTemplateFileDefault
	config.Config.PyTorchInitContainerMaxTries = config.PyTorchInitContainerMaxTriesDefault
	config.Config.MPIKubectlDeliveryImage = config.MPIKubectlDeliveryImageDefault
}

// clusterSpecSetter is what every v1 reconciler implements for pod construction.
type clusterSpecSetter interface {
	SetClusterSpec(job interface{}, podTemplate *corev1.PodTemplateSpec, rtype, index string) error
	IsMasterRole(replicas map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, rtype kubeflowv1.ReplicaType, index int) bool
	ControllerName() string
}

type validator interface {
	ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error)
}

type kind struct {
	object     func() (runtime.Object, metav1.Object)
	replicas   func(obj runtime.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec
	defaults   func(obj runtime.Object)
	webhook    validator
	reconciler clusterSpecSetter
}

var kinds = map[string]kind{
	"PyTorchJob": {
		object: func() (runtime.Object, metav1.Object) { j := &kubeflowv1.PyTorchJob{}; return j, j },
		replicas: func(o runtime.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
			return o.(*kubeflowv1.PyTorchJob).Spec.PyTorchReplicaSpecs
		},
		defaults:   func(o runtime.Object) { kubeflowv1.SetObjectDefaults_PyTorchJob(o.(*kubeflowv1.PyTorchJob)) },
		webhook:    &pytorchwebhook.Webhook{},
		reconciler: &pytorch.PyTorchJobReconciler{},
	},
	"TFJob": {
		object: func() (runtime.Object, metav1.Object) { j := &kubeflowv1.TFJob{}; return j, j },
		replicas: func(o runtime.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
			return o.(*kubeflowv1.TFJob).Spec.TFReplicaSpecs
		},
		defaults:   func(o runtime.Object) { kubeflowv1.SetObjectDefaults_TFJob(o.(*kubeflowv1.TFJob)) },
		webhook:    &tfwebhook.Webhook{},
		reconciler: &tensorflow.TFJobReconciler{},
	},
	"XGBoostJob": {
		object: func() (runtime.Object, metav1.Object) { j := &kubeflowv1.XGBoostJob{}; return j, j },
		replicas: func(o runtime.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
			return o.(*kubeflowv1.XGBoostJob).Spec.XGBReplicaSpecs
		},
		defaults:   func(o runtime.Object) { kubeflowv1.SetObjectDefaults_XGBoostJob(o.(*kubeflowv1.XGBoostJob)) },
		webhook:    &xgbwebhook.Webhook{},
		reconciler: &xgboost.XGBoostJobReconciler{},
	},
	"PaddleJob": {
		object: func() (runtime.Object, metav1.Object) { j := &kubeflowv1.PaddleJob{}; return j, j },
		replicas: func(o runtime.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
			return o.(*kubeflowv1.PaddleJob).Spec.PaddleReplicaSpecs
		},
		defaults:   func(o runtime.Object) { kubeflowv1.SetObjectDefaults_PaddleJob(o.(*kubeflowv1.PaddleJob)) },
		webhook:    &paddlewebhook.Webhook{},
		reconciler: &paddlepaddle.PaddleJobReconciler{},
	},
	"JAXJob": {
		object: func() (runtime.Object, metav1.Object) { j := &kubeflowv1.JAXJob{}; return j, j },
		replicas: func(o runtime.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
			return o.(*kubeflowv1.JAXJob).Spec.JAXReplicaSpecs
		},
		defaults:   func(o runtime.Object) { kubeflowv1.SetObjectDefaults_JAXJob(o.(*kubeflowv1.JAXJob)) },
		webhook:    &jaxwebhook.Webhook{},
		reconciler: &jax.JAXJobReconciler{},
	},
}

// runGeneric: the webhook on the job as submitted, the defaults the controller applies
// in memory, then JobController.createNewPod's steps for every (replica type, index):
// labels, SetClusterSpec (env, init containers), the replica restart policy. Every pod
// gets a headless Service of its own name (common/service.go).
// podGroupControl is the operator's gang-scheduling decoration for --gang-scheduler-name.
func podGroupControl(gang string) control.PodGroupControlInterface {
	switch {
	case gang == "":
		return nil
	case strings.EqualFold(gang, "volcano"):
		return control.NewVolcanoControl(nil)
	default:
		return control.NewSchedulerPluginsControl(nil, gang)
	}
}

func runGeneric(id, kindName string, raw json.RawMessage, gang string) result {
	k, ok := kinds[kindName]
	if !ok {
		return result{ID: id, Error: fmt.Sprintf("unsupported kind kubeflow.org/v1 %s", kindName)}
	}
	obj, meta := k.object()
	if err := json.Unmarshal(raw, obj); err != nil {
		return result{ID: id, Error: err.Error()}
	}
	warnings, err := k.webhook.ValidateCreate(context.Background(), obj)
	if err != nil {
		return result{ID: id, Error: err.Error()}
	}
	k.defaults(obj)
	replicas := k.replicas(obj)
	types := make([]string, 0, len(replicas))
	for rtype := range replicas {
		types = append(types, string(rtype))
	}
	sort.Strings(types)
	res := result{ID: id, Warnings: warnings, Services: map[string]string{}}
	for _, rtypeName := range types {
		rtype := kubeflowv1.ReplicaType(rtypeName)
		spec := replicas[rtype]
		rt := strings.ToLower(rtypeName)
		for index := 0; index < int(*spec.Replicas); index++ {
			podTemplate := spec.Template.DeepCopy()
			name := strings.ReplaceAll(fmt.Sprintf("%s-%s-%d", meta.GetName(), rt, index), "/", "-")
			podTemplate.Name = name
			if podTemplate.Labels == nil {
				podTemplate.Labels = map[string]string{}
			}
			podTemplate.Labels[kubeflowv1.OperatorNameLabel] = k.reconciler.ControllerName()
			podTemplate.Labels[kubeflowv1.JobNameLabel] = meta.GetName()
			podTemplate.Labels[kubeflowv1.ReplicaTypeLabel] = rt
			podTemplate.Labels[kubeflowv1.ReplicaIndexLabel] = strconv.Itoa(index)
			if k.reconciler.IsMasterRole(replicas, rtype, index) {
				podTemplate.Labels[kubeflowv1.JobRoleLabel] = "master"
			}
			if err := k.reconciler.SetClusterSpec(obj, podTemplate, rt, strconv.Itoa(index)); err != nil {
				return result{ID: id, Error: "SetClusterSpec: " + err.Error()}
			}
			core.SetRestartPolicy(podTemplate, spec)
			if pgc := podGroupControl(gang); pgc != nil {
				pgc.DecoratePodTemplateSpec(podTemplate, meta, rt)
			}
			res.Pods = append(res.Pods, &corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: meta.GetNamespace(), Labels: podTemplate.Labels, Annotations: podTemplate.Annotations},
				Spec:       podTemplate.Spec,
			})
			res.Services[name] = name
		}
	}
	return res
}
