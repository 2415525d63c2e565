// Command etcd is the stock etcd server, built from the Go module proxy so that
// the e2e suite and the demo need no downloaded binaries.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
