// Package testcluster runs a real Kubernetes control plane (etcd and
// kube-apiserver built from source by hack/tools) and the pieces around it that
// the e2e suite and the demo share: the shipped RBAC, a ServiceAccount
// kubeconfig for the CCM, kubelet-like Node registration and the CCM process.
package testcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// K8sVersion is the version of the kube-apiserver that hack/tools builds.
const K8sVersion = "v1.37.1"

// ToolsDir is where hack/tools/build.sh puts etcd and kube-apiserver: a cache
// outside the repository, so that fresh clones on the same machine reuse it.
func ToolsDir() string {
	if d := os.Getenv("CCM_TOOLS_DIR"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "ccmkit", "k8s-"+K8sVersion)
}

// Cluster is a running control plane with an admin client.
type Cluster struct {
	env *envtest.Environment
	// Admin is a cluster-admin REST config (a client certificate in system:masters).
	Admin *rest.Config
	// Client is a clientset for Admin.
	Client kubernetes.Interface
	// AdminKubeconfig is a kubeconfig file for Admin, for kubectl.
	AdminKubeconfig string
	// Dir holds the cluster's generated files (kubeconfigs).
	Dir string
	// restarted are apiservers started by KillAPIServer's restart, which
	// envtest does not know of.
	restarted []*exec.Cmd
}

// The control plane's service CIDRs (dual-stack, IPv4 primary).
const (
	ServiceCIDRv4 = "10.96.0.0/16"
	ServiceCIDRv6 = "fd00:10:96::/108"
)

// Start starts etcd and kube-apiserver from ToolsDir and waits until the
// apiserver serves. dir receives kubeconfig files.
func Start(dir string) (*Cluster, error) {
	tools := ToolsDir()
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(tools, bin)); err != nil {
			return nil, fmt.Errorf("start control plane: %s not found in %s: run `make tools` first", bin, tools)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    tools,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	// The route controller needs a service CIDR that does not overlap the
	// pod CIDRs the tests use. The IPv6 range after it makes the cluster
	// dual-stack with IPv4 primary, so that dual-stack Services can be made
	// (TestOCIDualStackNLB): SingleStack Services, the default, still get
	// IPv4 only, so the other tests are unaffected. An IPv6 service range
	// may have at most 20 host bits in the apiserver's allocator (/108).
	env.ControlPlane.GetAPIServer().Configure().
		Set("service-cluster-ip-range", ServiceCIDRv4+","+ServiceCIDRv6).
		// No kube-controller-manager runs here to lift the not-ready taint
		// that this plugin puts on new Nodes; envtest already disables
		// ServiceAccount (no controller creates default accounts).
		Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition").
		// The OIDC discovery document's jwks_uri is built from the
		// external host, by default the machine's own address, on which
		// the apiserver does not listen here: an OIDC client (cloudsim's
		// STS) fetches the keys where the issuer is, on loopback.
		Set("external-hostname", "127.0.0.1")
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("start control plane: admin client: %w", err)
	}
	c := &Cluster{env: env, Admin: cfg, Client: client, Dir: dir}
	c.AdminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(c.AdminKubeconfig, env.KubeConfig, 0o600); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("start control plane: write admin kubeconfig: %w", err)
	}
	return c, nil
}

// Stop stops the apiserver and etcd and removes their data.
func (c *Cluster) Stop() error {
	for _, cmd := range c.restarted {
		_ = cmd.Process.Kill()
	}
	return c.env.Stop()
}

// Server is the apiserver's URL.
func (c *Cluster) Server() string { return c.Admin.Host }

// waitFor polls cond every interval until it returns true, an error, or ctx ends.
func waitFor(ctx context.Context, interval time.Duration, cond func(context.Context) (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
