package oci

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
	"github.com/ccmkit/ccm/internal/testcluster/kubeproxy"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// These tests run the provider, through the real SDK, against cloudsim's
// OCI dialect in-process: signed requests, pagination, work requests and
// load balancers carrying traffic. The e2e suite does the same through the
// CCM binary and a real apiserver.

const (
	simCompartment = "ocid1.compartment.oc1..aaaaaaaaprovidertest"
	simVCN         = "ocid1.vcn.oc1..aaaaaaaaprovidertest"
	simSubnet      = "ocid1.subnet.oc1..aaaaaaaaprovidertest"
	simList        = "ocid1.securitylist.oc1..aaaaaaaaprovidertest"
	// Subnets whose lists start empty, for mode All.
	simAllLBSubnet   = "ocid1.subnet.oc1..aaaaaaaaprovideralllb"
	simAllLBList     = "ocid1.securitylist.oc1..aaaaaaaaprovideralllb"
	simAllNodeSubnet = "ocid1.subnet.oc1..aaaaaaaaprovidernodes"
	simAllNodeList   = "ocid1.securitylist.oc1..aaaaaaaaprovidernodes"
)

func tcpIngress(src string, lo, hi int) ocicore.IngressSecurityRule {
	return ocicore.IngressSecurityRule{Protocol: ocicommon.String("6"), Source: ocicommon.String(src),
		TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: ocicommon.Int(lo), Max: ocicommon.Int(hi)}}}
}

func startSim(t *testing.T) (*cloudsim.Sim, *Cloud) {
	t.Helper()
	sim, c, _ := startSimWith(t, nil)
	return sim, c
}

