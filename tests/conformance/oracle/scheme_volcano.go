//go:build !trainer_v2_0

package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
)

// addVolcanoScheme registers Volcano's PodGroup, which the Volcano plugin
// (v2.1.0 and later) creates.
func addVolcanoScheme(s *runtime.Scheme) {
	utilruntime.Must(volcanov1beta1.AddToScheme(s))
}
