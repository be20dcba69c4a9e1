package main

import (
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// setupLogging routes controller-runtime and klog output to stderr. With
// verbosity 0 everything is discarded so that stderr only carries our own
// diagnostics.
func setupLogging(verbosity int, stderr io.Writer) {
	var logger logr.Logger
	if verbosity <= 0 {
		logger = logr.Discard()
	} else {
		logger = funcr.New(func(prefix, args string) {
			if prefix != "" {
				fmt.Fprintf(stderr, "%s: %s\n", prefix, args)
			} else {
				fmt.Fprintln(stderr, args)
			}
		}, funcr.Options{Verbosity: verbosity})
	}
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
}

// setFeatureGates applies a "Name=bool,..." spec to the process-wide feature
// gate that both the Trainer and the apiextensions code consult.
func setFeatureGates(spec string) error {
	return utilfeature.DefaultMutableFeatureGate.Set(spec)
}