// startSimWith is startSim with changed cloudsim options; it returns the
// provider's config too, for tests that call OCI directly.
func startSimWith(t *testing.T, mod func(*cloudsim.Options)) (*cloudsim.Sim, *Cloud, *config.Config) {
	t.Helper()
	k := configtest.Key()
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := cloudsim.Options{
		Latency:             cloudsim.ZeroLatency, // unit test: answers at once
		HealthCheckInterval: 200 * time.Millisecond,
		OCI: cloudsim.OCIOptions{
			Keys: map[string]string{
				configtest.Tenancy + "/" + configtest.User + "/" + configtest.Fingerprint(): string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
			},
			Network: simoci.NetworkSeed{
				Compartments: []string{simCompartment},
				VCNs:         []simoci.VCN{{ID: simVCN, CompartmentID: simCompartment, CIDRBlock: "127.0.0.0/16"}},
				// The LB and the nodes share simSubnet, whose list admits the
				// clients on every TCP port and the subnet (the LB) to the
				// nodes, as a user of mode None would set it up.
				SecurityLists: []simoci.SecurityList{
					{ID: simList, VCNID: simVCN, CompartmentID: simCompartment,
						IngressSecurityRules: []ocicore.IngressSecurityRule{tcpIngress("0.0.0.0/0", 1, 65535)},
						EgressSecurityRules:  []ocicore.EgressSecurityRule{{Protocol: ocicommon.String("all"), Destination: ocicommon.String("0.0.0.0/0")}}},
					{ID: simAllLBList, VCNID: simVCN, CompartmentID: simCompartment},
					{ID: simAllNodeList, VCNID: simVCN, CompartmentID: simCompartment},
				},
				Subnets: []simoci.Subnet{
					{ID: simSubnet, VCNID: simVCN, CompartmentID: simCompartment, CIDRBlock: "127.0.0.0/17", SecurityListIDs: []string{simList}},
					{ID: simAllLBSubnet, VCNID: simVCN, CompartmentID: simCompartment, CIDRBlock: "127.0.200.0/24", SecurityListIDs: []string{simAllLBList}},
					{ID: simAllNodeSubnet, VCNID: simVCN, CompartmentID: simCompartment, CIDRBlock: "127.0.150.0/24", SecurityListIDs: []string{simAllNodeList}},
				},
			},
			WorkRequestLatency: 50 * time.Millisecond,
		},
	}
	if mod != nil {
		mod(&opts)
	}
	sim := cloudsim.New(opts)
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	cfgText := strings.NewReplacer(testCompartment, simCompartment, testVCN, simVCN).Replace(configtest.Valid(
		"endpoint: " + url + "\nloadBalancer:\n  subnet1: " + simSubnet + "\n"))
	cfg, err := config.Load(strings.NewReader(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sim, c, cfg
}

// serveKubeProxy answers kube-proxy's /healthz on ip:10256: the load
// balancers' default health check (externalTrafficPolicy Cluster).
// freeHealthAddr is the first of prefix1 to prefix250 on which kube-proxy's
// health port is free.
func freeHealthAddr(t *testing.T, prefix string) string {
	t.Helper()
	for i := 1; i <= 250; i++ {
		ip := fmt.Sprintf("%s%d", prefix, i)
		if ln, err := net.Listen("tcp", ip+":10256"); err == nil {
			_ = ln.Close()
			return ip
		}
	}
	t.Fatalf("no address %s1-250 with port 10256 free", prefix)
	return ""
}

func serveKubeProxy(t *testing.T, ip string) {
	t.Helper()
	h := kubeproxy.New()
	if err := h.Serve(ip); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
}

func TestCloudsimNodes(t *testing.T) {
	sim, c := startSim(t)
	added, err := sim.AddInstances(
		cloudsim.Instance{Name: "node-a", PrivateIP: "127.0.50.1", PublicIP: "127.1.50.1", VpcID: simVCN, SubnetID: simSubnet,
			CompartmentID: simCompartment, FaultDomain: "FAULT-DOMAIN-2", HostnameLabel: "node-a"},
		cloudsim.Instance{Name: "node-b", PrivateIP: "127.0.50.2", VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment},
	)
	if err != nil {
		t.Fatal(err)
	}
	c.instances.stateMaxAge = 0 // every lifecycle check reads afresh
	iv2, _ := c.InstancesV2()
	ctx := context.Background()
	md, err := iv2.InstanceMetadata(ctx, node("node-a"))
	if err != nil {
		t.Fatal(err)
	}
	if md.ProviderID != "oci://"+added[0].OCID || md.AdditionalLabels[LabelFaultDomain] != "FAULT-DOMAIN-2" || md.InstanceType == "" || md.Zone == "" {
		t.Errorf("metadata = %+v", md)
	}
	md, err = iv2.InstanceMetadata(ctx, node("127.0.50.2"))
	if err != nil {
		t.Fatal(err)
	}
	if md.ProviderID != "oci://"+added[1].OCID {
		t.Errorf("by IP: providerID = %q", md.ProviderID)
	}
	byPID := node("x", providerID("oci://"+added[1].OCID))
	if ok, err := iv2.InstanceExists(ctx, byPID); !ok || err != nil {
		t.Fatalf("exists = %v, %v", ok, err)
	}
	if err := sim.SetInstanceState(added[1].ID, "STOPPED"); err != nil {
		t.Fatal(err)
	}
	if down, err := iv2.InstanceShutdown(ctx, byPID); !down || err != nil {
		t.Fatalf("shutdown = %v, %v", down, err)
	}
	if err := sim.SetInstanceState(added[1].ID, "TERMINATING"); err != nil {
		t.Fatal(err)
	}
	if ok, err := iv2.InstanceExists(ctx, byPID); ok || err != nil {
		t.Fatalf("exists after termination = %v, %v", ok, err)
	}
	// A terminated instance's node is not initialized again.
	if _, err := iv2.InstanceMetadata(ctx, node("node-b")); !errors.Is(err, cloudprovider.InstanceNotFound) {
		t.Errorf("metadata of a terminated instance: %v", err)
	}
}

func TestCloudsimLoadBalancer(t *testing.T) {
	sim, c := startSim(t)
	// A "node": a server on a loopback address and a port standing for the
	// NodePort, and kube-proxy's health port (10256, fixed) on the same
	// address: the first address whose health port is free, as another run
	// of this test (a second checkout, a developer's) may hold one.
	nodeIP := freeHealthAddr(t, "127.0.51.")
	ln, err := net.Listen("tcp", nodeIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	serveKubeProxy(t, nodeIP)
	nodePort := ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello from node") })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	added, err := sim.AddInstances(cloudsim.Instance{Name: "lb-node", PrivateIP: nodeIP, VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	if err != nil {
		t.Fatal(err)
	}
	n := node("lb-node", internalIP(nodeIP), providerID("oci://"+added[0].OCID))
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			svc := lbService(map[string]string{"oci.oraclecloud.com/load-balancer-type": kind},
				corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: int32(nodePort)})
			svc.UID = types.UID("uid-cloudsim-" + kind)
			lb, _ := c.LoadBalancer()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st, err := lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n})
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Ingress) == 0 {
				t.Fatal("no ingress")
			}
			vip := st.Ingress[0].IP
			body, err := getUntil(ctx, fmt.Sprintf("http://%s:8080/", vip))
			if err != nil || body != "hello from node" {
				t.Fatalf("through the VIP %s: %q, %v", vip, body, err)
			}
			// Deleted out of band: the next Ensure creates it again, although
			// the Service UID's retry token still replays the first creation.
			for _, l := range sim.OCI().LoadBalancers() {
				if l.DisplayName == string(svc.UID) {
					if err := sim.OCI().DeleteLoadBalancer(l.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			st, err = lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n})
			if err != nil {
				t.Fatalf("re-create after an out-of-band delete: %v", err)
			}
			body, err = getUntil(ctx, fmt.Sprintf("http://%s:8080/", st.Ingress[0].IP))
			if err != nil || body != "hello from node" {
				t.Fatalf("through the new VIP %s: %q, %v", st.Ingress[0].IP, body, err)
			}
			sim.ResetCalls()
			if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
				t.Fatal(err)
			}
			for action, codes := range sim.Calls() {
				if !strings.Contains(action, "Get") && !strings.Contains(action, "List") {
					t.Errorf("an unchanged resync called %s %v", action, codes)
				}
			}
			if err := lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
			if _, exists, err := lb.GetLoadBalancer(ctx, "k", svc); exists || err != nil {
				t.Fatalf("after delete: exists=%v err=%v", exists, err)
			}
		})
	}
}

