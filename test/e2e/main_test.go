//go:build e2e

// Package e2e runs the cloud-controller-manager as a real process against a
// real kube-apiserver and etcd (built by hack/tools) and cloudsim, with the
// RBAC that deploy/ ships. Run it with `make test` (or `make e2e`).
package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/kubeproxy"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// The credentials cloudsim accepts. The key is recognizable so that a leak
// into any output can be found by grep.
const (
	secretID  = "AKIDccmkitE2ETESTID0000000000000000"
	secretKey = "ccmkit-e2e-SECRET-KEY-do-not-print-0001"
	region    = "ap-guangzhou"
	vpcID     = "vpc-e2e00001"
	zone      = "ap-guangzhou-3"
)

// suite is the shared environment: one control plane, one cloudsim, one CCM.
var suite struct {
	cluster    *testcluster.Cluster
	sim        *cloudsim.Sim
	simURL     string
	ccmBinary  string
	kubeconfig string // the CCM ServiceAccount's kubeconfig
	dir        string
	ccm        *testcluster.Process
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "ccm-e2e-")
	if err != nil {
		return 0, err
	}
	suite.dir = dir
	fmt.Println("e2e: working directory (logs, kubeconfigs):", dir)

	if suite.ccmBinary, err = buildCCM(dir); err != nil {
		return 0, err
	}

	start := time.Now()
	if suite.cluster, err = testcluster.Start(dir); err != nil {
		return 0, err
	}
	defer func() { _ = suite.cluster.Stop() }() // at exit: nothing is left to do about a failed stop
	fmt.Printf("e2e: control plane up in %s at %s\n", time.Since(start).Round(time.Millisecond), suite.cluster.Server())

	// Every node runs "kube-proxy": its /healthz on the node's address is
	// what the load balancers probe (externalTrafficPolicy Cluster).
	kpCtx, kpStop := context.WithCancel(context.Background())
	defer kpStop()
	if err := kubeproxy.New().Watch(kpCtx, suite.cluster.Client, func(err error) { fmt.Println("e2e: kube-proxy stand-in:", err) }); err != nil {
		return 0, err
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := suite.cluster.ApplyFile(ctx, filepath.Join(repoRoot(), "deploy", "rbac.yaml")); err != nil {
		return 0, err
	}
	if suite.kubeconfig, err = suite.cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager"); err != nil {
		return 0, err
	}

	suite.sim = cloudsim.New(cloudsim.Options{
		Region:           region,
		VIPRange:         shardVIPRange(),
		TerminatedLinger: time.Second,
		OnCall:           recordPrincipal,
		Tencent: cloudsim.TencentOptions{
			Credentials: credentials(),
			// Every CCM principal runs under exactly the shipped CAM
			// policy (policies_test.go).
			Policies:    shippedCAMPolicies(slices.Collect(maps.Keys(credentials()))),
			RouteTables: []tencent.RouteTable{routeTableSeed()},
			// DeleteLoadBalancer's frequency check (30 deletions per region in
			// a sliding window) with a window of 20 s instead of 5 minutes, as
			// the task latency is short too: the rule stays on for every test,
			// and the mass deletion scenario (clb_frequency_test.go) waits
			// seconds, not minutes, for the window to slide.
			CLBDeleteFrequencyWindow: clbDeleteWindow,
		},
		// Instance principals' tokens live 20 s instead of 20 minutes, so
		// that a scenario sees several renewals (credentials_oci_test.go).
		OCI: cloudsim.OCIOptions{SecurityTokenLifetime: ociTokenLifetime},
	})
	if suite.simURL, err = suite.sim.Start("127.0.0.1:0"); err != nil {
		return 0, err
	}
	defer suite.sim.Close()

	suite.ccm, err = startMainCCM("ccm")
	if err != nil {
		return 0, err
	}
	// suite.ccm may be replaced by a restarted process: stop whichever runs.
	defer func() { suite.ccm.Stop() }()

	code := m.Run()
	if leaks := scanForSecret(); len(leaks) > 0 {
		fmt.Println("e2e: the secret key appears in:", leaks)
		code = 1
	}
	if leaks := finishOCI(); len(leaks) > 0 {
		fmt.Println("e2e: the OCI private key appears in:", leaks)
		code = 1
	}
	if code != 0 {
		fmt.Println("e2e: failed; CCM logs are in", dir)
	}
	return code, nil
}

// buildCCM builds the CCM binary, unless CCM_BINARY names one already built.
func buildCCM(dir string) (string, error) {
	if bin := os.Getenv("CCM_BINARY"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "cloud-controller-manager")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/cloud-controller-manager")
	cmd.Dir = repoRoot()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build cloud-controller-manager: %w", err)
	}
	return bin, nil
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}
