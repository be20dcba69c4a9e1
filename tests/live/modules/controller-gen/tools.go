//go:build tools

// Package tools pins controller-gen at the version Kubeflow Trainer v2.3.0's Makefile
// uses (CONTROLLER_GEN_VERSION); scripts/build-control-plane.sh runs it on the
// volcano.sh/apis scheduling/v1beta1 types to make the Volcano PodGroup CRD, which
// volcano.sh/apis does not ship as YAML.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
