//go:build trainer_v2_1

package main

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	jobruntime "github.com/kubeflow/trainer/v2/pkg/runtime"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
)

// The Go APIs of v2.1.0 where they differ from later releases: the runtime registry
// takes no operator Configuration, the runtime webhooks are untyped validators (their
// registry field is unused on create), and there is no feature-gate package.

func newRuntimes(ctx context.Context, c client.Client, indexer client.FieldIndexer) (map[string]jobruntime.Runtime, error) {
	return runtimecore.New(ctx, c, indexer)
}

func validateTrainingRuntime(ctx context.Context, rt *trainer.TrainingRuntime) (admission.Warnings, error) {
	return (&webhooks.TrainingRuntimeWebhook{}).ValidateCreate(ctx, rt)
}

func validateClusterTrainingRuntime(ctx context.Context, rt *trainer.ClusterTrainingRuntime) (admission.Warnings, error) {
	return (&webhooks.ClusterTrainingRuntimeWebhook{}).ValidateCreate(ctx, rt)
}

// trainerFeatureGates: v2.1.0 has no Trainer feature gates.
func trainerFeatureGates() map[string]bool {
	return map[string]bool{}
}
