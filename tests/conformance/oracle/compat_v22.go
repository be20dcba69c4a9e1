//go:build !trainer_v2_1

package main

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configapi "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/features"
	jobruntime "github.com/kubeflow/trainer/v2/pkg/runtime"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
)

// The Go APIs the oracle calls as v2.2.0 and later have them (v2.1.0: compat_v21.go).

// newRuntimes builds the runtime registry with the operator's defaulted Configuration.
func newRuntimes(ctx context.Context, c client.Client, indexer client.FieldIndexer) (map[string]jobruntime.Runtime, error) {
	cfg := &configapi.Configuration{}
	configapi.SetObjectDefaults_Configuration(cfg)
	return runtimecore.New(ctx, c, indexer, cfg)
}

func validateTrainingRuntime(ctx context.Context, rt *trainer.TrainingRuntime) (admission.Warnings, error) {
	return (&webhooks.TrainingRuntimeValidator{}).ValidateCreate(ctx, rt)
}

func validateClusterTrainingRuntime(ctx context.Context, rt *trainer.ClusterTrainingRuntime) (admission.Warnings, error) {
	return (&webhooks.ClusterTrainingRuntimeValidator{}).ValidateCreate(ctx, rt)
}

// trainerFeatureGates reports the Trainer's own gates with their effective
// values (the package registers them, with upstream defaults, at init).
func trainerFeatureGates() map[string]bool {
	return map[string]bool{
		string(features.TrainJobStatus): features.Enabled(features.TrainJobStatus),
	}
}