func getUntil(ctx context.Context, url string) (string, error) {
	var last error
	for ctx.Err() == nil {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				return string(b), nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return "", last
}

// Security list mode Frontend against cloudsim: our ingress rules appear on
// the subnet's security list (etag-guarded updates), someone else's stay,
// an unchanged resync writes nothing, and deletion removes only ours.
func TestCloudsimSecurityListFrontend(t *testing.T) {
	sim, c := startSim(t)
	added, err := sim.AddInstances(cloudsim.Instance{Name: "sl-node", PrivateIP: "127.0.52.1", VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	if err != nil {
		t.Fatal(err)
	}
	n := node("sl-node", internalIP("127.0.52.1"), providerID("oci://"+added[0].OCID))
	svc := lbService(map[string]string{annotations.OCILBSecurityListManagementMode.String(): "Frontend"})
	svc.UID = "uid-cloudsim-seclist"
	svc.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"}
	lb, _ := c.LoadBalancer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ours := func() (rules []string, others int) {
		for _, sl := range sim.OCI().Network().SecurityLists {
			for _, r := range sl.IngressSecurityRules {
				if deref(r.Description) == "ccmkit.io/service-uid="+string(svc.UID) {
					rules = append(rules, fmt.Sprintf("%s %s %d", *r.Source, *r.Protocol, *r.TcpOptions.DestinationPortRange.Min))
				} else {
					others++
				}
			}
		}
		return rules, others
	}
	_, othersBefore := ours()
	if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
		t.Fatal(err)
	}
	if rules, others := ours(); len(rules) != 1 || rules[0] != "192.0.2.0/24 6 80" || others != othersBefore {
		t.Fatalf("rules = %v (others %d, before %d)", rules, others, othersBefore)
	}
	sim.ResetCalls()
	if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
		t.Fatal(err)
	}
	if calls := sim.Calls()["oci:UpdateSecurityList"]; len(calls) != 0 {
		t.Errorf("an unchanged resync updated the security list: %v", calls)
	}
	if err := lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
		t.Fatal(err)
	}
	if rules, others := ours(); len(rules) != 0 || others != othersBefore {
		t.Errorf("after delete: ours %v, others %d (before %d)", rules, others, othersBefore)
	}
}

