package main

import (
	"context"
	"crypto/md5" //nolint:gosec // OCI API key fingerprints are MD5
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
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

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The OCI demo (make demo CLOUD=oci): cloudsim's OCI API with a
// compartment, a VCN and a subnet; three instances whose nodes are named
// the three ways the OCI provider maps them; the CCM with
// --cloud-provider=oci, keyless: it signs as the instance it runs on
// (instance principals), or with an API key (--oci-auth api-key); then a
// LoadBalancer Service whose OCI load balancer carries HTTP to the nodes.
const (
	ociDemoTenancy     = "ocid1.tenancy.oc1..aaaaaaaademotenancy"
	ociDemoUser        = "ocid1.user.oc1..aaaaaaaademouser"
	ociDemoCompartment = "ocid1.compartment.oc1..aaaaaaaademocompartment"
	ociDemoVCN         = "ocid1.vcn.oc1..aaaaaaaademovcn"
	ociDemoSubnet      = "ocid1.subnet.oc1..aaaaaaaademosubnet"
	ociDemoPort        = 8080
)

// The demo's one subnet holds the load balancer and the nodes. Its
// security list has what the CCM's default security list mode, None,
// leaves to the user (docs/oci.md): clients to the listener port, and the
// load balancer (in the same subnet) to the NodePorts and kube-proxy's
// health port.
const ociDemoList = "ocid1.securitylist.oc1..aaaaaaaademolist"

func ociDemoSecurityList(vcnCIDR string) simoci.SecurityList {
	tcp := func(src string, lo, hi int) ocicore.IngressSecurityRule {
		return ocicore.IngressSecurityRule{Protocol: ocicommon.String("6"), Source: ocicommon.String(src),
			TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: ocicommon.Int(lo), Max: ocicommon.Int(hi)}}}
	}
	return simoci.SecurityList{ID: ociDemoList, VCNID: ociDemoVCN, CompartmentID: ociDemoCompartment, DisplayName: "demo",
		IngressSecurityRules: []ocicore.IngressSecurityRule{
			tcp("0.0.0.0/0", 22, 22), tcp("0.0.0.0/0", ociDemoPort, ociDemoPort), tcp("0.0.0.0/0", demoTLSPort, demoTLSPort),
			tcp(vcnCIDR, 30000, 32767), tcp(vcnCIDR, 10256, 10256),
		},
		EgressSecurityRules: []ocicore.EgressSecurityRule{{Protocol: ocicommon.String("all"), Destination: ocicommon.String("0.0.0.0/0")}},
	}
}

// ociFleet: three instances and the three ways their nodes are named.
// Addresses are given at run time (addresses.go); public says whether an
// instance has a public address.
var ociFleet = []struct {
	instance cloudsim.Instance
	public   bool
	nodeName func(cloudsim.Instance) string
	how      string
}{
	{cloudsim.Instance{Name: "web-1", Shape: "VM.Standard.E4.Flex", FaultDomain: "FAULT-DOMAIN-1"}, true,
		func(i cloudsim.Instance) string { return i.Name }, "display name"},
	{cloudsim.Instance{Name: "web-2", Shape: "VM.Standard.E4.Flex", FaultDomain: "FAULT-DOMAIN-2"}, false,
		func(i cloudsim.Instance) string { return i.PrivateIP }, "VNIC private IP"},
	{cloudsim.Instance{Name: "db-1", Shape: "VM.Standard3.Flex", FaultDomain: "FAULT-DOMAIN-3", HostnameLabel: "db-1-host"}, false,
		func(i cloudsim.Instance) string { return i.HostnameLabel + ".demo.demovcn.oraclevcn.com" }, "VNIC hostname label"},
}

func init() { demos["oci"] = runOCI }

// ociAuth is the OCI demo's credential source.
var ociAuth = flag.String("oci-auth", "instance-principal",
	"OCI demo: how the CCM authenticates: instance-principal (no key: the identity of the instance it runs on) or api-key")

// ociDemoCCMHost is the instance the CCM "runs on" with instance
// principals: cloudsim's metadata service answers for it.
var ociDemoCCMHost = cloudsim.Instance{Name: "control-plane-1", Shape: "VM.Standard.E4.Flex", FaultDomain: "FAULT-DOMAIN-1"}

