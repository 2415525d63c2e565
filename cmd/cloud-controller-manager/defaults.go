package main

import "k8s.io/cloud-provider/options"

// Measured defaults, set before the flags are parsed so that a flag still
// overrides each. Upstream's (--kube-api-qps=20, --kube-api-burst=30, one
// node worker, one lifecycle worker) initialized 200 nodes in 19 s on the
// benchmark machine; these initialize 1,000 in about 4 s (docs/scale.md,
// "Recommended flags"). deploy/ and the chart pass the same values
// explicitly, so a bare binary is as fast as a deployed one. Upstream's one
// service worker makes every LoadBalancer Service wait for the one before:
// 100 Services took 65 s to get their IPs (docs/loadbalancers.md), and a
// 100-node burst 59 s to reach 100 CLBs (6.9 s with 20); with 20 the CLB rate
// limits (20 calls/s per action, paced client-side) bound both instead
// (docs/scale.md, the fan-out section). deploy/ and the chart leave this one
// to the binary.
const (
	defaultKubeAPIQPS                   = 1000
	defaultKubeAPIBurst                 = 2000
	defaultConcurrentNodeSyncs          = 100
	defaultConcurrentNodeLifecycleSyncs = 100
	defaultConcurrentServiceSyncs       = 20
	// defaultWebhookSecurePort 0: this binary registers no webhook
	// (upstream's AllWebhooks is empty), so the webhook server never
	// serves, yet with upstream's port 10260 every start generated its
	// self-signed RSA key, 0.1-0.35 s before the controllers start on the
	// benchmark machine. --webhook-secure-port still sets one.
	defaultWebhookSecurePort = 0
)

// applyMeasuredDefaults replaces upstream's defaults with the measured ones.
func applyMeasuredDefaults(o *options.CloudControllerManagerOptions) {
	o.Generic.ClientConnection.QPS = defaultKubeAPIQPS
	o.Generic.ClientConnection.Burst = defaultKubeAPIBurst
	o.NodeController.ConcurrentNodeSyncs = defaultConcurrentNodeSyncs
	o.NodeLifecycleController.ConcurrentNodeLifecycleSyncs = defaultConcurrentNodeLifecycleSyncs
	o.ServiceController.ConcurrentServiceSyncs = defaultConcurrentServiceSyncs
	o.WebhookServing.BindPort = defaultWebhookSecurePort
}
