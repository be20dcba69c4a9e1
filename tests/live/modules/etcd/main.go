// Command etcd is the etcd server of the pinned version, built from the Go module
// proxy for trainc's live control plane (tests/live). It only hands over to etcdmain.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
