package main

import "k8s.io/cloud-provider/options"

// Measured defaults, set before the flags are parsed so that a flag still
// overrides each. Upstream's (--kube-api-qps=20, --kube-api-burst=30, one
// node worker, one lifecycle worker) initialized 200 nodes in 19 s on the
// benchmark machine; these initialize 1,000 in about 4 s (docs/scale.md,
// "Recommended flags"). deploy/ and the chart pass the same values
// explicitly, so a bare binary is as fast as a deployed one.
const (
	defaultKubeAPIQPS                   = 1000
	defaultKubeAPIBurst                 = 2000
	defaultConcurrentNodeSyncs          = 100
	defaultConcurrentNodeLifecycleSyncs = 100
)

// applyMeasuredDefaults replaces upstream's defaults with the measured ones.
func applyMeasuredDefaults(o *options.CloudControllerManagerOptions) {
	o.Generic.ClientConnection.QPS = defaultKubeAPIQPS
	o.Generic.ClientConnection.Burst = defaultKubeAPIBurst
	o.NodeController.ConcurrentNodeSyncs = defaultConcurrentNodeSyncs
	o.NodeLifecycleController.ConcurrentNodeLifecycleSyncs = defaultConcurrentNodeLifecycleSyncs
}
