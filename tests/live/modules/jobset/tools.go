//go:build tools

// Package tools pins the JobSet controller manager for trainc's live control plane
// (tests/live); its main package is the module root, so scripts/build-control-plane.sh
// builds it from this module with: go build sigs.k8s.io/jobset
package tools

import _ "sigs.k8s.io/jobset"