// Security list mode All against cloudsim: on a load balancer subnet and a
// node subnet whose lists start empty (so cloudsim's data plane carries
// nothing), the CCM's rules, and only they, make the traffic flow.
func TestCloudsimSecurityListAll(t *testing.T) {
	sim, c := startSim(t)
	ln, err := net.Listen("tcp", "127.0.150.1:0")
	if err != nil {
		t.Skipf("no loopback alias: %v", err)
	}
	serveKubeProxy(t, "127.0.150.1")
	nodePort := ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello from node") })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	added, err := sim.AddInstances(cloudsim.Instance{Name: "all-node", PrivateIP: "127.0.150.1", VpcID: simVCN, SubnetID: simAllNodeSubnet, CompartmentID: simCompartment})
	if err != nil {
		t.Fatal(err)
	}
	n := node("all-node", internalIP("127.0.150.1"), providerID("oci://"+added[0].OCID))
	svc := lbService(map[string]string{annotations.OCILBSecurityListManagementMode.String(): "All", string(annotations.OCILBSubnet1): simAllLBSubnet},
		corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: int32(nodePort)})
	svc.UID = "uid-cloudsim-all"
	lb, _ := c.LoadBalancer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n})
	if err != nil {
		t.Fatal(err)
	}
	if body, err := getUntil(ctx, fmt.Sprintf("http://%s:8080/", st.Ingress[0].IP)); err != nil || body != "hello from node" {
		t.Fatalf("through the VIP: %q, %v", body, err)
	}
	rules := func(id string) []string {
		var out []string
		for _, sl := range sim.OCI().Network().SecurityLists {
			if sl.ID != id {
				continue
			}
			for _, r := range sl.IngressSecurityRules {
				out = append(out, fmt.Sprintf("in %s %s %d", *r.Source, *r.Protocol, *r.TcpOptions.DestinationPortRange.Min))
			}
			for _, r := range sl.EgressSecurityRules {
				out = append(out, fmt.Sprintf("out %s %s %d", *r.Destination, *r.Protocol, *r.TcpOptions.DestinationPortRange.Min))
			}
		}
		return out
	}
	// The NodePort for the traffic, kube-proxy's 10256 for the health check.
	wantLB := []string{"in 0.0.0.0/0 6 8080", "out 127.0.150.0/24 6 10256", fmt.Sprintf("out 127.0.150.0/24 6 %d", nodePort)}
	wantNode := []string{"in 127.0.200.0/24 6 10256", fmt.Sprintf("in 127.0.200.0/24 6 %d", nodePort)}
	if got := rules(simAllLBList); !sameSet(got, wantLB) {
		t.Errorf("LB subnet's rules = %v, want %v", got, wantLB)
	}
	if got := rules(simAllNodeList); !sameSet(got, wantNode) {
		t.Errorf("node subnet's rules = %v, want %v", got, wantNode)
	}
	if err := lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
		t.Fatal(err)
	}
	if got := append(rules(simAllLBList), rules(simAllNodeList)...); len(got) != 0 {
		t.Errorf("rules left after delete: %v", got)
	}
}

// sameSet compares two lists ignoring order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