func runOCI(ccmBinary string, check bool, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp("", "ccm-demo-oci-")
	if err != nil {
		return err
	}
	cluster, saKubeconfig, err := startCluster(ctx, dir)
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }() // at exit: nothing is left to do about a failed stop

	keyless := *ociAuth == "instance-principal"
	if !keyless && *ociAuth != "api-key" {
		return fmt.Errorf("--oci-auth %q: want instance-principal or api-key", *ociAuth)
	}
	if keyless {
		step("starting cloudsim's OCI API, its instance metadata service and its federation endpoint (instance principals: no API key)")
	} else {
		step("generating an OCI API key and starting cloudsim's OCI API (signatures verified with the registered key)")
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	fingerprint := md5Fingerprint(der)
	n, err := pickDemoNet(len(ociFleet)+1, ociDemoPort) // the fleet, and the CCM's host
	if err != nil {
		return err
	}
	step("this run's addresses: nodes %s.., load balancer VIPs %s, NodePort %d", n.node(0), n.vipRange(), n.nodePort)
	keys := map[string]string{} // instance principals: no key registered at all
	if !keyless {
		keys[ociDemoTenancy+"/"+ociDemoUser+"/"+fingerprint] = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	}
	sim := cloudsim.New(cloudsim.Options{
		VIPRange: n.vipRange(),
		OCI: cloudsim.OCIOptions{
			Keys: keys,
			Network: simoci.NetworkSeed{
				Compartments:  []string{ociDemoCompartment},
				VCNs:          []simoci.VCN{{ID: ociDemoVCN, CompartmentID: ociDemoCompartment, CIDRBlock: n.vcnCIDR(), DisplayName: "demo", DNSLabel: "demovcn"}},
				SecurityLists: []simoci.SecurityList{ociDemoSecurityList(n.vcnCIDR())},
				Subnets: []simoci.Subnet{{ID: ociDemoSubnet, VCNID: ociDemoVCN, CompartmentID: ociDemoCompartment, DNSLabel: "demo",
					SecurityListIDs: []string{ociDemoList}}},
			},
		},
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer sim.Close()
	step("cloudsim's console (read-only, live; on its admin listener): %s%s", simURL, cloudsim.ConsolePath)
	step("the subnet's security list admits clients on ports %d and %d (HTTPS) and the subnet on the NodePorts and :10256, "+
		"as security list mode None (the default) leaves to you; cloudsim drops everything else", ociDemoPort, demoTLSPort)

	var names []string
	var instances []cloudsim.Instance
	for i, f := range ociFleet {
		in := f.instance
		in.VpcID, in.SubnetID, in.CompartmentID, in.State = ociDemoVCN, ociDemoSubnet, ociDemoCompartment, "RUNNING"
		in.PrivateIP = n.node(i)
		if f.public {
			in.PublicIP = n.public(i)
		}
		added, err := sim.AddInstances(in)
		if err != nil {
			return err
		}
		in = added[0]
		instances = append(instances, in)
		name := f.nodeName(in)
		names = append(names, name)
		spec := testcluster.NodeSpec{Name: name}
		if f.how != "VNIC hostname label" {
			spec.InternalIP = in.PrivateIP
		}
		if _, err := cluster.RegisterNode(ctx, spec); err != nil {
			return err
		}
		step("instance %s (%s): node %q, to be found by its %s", in.Name, in.OCID, name, f.how)
	}
	if err := printNodes(ctx, cluster, "Before the CCM"); err != nil {
		return err
	}

	cloudConfig := filepath.Join(dir, "cloud-provider.yaml")
	var cfg string
	if keyless {
		host := ociDemoCCMHost
		host.VpcID, host.SubnetID, host.CompartmentID, host.State, host.PrivateIP = ociDemoVCN, ociDemoSubnet, ociDemoCompartment, "RUNNING", n.node(len(ociFleet))
		added, err := sim.AddInstances(host)
		if err != nil {
			return err
		}
		if _, err := sim.OCI().SetMetadataInstance(added[0].OCID, ociDemoTenancy); err != nil {
			return err
		}
		rule := "instance.id = '" + added[0].OCID + "'"
		step("the CCM runs on instance %s (%s), in dynamic group ccm-demo (matching rule %s): "+
			"the config holds no key, region or tenancy", host.Name, added[0].OCID, rule)
		if err := ociDemoPolicy(sim, "dynamic-group", simoci.IAMSeed{DynamicGroups: map[string]string{"ccm-demo": rule}}); err != nil {
			return err
		}
		cfg = fmt.Sprintf("useInstancePrincipals: true\nauth:\n  metadataEndpoint: %s/opc/v2\n  federationEndpoint: %s\ncompartment: %s\nvcn: %s\nloadBalancer:\n  subnet1: %s\nendpoint: %s\n",
			simURL, simURL, ociDemoCompartment, ociDemoVCN, ociDemoSubnet, simURL)
	} else {
		if err := ociDemoPolicy(sim, "group", simoci.IAMSeed{Groups: map[string][]string{"ccm-demo": {ociDemoUser}}}); err != nil {
			return err
		}
		keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
		cfg = fmt.Sprintf("auth:\n  region: %s\n  tenancy: %s\n  user: %s\n  fingerprint: %s\n  key: |\n    %s\ncompartment: %s\nvcn: %s\nloadBalancer:\n  subnet1: %s\nendpoint: %s\n",
			simoci.DefaultRegion, ociDemoTenancy, ociDemoUser, fingerprint, strings.ReplaceAll(strings.TrimSpace(keyPEM), "\n", "\n    "),
			ociDemoCompartment, ociDemoVCN, ociDemoSubnet, simURL)
	}
	if err := os.WriteFile(cloudConfig, []byte(cfg), 0o600); err != nil {
		return err
	}
	step("starting the cloud-controller-manager --cloud-provider=oci (log: %s)", filepath.Join(dir, "ccm.log"))
	ccm, _, err := testcluster.CCM{Binary: ccmBinary, Provider: "oci", CloudConfig: cloudConfig, Kubeconfig: saKubeconfig, Dir: dir}.Start()
	if err != nil {
		return err
	}
	defer ccm.Stop()

	start := time.Now()
	if err := ccm.WaitForOutput(ctx, `"OCI credentials"`); err != nil {
		return withCCMLog(ccm, err)
	}
	step("credential source, as the CCM logs it: %s", credentialLine(ccm.Output()))
	if err := waitInitialized(ctx, cluster, names, timeout); err != nil {
		return withCCMLog(ccm, err)
	}
	step("all %d nodes initialized in %s", len(names), time.Since(start).Round(100*time.Millisecond))
	if err := printOCINodes(ctx, cluster); err != nil {
		return err
	}
	step("cloudsim answered %s", ociCallSummary(sim))

	vip, stopServers, err := ociDemoLoadBalancer(ctx, cluster, sim, instances, n.nodePort, timeout)
	if err != nil {
		return withCCMLog(ccm, err)
	}
	defer stopServers()
	curlTLS, stopTLS, err := ociDemoTLS(ctx, cluster, sim, instances, dir, timeout)
	if err != nil {
		return withCCMLog(ccm, err)
	}
	defer stopTLS()

	if check {
		step("check passed")
		return nil
	}
	fmt.Printf("\nExplore with:\n  kubectl --kubeconfig %s get nodes -L oci.oraclecloud.com/fault-domain\n", cluster.AdminKubeconfig)
	fmt.Printf("  curl http://%s:%d/\n", vip, ociDemoPort)
	fmt.Printf("  %s\n", curlTLS)
	fmt.Printf("cloudsim admin API: %s/admin/instances (try: curl -X POST %s/admin/instances/%s/stop)\n", simURL, simURL, instances[0].ID)
	fmt.Printf("cloudsim's console, live: %s%s (watch the load balancer's targets while you kubectl delete a node, or label one node.kubernetes.io/exclude-from-external-load-balancers=true)\n", simURL, cloudsim.ConsolePath)
	fmt.Println("Press Ctrl-C to stop.")
	<-ctx.Done()
	return nil
}

func md5Fingerprint(der []byte) string {
	sum := md5.Sum(der) //nolint:gosec // the fingerprint format
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

// printOCINodes is printNodes with the fault-domain label.
func printOCINodes(ctx context.Context, c *testcluster.Cluster) error {
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	fmt.Printf("\nAfter the CCM:\n")
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tPROVIDER ID\tSHAPE\tZONE (AD)\tFAULT DOMAIN\tREGION\tADDRESSES\tTAINTS")
	for _, n := range nodes.Items {
		pid := n.Spec.ProviderID
		if len(pid) > 40 {
			pid = pid[:37] + "..."
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, dash(pid),
			dash(n.Labels[corev1.LabelInstanceTypeStable]), dash(n.Labels[corev1.LabelTopologyZone]),
			dash(n.Labels["oci.oraclecloud.com/fault-domain"]), dash(n.Labels[corev1.LabelTopologyRegion]), addresses(n), taints(n))
	}
	fmt.Println()
	return w.Flush()
}

// ociDemoPolicy puts the CCM's principal (iam: group or dynamic group
// "ccm-demo") under the shipped policy's block for kind, enforced by
// cloudsim, and prints the statements.
func ociDemoPolicy(sim *cloudsim.Sim, kind string, iam simoci.IAMSeed) error {
	policy := strings.TrimSpace(deploy.OCIPolicyFor(kind, "ccm-demo", "demo"))
	iam.CompartmentNames = map[string]string{"demo": ociDemoCompartment}
	iam.Policies = map[string][]string{"ccm-demo": strings.Split(policy, "\n")}
	if err := sim.OCI().SeedIAM(iam); err != nil {
		return err
	}
	step("the CCM runs under the %s block of deploy/policies/oci-policy.txt, which cloudsim enforces:\n    %s",
		kind, strings.ReplaceAll(policy, "\n", "\n    "))
	return nil
}

// credentialLine is the CCM's log line naming its credential source,
// from "source=" on.
func credentialLine(log string) string {
	for line := range strings.SplitSeq(log, "\n") {
		if i := strings.Index(line, "source="); i >= 0 && strings.Contains(line, `"OCI credentials"`) {
			return line[i:]
		}
	}
	return "(not logged)"
}

// ociCallSummary counts cloudsim's OCI calls by operation.
func ociCallSummary(sim *cloudsim.Sim) string {
	var parts []string
	for action, byCode := range sim.Calls() {
		if strings.HasPrefix(action, simoci.ActionPrefix) {
			parts = append(parts, fmt.Sprintf("%s=%d", strings.TrimPrefix(action, simoci.ActionPrefix), sum(byCode)))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// ociDemoLoadBalancer creates a LoadBalancer Service, waits for its OCI
// load balancer's IP and shows requests through it reaching the nodes. It
// returns the IP and a function that stops the node servers.
func ociDemoLoadBalancer(ctx context.Context, c *testcluster.Cluster, sim *cloudsim.Sim, instances []cloudsim.Instance, nodePort int32, timeout time.Duration) (string, func(), error) {
	vip, took, stop, err := exposeHello(ctx, c, instances, "hello-oci", ociDemoPort, nodePort, ": an OCI flexible load balancer", func(in cloudsim.Instance) string {
		return fmt.Sprintf("hello from %s (%s)\n", in.Name, in.PrivateIP)
	}, timeout)
	if err != nil {
		return "", nil, err
	}
	step("the Service got external IP %s in %s (work requests awaited)", vip, took.Round(100*time.Millisecond))
	for _, lb := range sim.OCI().LoadBalancers() {
		if lb.IPAddress != vip {
			continue
		}
		fmt.Printf("\nOCI %s %s (display name = Service UID %s, shape %s %d-%d Mbps):\n", lb.Kind, lb.ID, lb.DisplayName, lb.Shape, lb.MinMbps, lb.MaxMbps)
		for _, l := range lb.Listeners {
			var backends []string
			for _, bs := range lb.BackendSets {
				if bs.Name == l.DefaultBackendSetName {
					for _, b := range bs.Backends {
						backends = append(backends, fmt.Sprintf("%s:%d", b.IPAddress, b.Port))
					}
				}
			}
			fmt.Printf("  listener %s %s/%d -> backend set %s: %s\n", l.Name, l.Protocol, l.Port, l.DefaultBackendSetName, strings.Join(backends, ", "))
		}
		fmt.Println()
	}
	url := fmt.Sprintf("http://%s:%d/", vip, ociDemoPort)
	step("curl %s (three times)", url)
	if err := getThrice(url, timeout); err != nil {
		stop()
		return "", nil, err
	}
	return vip, stop, nil
}
