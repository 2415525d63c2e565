// Command demo runs the whole product on one machine, for Tencent Cloud (the
// default) or OCI (--cloud oci, oci.go): a real kube-apiserver and
// etcd, cloudsim seeded with a few Tencent CVM instances, matching Nodes
// registered the way kubelets with --cloud-provider=external do, and the
// cloud-controller-manager as its own process with the shipped RBAC. It prints
// the Nodes before and after the CCM initialized them, and creates a
// LoadBalancer Service whose CLB VIP carries requests to the nodes
// (loadbalancer.go).
//
// The CCM runs without a key by default, as on a CVM bound to a CAM role:
// its temporary credentials come from cloudsim's metadata service
// (credentials.go); --credentials=key runs it with a key pair instead.
//
// Run it with `make demo`; `make demo DEMO_FLAGS=--check` exits 0 once the
// scenario succeeded (for scripts and CI) instead of waiting for Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

const (
	demoSecretID  = "AKIDccmkitDEMO00000000000000000000"
	demoSecretKey = "ccmkit-demo-secret-key"
	demoRegion    = "ap-guangzhou"
	demoVPC       = "vpc-demo0001"
	// Pod routes: a TKE cluster route table for the cluster CIDR.
	demoRouteTable  = "cls-demo0001"
	demoClusterCIDR = "10.244.0.0/16"
)

// demoNodeSG is the nodes' security group, as a user might keep it: SSH
// and ping, nothing on the NodePorts. The CLB reaches the nodes all the
// same, because the CCM creates it with LoadBalancerPassToTarget (only the
// CLB's own security groups filter its traffic).
const demoNodeSG = "sg-demo0001"

func demoNodeGroup() tencent.SecurityGroup {
	return tencent.SecurityGroup{ID: demoNodeSG, Name: "demo-nodes", Ingress: []*vpc.SecurityGroupPolicy{
		{Protocol: common.StringPtr("TCP"), Port: common.StringPtr("22"), CidrBlock: common.StringPtr("0.0.0.0/0"), Action: common.StringPtr("ACCEPT")},
		{Protocol: common.StringPtr("ICMP"), CidrBlock: common.StringPtr("0.0.0.0/0"), Action: common.StringPtr("ACCEPT")},
	}}
}

// foreignRoute is in the table before the CCM starts, as if another tool
// had added it: inside the cluster CIDR, to an instance that is no node of
// ours (a bastion, added below). It must survive; a route to an address no
// instance holds any more would be an orphan, and reclaimed.
func foreignRoute(n demoNet) tencent.ClusterRoute {
	return tencent.ClusterRoute{DestinationCIDR: "10.244.200.0/24", GatewayIP: n.gateway()}
}

