// Command kube-controller-manager is the Kubernetes controller manager of the pinned
// version, built from the Go module proxy for trainc's live control plane
// (tests/live), where it runs only the controllers that turn a JobSet's Jobs into
// Pods. Like the kube-apiserver wrapper, this module requires k8s.io/kubernetes and
// replaces each staging module with its published release; see go.mod.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
