package main

import (
	"context"
	"encoding/json"
	_ "unsafe" // go:linkname

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app/options"
	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/validation"
	"github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/fake"
	informers "github.com/kubeflow/mpi-operator/pkg/client/informers/externalversions"
	"github.com/kubeflow/mpi-operator/pkg/controller"
)

//go:linkname v2NewWorker github.com/kubeflow/mpi-operator/pkg/controller.(*MPIJobController).newWorker
func v2NewWorker(c *controller.MPIJobController, job *kubeflow.MPIJob, index int) *corev1.Pod

//go:linkname v2NewLauncherPodTemplate github.com/kubeflow/mpi-operator/pkg/controller.(*MPIJobController).newLauncherPodTemplate
func v2NewLauncherPodTemplate(c *controller.MPIJobController, job *kubeflow.MPIJob) corev1.PodTemplateSpec

//go:linkname v2NewLauncherJob github.com/kubeflow/mpi-operator/pkg/controller.(*MPIJobController).newLauncherJob
func v2NewLauncherJob(c *controller.MPIJobController, job *kubeflow.MPIJob) *batchv1.Job

//go:linkname v2NewConfigMap github.com/kubeflow/mpi-operator/pkg/controller.newConfigMap
func v2NewConfigMap(job *kubeflow.MPIJob, workerReplicas int32, clusterDomain string) *corev1.ConfigMap

func newV2Controller() *controller.MPIJobController {
	client := fake.NewSimpleClientset()
	kubeClient := k8sfake.NewSimpleClientset()
	i := informers.NewSharedInformerFactory(client, 0)
	k := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	c, err := controller.NewMPIJobControllerWithClock(context.Background(), kubeClient, client, nil, nil,
		k.Core().V1().ConfigMaps(), k.Core().V1().Secrets(), k.Core().V1().Services(),
		k.Batch().V1().Jobs(), k.Core().V1().Pods(), k.Scheduling().V1().PriorityClasses(),
		i.Kubeflow().V2beta1().MPIJobs(), clock.RealClock{}, &options.ServerOption{})
	if err != nil {
		fail(err)
	}
	return c
}

// runMPIv2: validation.ValidateMPIJob after the defaults (the controller defaults the
// job, then validates it, in syncHandler), then the worker pods, the launcher Job's pod
// template, the launcher Job's run fields and the ConfigMap mounted at /etc/mpi.
func runMPIv2(id string, raw json.RawMessage) result {
	job := &kubeflow.MPIJob{}
	if err := json.Unmarshal(raw, job); err != nil {
		return result{ID: id, Error: err.Error()}
	}
	kubeflow.SetObjectDefaults_MPIJob(job)
	if errs := validation.ValidateMPIJob(job); len(errs) > 0 {
		return result{ID: id, Error: errs.ToAggregate().Error()}
	}
	c := newV2Controller()
	var workers int32
	if spec := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker]; spec != nil && spec.Replicas != nil {
		workers = *spec.Replicas
	}
	res := result{ID: id, Files: map[string]string{}, Services: map[string]string{}}
	for i := 0; i < int(workers); i++ {
		res.Pods = append(res.Pods, v2NewWorker(c, job, i))
	}
	template := v2NewLauncherPodTemplate(c, job)
	template.ObjectMeta.Name = job.Name + "-launcher"
	res.Pods = append(res.Pods, &corev1.Pod{ObjectMeta: template.ObjectMeta, Spec: template.Spec})
	launcher := v2NewLauncherJob(c, job)
	launcher.Spec.Template = corev1.PodTemplateSpec{}
	res.Jobs = map[string]any{"launcher": map[string]any{
		"backoffLimit":            launcher.Spec.BackoffLimit,
		"activeDeadlineSeconds":   launcher.Spec.ActiveDeadlineSeconds,
		"ttlSecondsAfterFinished": launcher.Spec.TTLSecondsAfterFinished,
		"suspend":                 launcher.Spec.Suspend,
	}}
	cm := v2NewConfigMap(job, workers, "")
	for key, value := range cm.Data {
		res.Files["/etc/mpi/"+key] = value
	}
	return res
}