func main() {
	check := flag.Bool("check", false, "exit 0 once every node is initialized, instead of waiting for Ctrl-C")
	ccmBinary := flag.String("ccm-binary", "bin/cloud-controller-manager", "the cloud-controller-manager binary to run")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait for the nodes to be initialized")
	names := slices.Sorted(maps.Keys(demos))
	cloud := flag.String("cloud", "tencentcloud", "the cloud to demonstrate: "+strings.Join(names, " or "))
	flag.StringVar(&tencentCredentials, "credentials", credentialsCVMRole,
		"Tencent: the CCM's credentials: "+credentialsCVMRole+" (the CVM's CAM role, from cloudsim's metadata service; no key) or "+credentialsKey)
	flag.Parse()
	if tencentCredentials != credentialsCVMRole && tencentCredentials != credentialsKey {
		fmt.Fprintf(os.Stderr, "demo: --credentials %q: must be %s or %s\n", tencentCredentials, credentialsCVMRole, credentialsKey)
		os.Exit(2)
	}

	demo, ok := demos[*cloud]
	if !ok {
		fmt.Fprintf(os.Stderr, "demo: --cloud %q: must be %s\n", *cloud, strings.Join(names, " or "))
		os.Exit(2)
	}
	if err := demo(*ccmBinary, *check, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

// The fleet: three instances, and three naming schemes for their nodes.
// Addresses are given at run time (addresses.go); public says whether an
// instance has a public address.
var fleet = []struct {
	instance cloudsim.Instance
	public   bool
	nodeName func(cloudsim.Instance) string
}{
	{cloudsim.Instance{ID: "ins-demo0001", Name: "web-1", Type: "S5.MEDIUM4", Zone: "ap-guangzhou-3"}, true,
		func(i cloudsim.Instance) string { return i.PrivateIP }}, // the seed project's convention
	{cloudsim.Instance{ID: "ins-demo0002", Name: "web-2", Type: "S5.LARGE8", Zone: "ap-guangzhou-4"}, false,
		func(i cloudsim.Instance) string { return i.Name }}, // named by hostname
	{cloudsim.Instance{ID: "ins-demo0003", Name: "db-1", Type: "M5.2XLARGE32", Zone: "ap-guangzhou-6"}, false,
		func(i cloudsim.Instance) string { return i.ID }}, // named by instance ID
}

// demos are the demos by --cloud name; each cloud's demo file adds its own
// in init, so a new cloud's demo needs no line here.
var demos = map[string]func(ccmBinary string, check bool, timeout time.Duration) error{}

func init() { demos["tencentcloud"] = run }

func run(ccmBinary string, check bool, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp("", "ccm-demo-")
	if err != nil {
		return err
	}
	cluster, saKubeconfig, err := startCluster(ctx, dir)
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }() // at exit: nothing is left to do about a failed stop

	n, err := pickDemoNet(len(fleet), demoServicePort)
	if err != nil {
		return err
	}
	step("this run's addresses: nodes %s.., load balancer VIPs %s, NodePort %d", n.node(0), n.vipRange(), n.nodePort)

	step("starting cloudsim with %d CVM instances in %s, in security group %s (SSH and ping only)", len(fleet), demoVPC, demoNodeSG)
	sim := cloudsim.New(cloudsim.Options{Region: demoRegion, VIPRange: n.vipRange(),
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{demoSecretID: demoSecretKey},
			RouteTables: []tencent.RouteTable{{Name: demoRouteTable, CIDR: demoClusterCIDR, VpcID: demoVPC,
				Routes: []tencent.ClusterRoute{foreignRoute(n)}}},
			SecurityGroups: []tencent.SecurityGroup{demoNodeGroup()},
			Roles:          []tencent.Role{demoRole()},
			MetadataRole:   demoRoleName,
			Policies:       demoPolicies(),
		},
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer sim.Close()
	step("cloudsim's console (read-only, live; on its admin listener): %s%s", simURL, cloudsim.ConsolePath)
	var names []string
	var instances []cloudsim.Instance
	for i, f := range fleet {
		in := f.instance
		in.VpcID, in.State, in.SecurityGroupIDs = demoVPC, "RUNNING", []string{demoNodeSG}
		in.PrivateIP = n.node(i)
		if f.public {
			in.PublicIP = n.public(i)
		}
		instances = append(instances, in)
		if _, err := sim.AddInstances(in); err != nil {
			return err
		}
		name := f.nodeName(in)
		names = append(names, name)
		podCIDR := fmt.Sprintf("10.244.%d.0/24", i+1) // set by the node IPAM in a real cluster
		if _, err := cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: name, InternalIP: in.PrivateIP, PodCIDR: podCIDR}); err != nil {
			return err
		}
	}
	if _, err := sim.AddInstances(cloudsim.Instance{ID: "ins-bastion1", Name: "bastion", PrivateIP: n.gateway(), VpcID: demoVPC, State: "RUNNING"}); err != nil {
		return err
	}
	step("registered %d tainted nodes, as kubelets with --cloud-provider=external do", len(names))
	if err := printNodes(ctx, cluster, "Before the CCM"); err != nil {
		return err
	}

	cloudConfig := filepath.Join(dir, "cloud.yaml")
	cfg := fmt.Sprintf("region: %s\nvpc_id: %s\napi_endpoint: %s\ncluster_route_table: %s\ncluster_cidr: %s\n%s",
		demoRegion, demoVPC, simURL, demoRouteTable, demoClusterCIDR, credentialConfig(simURL))
	if err := os.WriteFile(cloudConfig, []byte(cfg), 0o600); err != nil {
		return err
	}
	announceCredentials()
	step("starting the cloud-controller-manager (log: %s)", filepath.Join(dir, "ccm.log"))
	ccm, _, err := testcluster.CCM{
		Binary: ccmBinary, Provider: "tencentcloud", CloudConfig: cloudConfig,
		Kubeconfig: saKubeconfig, Dir: dir,
		ExtraArgs: []string{"--configure-cloud-routes=true", "--cluster-cidr=" + demoClusterCIDR},
	}.Start()
	if err != nil {
		return err
	}
	defer ccm.Stop()

	start := time.Now()
	if err := waitInitialized(ctx, cluster, names, timeout); err != nil {
		return withCCMLog(ccm, err)
	}
	step("all %d nodes initialized in %s", len(names), time.Since(start).Round(100*time.Millisecond))
	reportCredentials(ccm, sim)
	if err := printNodes(ctx, cluster, "After the CCM"); err != nil {
		return err
	}
	calls := sim.Calls()["DescribeInstances"]
	step("cloudsim answered DescribeInstances %d times: %v", sum(calls), calls)

	if err := waitRoutes(ctx, cluster, sim, len(names)+1, timeout); err != nil {
		return withCCMLog(ccm, err)
	}
	if err := printRoutes(ctx, cluster, sim); err != nil {
		return err
	}
	all := sim.Calls()
	step("cloudsim answered DescribeClusterRoutes %d times, CreateClusterRoute %d times",
		sum(all["DescribeClusterRoutes"]), sum(all["CreateClusterRoute"]))

	vip, stopServers, err := demoLoadBalancer(ctx, cluster, sim, instances, n.nodePort, timeout)
	if err != nil {
		return withCCMLog(ccm, err)
	}
	defer stopServers()
	curlTLS, stopTLS, err := demoTLS(ctx, cluster, sim, instances, dir, timeout)
	if err != nil {
		return withCCMLog(ccm, err)
	}
	defer stopTLS()

	if check {
		step("check passed")
		return nil
	}
	fmt.Printf("\nExplore with:\n  kubectl --kubeconfig %s get nodes -o wide\n", cluster.AdminKubeconfig)
	fmt.Printf("cloudsim admin API: %s/admin/instances (try: curl -X POST %s/admin/instances/ins-demo0001/stop)\n", simURL, simURL)
	fmt.Printf("the route table: curl %s/admin/tencent/routetables/%s/routes\n", simURL, demoRouteTable)
	fmt.Printf("the load balancer: curl http://%s:%d/ (its CLB: curl %s/admin/tencent/loadbalancers)\n", vip, demoServicePort, simURL)
	fmt.Printf("the HTTPS load balancer, verified with the demo CA: %s\n", curlTLS)
	fmt.Printf("cloudsim's console, live: %s%s (watch the load balancer's targets while you kubectl delete a node, or label one node.kubernetes.io/exclude-from-external-load-balancers=true)\n", simURL, cloudsim.ConsolePath)
	fmt.Println("Press Ctrl-C to stop.")
	<-ctx.Done()
	return nil
}

