package main

import (
	"encoding/json"
	"fmt"
	_ "unsafe" // go:linkname

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/controller.v1/mpi"
)

// The v1 MPIJob controller builds its pods in unexported functions; they are called
// here by their linker names (no copy of them lives in this repository).

//go:linkname v1NewWorker github.com/kubeflow/training-operator/pkg/controller.v1/mpi.(*MPIJobReconciler).newWorker
func v1NewWorker(jc *mpi.MPIJobReconciler, job *kubeflowv1.MPIJob, name string) *corev1.Pod

//go:linkname v1NewLauncher github.com/kubeflow/training-operator/pkg/controller.v1/mpi.(*MPIJobReconciler).newLauncher
func v1NewLauncher(jc *mpi.MPIJobReconciler, job *kubeflowv1.MPIJob, image string, gpu bool) *corev1.Pod

//go:linkname v1NewConfigMap github.com/kubeflow/training-operator/pkg/controller.v1/mpi.newConfigMap
func v1NewConfigMap(job *kubeflowv1.MPIJob, workerReplicas int32, gpu bool) *corev1.ConfigMap

//go:linkname v1IsGPULauncher github.com/kubeflow/training-operator/pkg/controller.v1/mpi.isGPULauncher
func v1IsGPULauncher(job *kubeflowv1.MPIJob) bool

// runMPIv1: the controller's validation of the spec as stored, its defaults, then the
// worker pods (getOrCreateWorker names them <job>-worker-<i>), the launcher and the
// ConfigMap the launcher mounts at /etc/mpi.
func runMPIv1(id string, raw json.RawMessage, gang string) result {
	job := &kubeflowv1.MPIJob{}
	if err := json.Unmarshal(raw, job); err != nil {
		return result{ID: id, Error: err.Error()}
	}
	if err := kubeflowv1.ValidateV1MpiJobSpec(&job.Spec); err != nil {
		return result{ID: id, Error: err.Error()}
	}
	kubeflowv1.SetObjectDefaults_MPIJob(job)
	jc := &mpi.MPIJobReconciler{}
	jc.JobController = common.JobController{Controller: jc}
	if pgc := podGroupControl(gang); pgc != nil {
		jc.Config.GangScheduling = common.GangScheduler(gang)
		jc.PodGroupControl = pgc
		jc.Recorder = record.NewFakeRecorder(100)
	}
	gpu := v1IsGPULauncher(job)
	var workers int32
	if spec := job.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeWorker]; spec != nil && spec.Replicas != nil {
		workers = *spec.Replicas
	}
	res := result{ID: id, Files: map[string]string{}}
	for i := 0; i < int(workers); i++ {
		res.Pods = append(res.Pods, v1NewWorker(jc, job, fmt.Sprintf("%s-worker-%d", job.Name, i)))
	}
	res.Pods = append(res.Pods, v1NewLauncher(jc, job, config.Config.MPIKubectlDeliveryImage, gpu))
	cm := v1NewConfigMap(job, workers, gpu)
	for key, value := range cm.Data {
		res.Files["/etc/mpi/"+key] = value
	}
	return res
}
