// Command demo runs the whole product on one machine: a real kube-apiserver and
// etcd, cloudsim seeded with a few Tencent CVM instances, matching Nodes
// registered the way kubelets with --cloud-provider=external do, and the
// cloud-controller-manager as its own process with the shipped RBAC. It prints
// the Nodes before and after the CCM initialized them.
//
// Run it with `make demo`; `make demo DEMO_FLAGS=--check` exits 0 once the
// scenario succeeded (for scripts and CI) instead of waiting for Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

const (
	demoSecretID  = "AKIDccmkitDEMO00000000000000000000"
	demoSecretKey = "ccmkit-demo-secret-key"
	demoRegion    = "ap-guangzhou"
	demoVPC       = "vpc-demo0001"
)

func main() {
	check := flag.Bool("check", false, "exit 0 once every node is initialized, instead of waiting for Ctrl-C")
	ccmBinary := flag.String("ccm-binary", "bin/cloud-controller-manager", "the cloud-controller-manager binary to run")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait for the nodes to be initialized")
	flag.Parse()

	if err := run(*ccmBinary, *check, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

// The fleet: three instances, and three naming schemes for their nodes.
var fleet = []struct {
	instance cloudsim.Instance
	nodeName func(cloudsim.Instance) string
}{
	{cloudsim.Instance{ID: "ins-demo0001", Name: "web-1", Type: "S5.MEDIUM4", Zone: "ap-guangzhou-3", PrivateIP: "127.0.100.1", PublicIP: "127.0.200.1"},
		func(i cloudsim.Instance) string { return i.PrivateIP }}, // the seed project's convention
	{cloudsim.Instance{ID: "ins-demo0002", Name: "web-2", Type: "S5.LARGE8", Zone: "ap-guangzhou-4", PrivateIP: "127.0.100.2"},
		func(i cloudsim.Instance) string { return i.Name }}, // named by hostname
	{cloudsim.Instance{ID: "ins-demo0003", Name: "db-1", Type: "M5.2XLARGE32", Zone: "ap-guangzhou-6", PrivateIP: "127.0.100.3"},
		func(i cloudsim.Instance) string { return i.ID }}, // named by instance ID
}

func run(ccmBinary string, check bool, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp("", "ccm-demo-")
	if err != nil {
		return err
	}
	step("starting etcd and kube-apiserver %s", testcluster.K8sVersion)
	cluster, err := testcluster.Start(dir)
	if err != nil {
		return err
	}
	defer cluster.Stop()

	step("applying deploy/rbac.yaml and minting the CCM ServiceAccount's kubeconfig")
	if err := cluster.ApplyFile(ctx, filepath.Join("deploy", "rbac.yaml")); err != nil {
		return err
	}
	saKubeconfig, err := cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	if err != nil {
		return err
	}

	step("starting cloudsim with %d CVM instances in %s", len(fleet), demoVPC)
	sim := cloudsim.New(cloudsim.Options{Region: demoRegion, Credentials: map[string]string{demoSecretID: demoSecretKey}})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer sim.Close()
	var names []string
	for _, f := range fleet {
		in := f.instance
		in.VpcID, in.State = demoVPC, "RUNNING"
		if _, err := sim.AddInstances(in); err != nil {
			return err
		}
		name := f.nodeName(in)
		names = append(names, name)
		if _, err := cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: name, InternalIP: in.PrivateIP}); err != nil {
			return err
		}
	}
	step("registered %d tainted nodes, as kubelets with --cloud-provider=external do", len(names))
	if err := printNodes(ctx, cluster, "Before the CCM"); err != nil {
		return err
	}

	cloudConfig := filepath.Join(dir, "cloud.yaml")
	cfg := fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\n",
		demoRegion, demoVPC, demoSecretID, demoSecretKey, simURL)
	if err := os.WriteFile(cloudConfig, []byte(cfg), 0o600); err != nil {
		return err
	}
	step("starting the cloud-controller-manager (log: %s)", filepath.Join(dir, "ccm.log"))
	ccm, _, err := testcluster.CCM{
		Binary: ccmBinary, Provider: "tencentcloud", CloudConfig: cloudConfig,
		Kubeconfig: saKubeconfig, Dir: dir,
	}.Start()
	if err != nil {
		return err
	}
	defer ccm.Stop()

	start := time.Now()
	if err := waitInitialized(ctx, cluster, names, timeout); err != nil {
		fmt.Println(lastLines(ccm.Output(), 20))
		return err
	}
	step("all %d nodes initialized in %s", len(names), time.Since(start).Round(100*time.Millisecond))
	if err := printNodes(ctx, cluster, "After the CCM"); err != nil {
		return err
	}
	calls := sim.Calls()["DescribeInstances"]
	step("cloudsim answered DescribeInstances %d times: %v", sum(calls), calls)

	if check {
		step("check passed")
		return nil
	}
	fmt.Printf("\nExplore with:\n  kubectl --kubeconfig %s get nodes -o wide\n", cluster.AdminKubeconfig)
	fmt.Printf("cloudsim admin API: %s/admin/instances (try: curl -X POST %s/admin/instances/ins-demo0001/stop)\n", simURL, simURL)
	fmt.Println("Press Ctrl-C to stop.")
	<-ctx.Done()
	return nil
}

func waitInitialized(ctx context.Context, c *testcluster.Cluster, names []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, name := range names {
		if _, err := c.WaitForNode(ctx, name, func(n *corev1.Node) bool {
			return !testcluster.HasTaint(n, cloudapi.TaintExternalCloudProvider) && n.Spec.ProviderID != ""
		}); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("node %s was not initialized within %s", name, timeout)
			}
			return err
		}
	}
	return nil
}

func printNodes(ctx context.Context, c *testcluster.Cluster, title string) error {
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	fmt.Printf("\n%s:\n", title)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tPROVIDER ID\tINSTANCE TYPE\tZONE\tREGION\tADDRESSES\tTAINTS")
	for _, n := range nodes.Items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, dash(n.Spec.ProviderID),
			dash(n.Labels[corev1.LabelInstanceTypeStable]), dash(n.Labels[corev1.LabelTopologyZone]),
			dash(n.Labels[corev1.LabelTopologyRegion]), addresses(n), taints(n))
	}
	fmt.Println()
	return w.Flush()
}

func addresses(n corev1.Node) string {
	var out []string
	for _, a := range n.Status.Addresses {
		out = append(out, string(a.Type)+"="+a.Address)
	}
	return dash(strings.Join(out, ","))
}

func taints(n corev1.Node) string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key)
	}
	return dash(strings.Join(out, ","))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func step(format string, args ...any) {
	fmt.Printf("==> "+format+"\n", args...)
}