// startCluster starts etcd and kube-apiserver in dir, applies the CCM's
// RBAC and returns the cluster with the kubeconfig of the CCM's
// ServiceAccount; on an error it stops what it started.
func startCluster(ctx context.Context, dir string) (_ *testcluster.Cluster, saKubeconfig string, err error) {
	step("starting etcd and kube-apiserver %s", testcluster.K8sVersion)
	cluster, err := testcluster.Start(dir)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if err != nil {
			_ = cluster.Stop() // the error returned says more than a failed stop
		}
	}()
	step("applying deploy/rbac.yaml and minting the CCM ServiceAccount's kubeconfig")
	if err := cluster.ApplyFile(ctx, filepath.Join("deploy", "rbac.yaml")); err != nil {
		return nil, "", err
	}
	saKubeconfig, err = cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	if err != nil {
		return nil, "", err
	}
	return cluster, saKubeconfig, nil
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

// waitRoutes waits until the route table holds want routes (the nodes' and
// the foreign one) and the route controller has cleared every node's
// NetworkUnavailable condition.
func waitRoutes(ctx context.Context, c *testcluster.Cluster, sim *cloudsim.Sim, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		rt, err := sim.Tencent().TKE().RouteTable(demoRouteTable)
		if err != nil {
			return err
		}
		if len(rt.Routes) == want && networkAvailable(ctx, c) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("route table %s has %d routes after %s, want %d: %v", demoRouteTable, len(rt.Routes), timeout, want, rt.Routes)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// networkAvailable reports whether every node has NetworkUnavailable=False.
func networkAvailable(ctx context.Context, c *testcluster.Cluster) bool {
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, n := range nodes.Items {
		ok := false
		for _, cond := range n.Status.Conditions {
			ok = ok || (cond.Type == corev1.NodeNetworkUnavailable && cond.Status == corev1.ConditionFalse)
		}
		if !ok {
			return false
		}
	}
	return true
}

// printRoutes shows the route table and, for each route, the node it serves
// and that node's NetworkUnavailable condition.
func printRoutes(ctx context.Context, c *testcluster.Cluster, sim *cloudsim.Sim) error {
	rt, err := sim.Tencent().TKE().RouteTable(demoRouteTable)
	if err != nil {
		return err
	}
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("\nTKE cluster route table %s (%s):\n", rt.Name, rt.CIDR)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DESTINATION\tGATEWAY\tNODE\tNETWORK UNAVAILABLE")
	for _, r := range rt.Routes {
		node, network := "(not ours: left alone)", "-"
		for _, n := range nodes.Items {
			if n.Spec.PodCIDR == r.DestinationCIDR {
				node, network = n.Name, "?"
				for _, cond := range n.Status.Conditions {
					if cond.Type == corev1.NodeNetworkUnavailable {
						network = string(cond.Status) + " (" + cond.Reason + ")"
					}
				}
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.DestinationCIDR, r.GatewayIP, node, network)
	}
	fmt.Println()
	return w.Flush()
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

// withCCMLog prints the end of the CCM's log, which says why what the CCM
// should have done did not happen, and returns err.
func withCCMLog(ccm *testcluster.Process, err error) error {
	fmt.Println(lastLines(ccm.Output(), 20))
	return err
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
