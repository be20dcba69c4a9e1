//go:build !trainer_v2_0

package main

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// trainJobNameErrors: from v2.1.0 on the TrainJob webhook checks no name
// (v2.0.0: compat_v20.go).
func trainJobNameErrors(*trainer.TrainJob) field.ErrorList { return nil }
