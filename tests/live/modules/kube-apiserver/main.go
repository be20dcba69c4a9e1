// Command kube-apiserver is the Kubernetes API server of the pinned version, built
// from the Go module proxy for trainc's live control plane (tests/live). The
// k8s.io/kubernetes module cannot be built by module path alone (its go.mod points
// the k8s.io staging modules at local directories), so this module requires it and
// replaces each staging module with its published release; see go.mod.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
