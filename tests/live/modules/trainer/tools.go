//go:build tools

// Package tools pins the Trainer controller manager for trainc's live control plane
// (tests/live); scripts/build-control-plane.sh builds the command from this module:
// go build github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
package tools

import _ "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"
