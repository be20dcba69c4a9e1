//go:build !trainer_v2_2

package main

import (
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	trainjobutil "github.com/kubeflow/trainer/v2/pkg/util/trainjob"
)

// skippedByController: from v2.3.0 the TrainJob controller leaves a TrainJob whose
// spec.managedBy names another controller (e.g. MultiKueue) alone.
func skippedByController(tj *trainer.TrainJob) bool {
	return trainjobutil.IsManagedByExternalController(tj)
}
