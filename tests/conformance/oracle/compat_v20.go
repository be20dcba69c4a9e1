//go:build trainer_v2_0

package main

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// trainJobNameErrors: v2.0.0's TrainJob webhook requires metadata.name to be a
// DNS-1035 label before it asks the runtime. Its webhook type keeps the runtime
// registry in an unexported field, so the oracle runs the same library check
// (k8s.io/apimachinery's IsDNS1035Label) in the same order.
func trainJobNameErrors(tj *trainer.TrainJob) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(tj.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), tj.Name, msg))
	}
	return errs
}
