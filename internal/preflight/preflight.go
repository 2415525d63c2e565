// Package preflight checks, before the CCM is deployed, what most often
// keeps a cloud-controller-manager from working: credentials, the clock,
// the network objects the config names, quotas, the CCM's RBAC and the
// kubelets' --cloud-provider. It only reads, from the cloud and from
// Kubernetes, and reports one row per check with how to fix it.
//
// Checks run as a pipeline: the cloud config, then the provider's cloud
// checks (registered by each provider, which owns its config and SDK
// clients), then the Kubernetes checks that every provider shares.
package preflight

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Cloud is what a provider registers: its cloud checks, and how to tell
// its providerIDs from other clouds'.
type Cloud struct {
	// Check loads the cloud config from r (reporting a bad config as a
	// failed "cloud config" check), builds the SDK clients and runs the
	// provider's checks, adding one result per check to rep.
	Check func(ctx context.Context, r io.Reader, in Input, rep *Report)
	// OwnsProviderID reports whether a Node's spec.providerID is one this
	// provider sets.
	OwnsProviderID func(providerID string) bool
}

// Input is what the cloud checks get besides the cloud config.
type Input struct {
	// ClusterCIDR is --cluster-cidr (the pod network); invalid if not given.
	ClusterCIDR netip.Prefix
	// Nodes is the cluster's node count, or -1 when Kubernetes was not
	// reachable (quota checks against the node count are then skipped).
	Nodes int
	// Now is the local clock, which clock skew is measured against.
	Now func() time.Time
}

var (
	mu     sync.Mutex
	clouds = map[string]Cloud{}
)

// Register makes a provider's checks available under its --cloud-provider
// name. Providers call it from init.
func Register(name string, c Cloud) {
	mu.Lock()
	defer mu.Unlock()
	clouds[name] = c
}

// Providers lists the registered names.
func Providers() []string {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(clouds))
	for n := range clouds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Options is what the preflight command was given.
type Options struct {
	Provider    string       // --cloud-provider
	CloudConfig string       // --cloud-config (a file)
	ClusterCIDR netip.Prefix // --cluster-cidr; invalid if not given
	// Kube is a client with the CCM's identity (its kubeconfig, or an
	// admin's impersonating it); nil skips the Kubernetes checks, and
	// KubeSkipped says why.
	Kube        kubernetes.Interface
	KubeSkipped string
	// RBAC is the shipped RBAC manifest (deploy/rbac.yaml) whose rules the
	// identity must be granted.
	RBAC []byte
	Now  func() time.Time // default time.Now
}

// Run runs every check and returns the report. It fails (as a result, not
// an error) on anything it cannot check that the CCM would need.
func Run(ctx context.Context, o Options) *Report {
	if o.Now == nil {
		o.Now = time.Now
	}
	rep := &Report{}
	mu.Lock()
	cloud, ok := clouds[o.Provider]
	mu.Unlock()
	if !ok {
		rep.Fail("cloud provider", fmt.Sprintf("--cloud-provider=%q is not one of %v", o.Provider, Providers()),
			"set --cloud-provider to the provider the CCM will run with")
		return rep
	}

	nodes := listNodes(ctx, o.Kube)
	in := Input{ClusterCIDR: o.ClusterCIDR, Nodes: -1, Now: o.Now}
	if nodes.err == nil && o.Kube != nil {
		in.Nodes = len(nodes.items)
	}

	f, err := os.Open(o.CloudConfig)
	if err != nil {
		rep.Fail("cloud config", fmt.Sprintf("cannot read --cloud-config: %v", err),
			"pass the file the CCM will read with --cloud-config")
	} else {
		cloud.Check(ctx, f, in, rep)
		_ = f.Close()
	}

	if o.Kube == nil {
		rep.Skip("RBAC", o.KubeSkipped)
		rep.Skip("nodes", o.KubeSkipped)
		return rep
	}
	checkRBAC(ctx, o.Kube, o.RBAC, rep)
	checkNodes(nodes, cloud.OwnsProviderID, o.Provider, rep)
	return rep
}

// AfterCredentials reports the clock (its skew often explains a failed
// credentials check) and, when the credentials check failed, skips the
// cloud's later checks, which need them. It returns credsOK.
func AfterCredentials(rep *Report, clock *Clock, cloud string, credsOK bool, later ...string) bool {
	clock.Report(rep, cloud)
	if !credsOK {
		for _, c := range later {
			rep.Skip(c, "the credentials check failed")
		}
	}
	return credsOK
}
