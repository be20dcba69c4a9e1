//go:build trainer_v2_2

package main

import (
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// skippedByController: the v2.2.0 TrainJob controller has no spec.managedBy check
// (upstream's IsManagedByExternalController arrived in v2.3.0); it reconciles every
// TrainJob, MultiKueue-managed ones included.
func skippedByController(_ *trainer.TrainJob) bool {
	return false
}
