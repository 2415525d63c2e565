//go:build tools

// Package tools pins the programs that make up the local test control plane:
// kube-apiserver (from k8s.io/kubernetes) and etcd. build.sh builds them.
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
