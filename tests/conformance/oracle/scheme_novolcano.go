//go:build trainer_v2_0

package main

import "k8s.io/apimachinery/pkg/runtime"

// addVolcanoScheme: v2.0.0 has no Volcano plugin, and linking volcano.sh/apis
// would raise k8s.io above the release's 0.32.
func addVolcanoScheme(*runtime.Scheme) {}
