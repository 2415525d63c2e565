//go:build e2e

package e2e

import (
	"context"
	"crypto/md5" //nolint:gosec // OCI API key fingerprints are MD5
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	ocilb "github.com/oracle/oci-go-sdk/v65/loadbalancer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The OCI cloud of the suite: its own compartment and VCN in the suite's
// cloudsim (so that Tencent's instances, which the OCI dialect places in
// its default compartment, are never the OCI CCM's) and an API key
// registered with cloudsim. An OCI CCM runs only during OCI scenarios, and
// the suite's Tencent CCM is paused meanwhile: some controller paths need
// no cloud at all (the lifecycle controller lifts the shutdown taint of any
// Ready node; every service controller claims every Service), so two CCMs
// on one cluster would do each other's work and prove nothing.
const (
	ociRegion       = simoci.DefaultRegion
	ociTenancy      = "ocid1.tenancy.oc1..aaaaaaaae2etenancy"
	ociUser         = "ocid1.user.oc1..aaaaaaaae2euser"
	ociCompartment  = "ocid1.compartment.oc1..aaaaaaaae2ecompartment"
	ociVCN          = "ocid1.vcn.oc1..aaaaaaaae2evcn"
	ociSubnet       = "ocid1.subnet.oc1..aaaaaaaae2esubnet"
	ociOtherVCN     = "ocid1.vcn.oc1..aaaaaaaae2eothervcn"
	ociOtherSubnet  = "ocid1.subnet.oc1..aaaaaaaae2eothersubnet"
	ociSecurityList = "ocid1.securitylist.oc1..aaaaaaaae2esecuritylist" // the node subnet's
	// The load balancers' own subnet and security list (config subnet1).
	ociLBSubnet       = "ocid1.subnet.oc1..aaaaaaaae2elbsubnet"
	ociLBSecurityList = "ocid1.securitylist.oc1..aaaaaaaae2elbsecuritylist"
	ociShape          = "VM.Standard3.Flex"
	ociFaultDomain    = "FAULT-DOMAIN-2"
)

// The suite's OCI address ranges (moved apart per shard: shardAddr).
var (
	ociLBCIDR = shardAddr("127.0.200.0/24")
	// ociNodeCIDR is the node subnet: every address nextIP hands out.
	ociNodeCIDR = shardAddr("127.0.0.0/17")
	// ociCIDR holds the loopback addresses nextIP hands out.
	ociCIDR = shardAddr("127.0.0.0/16")
)

// ociEnv is OCI under the conformance scenarios.
type ociEnv struct {
	once     sync.Once
	startErr error

	key         *rsa.PrivateKey
	keyPEM      string
	fingerprint string
	zone        string // the availability domain new instances get, as a zone label

	mu  sync.Mutex
	ccm *testcluster.Process // the running OCI CCM, if any
	// secrets are more credentials the leak scan looks for (finishOCI):
	// the PEM private keys of rotated API keys and of instance identities.
	secrets []string
}

var theOCIEnv = &ociEnv{}

func init() { registerCloud(theOCIEnv) }

var _ cloudEnv = (*ociEnv)(nil)

func (*ociEnv) name() string { return "oci" }

// start prepares the OCI cloud (once) and makes an OCI CCM running the
// node controllers the cluster's only CCM for the rest of the test.
func (e *ociEnv) start(t *testing.T) {
	t.Helper()
	e.prepare(t)
	e.runExclusive(t, "ccm-oci-"+strings.ReplaceAll(t.Name(), "/", "-"), ociNodeControllers...)
}

// prepare registers the key and seeds the network, once per suite.
func (e *ociEnv) prepare(t *testing.T) {
	t.Helper()
	e.once.Do(func() { e.startErr = e.setUp() })
	if e.startErr != nil {
		t.Fatalf("OCI setup: %v", e.startErr)
	}
}

// runExclusive pauses the suite's Tencent CCM and runs an OCI CCM with args
// until the end of the test.
func (e *ociEnv) runExclusive(t *testing.T, name string, args ...string) {
	t.Helper()
	e.runExclusiveWith(t, name, e.writeConfig("cloud-oci-"+name+".yaml", ""), args...)
}

// runExclusiveWith is runExclusive with a cloud config of the test's own.
func (e *ociEnv) runExclusiveWith(t *testing.T, name, cloudConfig string, args ...string) *testcluster.Process {
	t.Helper()
	pauseMainCCM(t)
	p, err := e.startCCM(name, cloudConfig, args...)
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.ccm = p
	e.mu.Unlock()
	t.Cleanup(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.ccm != nil {
			e.ccm.Stop()
			e.ccm = nil
		}
	})
	return p
}

// addSecret adds a private key (PEM) to what the leak scan looks for.
func (e *ociEnv) addSecret(pemText string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.secrets = append(e.secrets, pemText)
}

func (e *ociEnv) setUp() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	e.key = key
	e.keyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	e.fingerprint = ociFingerprint(key)
	if _, err := suite.sim.OCI().AddKey(ociTenancy+"/"+ociUser+"/"+e.fingerprint, publicPEM(key)); err != nil {
		return err
	}
	// The CCM's user runs under the shipped policy; fixtures act as an
	// administrator (policies_test.go).
	if err := setUpOCIIAM(e.fingerprint, publicPEM(key)); err != nil {
		return err
	}
	// The network a user lays out for the CCM's default security list
	// mode, None: a load balancer subnet open to the clients on the
	// listener ports and to the node subnet, and a node subnet open to the
	// load balancer subnets on the NodePorts and kube-proxy's health port
	// (docs/oci.md).
	state, err := suite.sim.OCI().SeedNetwork(simoci.NetworkSeed{
		Compartments: []string{ociCompartment},
		SecurityLists: []simoci.SecurityList{
			{ID: ociLBSecurityList, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: "e2e-lb-subnet",
				IngressSecurityRules: ociLBIngress(), EgressSecurityRules: []ocicore.EgressSecurityRule{allTo(ociNodeCIDR)}},
			{ID: ociSecurityList, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: "e2e-node-subnet",
				IngressSecurityRules: ociNodeIngress(), EgressSecurityRules: []ocicore.EgressSecurityRule{allTo("0.0.0.0/0")}},
		},
		VCNs: []simoci.VCN{
			{ID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociCIDR, DisplayName: "e2e"},
			{ID: ociOtherVCN, CompartmentID: ociCompartment, CIDRBlock: ociCIDR, DisplayName: "e2e-other"},
		},
		Subnets: []simoci.Subnet{
			{ID: ociSubnet, VCNID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociNodeCIDR, DNSLabel: "e2esubnet", SecurityListIDs: []string{ociSecurityList}},
			{ID: ociLBSubnet, VCNID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociLBCIDR, DNSLabel: "e2elb", SecurityListIDs: []string{ociLBSecurityList}},
			{ID: ociOtherSubnet, VCNID: ociOtherVCN, CompartmentID: ociCompartment},
		},
	})
	if err != nil {
		return fmt.Errorf("seed the OCI network: %w", err)
	}
	if len(state.AvailabilityDomains) == 0 {
		return fmt.Errorf("cloudsim has no availability domain")
	}
	e.zone = zoneLabel(state.AvailabilityDomains[0])
	return nil
}

// ociLBIngress admits clients to the listener ports the scenarios use.
func ociLBIngress() []ocicore.IngressSecurityRule {
	return []ocicore.IngressSecurityRule{tcpFrom("0.0.0.0/0", 8000, 8999), udpFrom("0.0.0.0/0", 53, 53)}
}

// ociNodeIngress admits the load balancer subnets to the NodePorts and to
// kube-proxy's health port.
func ociNodeIngress() []ocicore.IngressSecurityRule {
	var out []ocicore.IngressSecurityRule
	for _, lb := range []string{ociLBCIDR, ociFrontendLBCIDR} {
		out = append(out, tcpFrom(lb, 30000, 32767), udpFrom(lb, 30000, 32767), tcpFrom(lb, 10256, 10256))
	}
	return out
}

func tcpFrom(src string, lo, hi int) ocicore.IngressSecurityRule {
	return ocicore.IngressSecurityRule{Protocol: common.String("6"), Source: common.String(src),
		TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(lo), Max: common.Int(hi)}}}
}

func udpFrom(src string, lo, hi int) ocicore.IngressSecurityRule {
	return ocicore.IngressSecurityRule{Protocol: common.String("17"), Source: common.String(src),
		UdpOptions: &ocicore.UdpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(lo), Max: common.Int(hi)}}}
}

func allTo(dst string) ocicore.EgressSecurityRule {
	return ocicore.EgressSecurityRule{Protocol: common.String("all"), Destination: common.String(dst)}
}

// ociNodeControllers are what the OCI CCM of the node scenarios runs.
var ociNodeControllers = []string{"--controllers=cloud-node,cloud-node-lifecycle"}

// zoneLabel is the zone the CCM derives from an availability domain.
func zoneLabel(ad string) string {
	if _, after, ok := strings.Cut(ad, ":"); ok {
		return after
	}
	return ad
}

func ociFingerprint(key *rsa.PrivateKey) string {
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	sum := md5.Sum(der) //nolint:gosec // the fingerprint format
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

func publicPEM(key *rsa.PrivateKey) string {
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// ociConfig renders a cloud-provider.yaml for the suite's OCI cloud, with
// extra appended.
func (e *ociEnv) ociConfig(user, keyPEM, fingerprint, extra string) string {
	indented := "    " + strings.ReplaceAll(strings.TrimRight(keyPEM, "\n"), "\n", "\n    ")
	return fmt.Sprintf(`auth:
  region: %s
  tenancy: %s
  user: %s
  fingerprint: %s
  key: |
%s
compartment: %s
vcn: %s
loadBalancer:
  subnet1: %s
endpoint: %s
instanceCacheTTL: 2s
lbDrainPeriod: %s
`, ociRegion, ociTenancy, user, fingerprint, indented, ociCompartment, ociVCN, ociLBSubnet, suite.simURL, e2eDrainPeriod) + extra
}

// writeConfig writes the suite's OCI config (plus extra) into the suite dir.
func (e *ociEnv) writeConfig(name, extra string) string {
	path := filepath.Join(suite.dir, name)
	if err := os.WriteFile(path, []byte(e.ociConfig(ociUser, e.keyPEM, e.fingerprint, extra)), 0o600); err != nil {
		panic(err)
	}
	return path
}

func (e *ociEnv) newInstance(t *testing.T, name string) cloudsim.Instance {
	t.Helper()
	return e.newInstanceWith(t, name, nil)
}

func (e *ociEnv) newInstanceWith(t *testing.T, name string, setup func(*cloudsim.Instance)) cloudsim.Instance {
	t.Helper()
	n := idSeq.Add(1)
	in := cloudsim.Instance{
		Name: name, PrivateIP: nextIP(), PublicIP: publicIP(n),
		VpcID: ociVCN, SubnetID: ociSubnet, CompartmentID: ociCompartment,
		Shape: ociShape, FaultDomain: ociFaultDomain, State: "RUNNING",
	}
	if setup != nil {
		setup(&in)
	}
	added, err := suite.sim.AddInstances(in)
	if err != nil {
		t.Fatalf("add OCI instance %s: %v", name, err)
	}
	return added[0]
}

func (e *ociEnv) foreignInstance(t *testing.T, name string) cloudsim.Instance {
	t.Helper()
	return e.newInstanceWith(t, name, func(in *cloudsim.Instance) { in.VpcID, in.SubnetID = ociOtherVCN, ociOtherSubnet })
}

func (*ociEnv) providerID(in cloudsim.Instance) string { return "oci://" + in.OCID }

func (e *ociEnv) labels(cloudsim.Instance) map[string]string {
	return map[string]string{
		corev1.LabelTopologyZone:           e.zone,
		corev1.LabelTopologyRegion:         ociRegion,
		corev1.LabelInstanceTypeStable:     ociShape,
		"oci.oraclecloud.com/fault-domain": ociFaultDomain,
	}
}

// mappings: the public OCI CCM's rules (display name, VNIC private IP or
// hostname label) and a kubelet-set bare OCID.
func (*ociEnv) mappings() []nodeMapping {
	return []nodeMapping{
		{name: "name is display name, no address", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.Name}
		}},
		{name: "name is private IP", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP}
		}},
		{name: "other name, InternalIP", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: "oci-host-" + strings.ReplaceAll(in.PrivateIP, ".", "-"), InternalIP: in.PrivateIP}
		}},
		{name: "hostname label", setup: func(in *cloudsim.Instance) {
			in.HostnameLabel = "hl-" + strings.ReplaceAll(in.PrivateIP, ".", "-")
		}, node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.HostnameLabel + ".e2esubnet.e2evcn.oraclevcn.com"}
		}},
		{name: "kubelet providerID, bare OCID", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: "oci-pid-" + strings.ReplaceAll(in.PrivateIP, ".", "-"), InternalIP: in.PrivateIP, ProviderID: in.OCID}
		}, providerID: func(in cloudsim.Instance) string { return in.OCID }},
	}
}

// ociLookups are the OCI actions that read instances and their VNICs.
var ociLookups = []string{"GetInstance", "ListInstances", "ListVnicAttachments", "GetVnic", "GetSubnet"}

func (*ociEnv) lookupCalls() int {
	calls := suite.sim.Calls()
	n := 0
	for _, a := range ociLookups {
		n += total(calls[simoci.ActionPrefix+a])
	}
	return n
}

// initBudget: a display name or VNIC match, the instance, its VNIC
// attachments, the VNIC and (once) its subnet; and the lifecycle checks of
// the moment.
func (*ociEnv) initBudget() int { return 12 }

func ociFaults(code string, status int, actions ...string) []cloudsim.Fault {
	var out []cloudsim.Fault
	for _, a := range actions {
		out = append(out, cloudsim.Fault{Action: simoci.ActionPrefix + a, ErrorRate: 1, ErrorCode: code, HTTPStatus: status})
	}
	return out
}

func (*ociEnv) faults() []faultCase {
	return []faultCase{
		{name: "all-500", faults: []cloudsim.Fault{{Action: "*", ErrorRate: 1, HTTPStatus: 500}}},
		{name: "all-503", faults: []cloudsim.Fault{{Action: "*", ErrorRate: 1, HTTPStatus: 503}}},
		{name: "429-TooManyRequests", faults: ociFaults("TooManyRequests", 0, ociLookups...)},
		{name: "401-NotAuthenticated", faults: ociFaults("NotAuthenticated", 0, ociLookups...)},
		// Access lost: GetInstance and the compartment listing both say 404.
		{name: "404-everywhere", faults: ociFaults("NotAuthorizedOrNotFound", 0, ociLookups...)},
		// GetInstance says 404 but the listing shows the instance alive: the
		// answers disagree, so nothing is concluded (and a new node may be
		// initialized from the listing).
		{name: "404-GetInstance-only", faults: ociFaults("NotAuthorizedOrNotFound", 0, "GetInstance"), visible: true},
	}
}

func (e *ociEnv) badCredentials(t *testing.T) []credentialCase {
	t.Helper()
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	otherPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(other)}))
	write := func(name, text string) string {
		path := filepath.Join(suite.dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return []credentialCase{
		{name: "unregistered key", config: write("cloud-oci-unregistered-key.yaml",
			e.ociConfig(ociUser, otherPEM, ociFingerprint(other), "")), wantCode: "NotAuthenticated"},
		{name: "unknown user", config: write("cloud-oci-unknown-user.yaml",
			e.ociConfig("ocid1.user.oc1..aaaaaaaaunknown", e.keyPEM, e.fingerprint, "")), wantCode: "NotAuthenticated"},
	}
}

func (e *ociEnv) malformedConfigs() []configCase {
	valid := e.ociConfig(ociUser, e.keyPEM, e.fingerprint, "")
	replace := func(old, new string) string { return strings.Replace(valid, old, new, 1) }
	return []configCase{
		{"bad vcn", replace("vcn: "+ociVCN, "vcn: 12345"), "vcn: must be a string"},
		{"missing region", replace("  region: "+ociRegion+"\n", ""), "auth.region: required"},
		{"unknown key", valid + "vcnId: x\n", "vcnId"},
		{"bad endpoint", replace("endpoint: "+suite.simURL, "endpoint: ftp://x"), "endpoint"},
		{"instance principals and a key", valid + "useInstancePrincipals: true\n", "useInstancePrincipals is true and an API key is configured"},
		{"wrong fingerprint", replace(e.fingerprint, "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff"), "auth.fingerprint"},
		{"no key", replace("  key: |\n", "  key_file: /nonexistent/key.pem\n  nokey: |\n"), "auth.key_file /nonexistent/key.pem"},
	}
}

func (*ociEnv) startCCM(name, cloudConfig string, extraArgs ...string) (*testcluster.Process, error) {
	p, _, err := testcluster.CCM{
		Binary: suite.ccmBinary, Provider: "oci", CloudConfig: cloudConfig, Kubeconfig: suite.kubeconfig,
		Dir: suite.dir, Name: name, ExtraArgs: extraArgs,
	}.Start()
	return p, err
}

// pause stops the running OCI CCM for the rest of the test.
func (e *ociEnv) pause(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ccm != nil {
		e.ccm.Stop()
		e.ccm = nil
	}
}

// leaksSecret reports whether text holds a line of a private key's body
// (the suite's API key, a rotated one, an instance's identity key) or a
// security token.
func (e *ociEnv) leaksSecret(text string) bool {
	if strings.Contains(text, simoci.SecurityTokenPrefix) || strings.Contains(text, "ST$") {
		return true
	}
	e.mu.Lock()
	keys := append([]string{e.keyPEM}, e.secrets...)
	e.mu.Unlock()
	for _, key := range keys {
		for line := range strings.SplitSeq(key, "\n") {
			if len(line) > 20 && !strings.HasPrefix(line, "-----") && strings.Contains(text, line) {
				return true
			}
		}
	}
	return false
}

// finishOCI stops an OCI CCM left running and returns the logs and events
// that contain an OCI private key or a security token (TestMain fails the
// suite on any).
func finishOCI() []string {
	e := theOCIEnv
	e.mu.Lock()
	if e.ccm != nil {
		e.ccm.Stop()
		e.ccm = nil
	}
	e.mu.Unlock()
	if e.keyPEM == "" {
		return nil
	}
	var leaks []string
	logs, _ := filepath.Glob(filepath.Join(suite.dir, "*.log"))
	for _, f := range logs {
		if data, err := os.ReadFile(f); err == nil && e.leaksSecret(string(data)) {
			leaks = append(leaks, f)
		}
	}
	if events, err := suite.cluster.Client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{}); err == nil {
		for _, ev := range events.Items {
			if e.leaksSecret(ev.Message) {
				leaks = append(leaks, "event "+ev.Namespace+"/"+ev.Name)
			}
		}
	}
	return leaks
}

// The load balancer hooks (lb_conformance_test.go): OCI Load Balancers
// and Network Load Balancers.

// startLB prepares the cloud and pauses the suite's Tencent CCM.
func (e *ociEnv) startLB(t *testing.T) {
	t.Helper()
	e.prepare(t)
	pauseMainCCM(t)
}

func (e *ociEnv) startLBCCM(name string) (*testcluster.Process, error) {
	return e.startCCM(name, e.writeConfig("cloud-oci-"+name+".yaml", "lbDriftCheckPeriod: 2s\n"), lbControllers...)
}

func (*ociEnv) lbNode(t *testing.T, selector string) cloudsim.Instance {
	t.Helper()
	return ociLBNode(t, selector)
}

func (*ociEnv) lbKinds() []lbKind {
	return []lbKind{
		{name: "lb", annotations: map[string]string{annotations.OCILoadBalancerType.String(): "lb"}},
		{name: "nlb", annotations: map[string]string{annotations.OCILoadBalancerType.String(): "nlb"}},
	}
}

func ociView(lb simoci.LoadBalancer) lbView {
	v := lbView{id: lb.ID, vip: lb.IPAddress}
	for _, l := range lb.Listeners {
		targets := 0
		for _, bs := range lb.BackendSets {
			if bs.Name == l.DefaultBackendSetName {
				targets = len(bs.Backends)
			}
		}
		v.listeners = append(v.listeners, lbListener{name: l.Name, port: l.Port, targets: targets})
	}
	return v
}

func ociLive(lb simoci.LoadBalancer) bool {
	return lb.LifecycleState != "DELETED" && lb.LifecycleState != "DELETING"
}

// serviceLBs: the load balancers named for the Service (both kinds).
func (*ociEnv) serviceLBs(uid types.UID) []lbView {
	var out []lbView
	for _, lb := range ociLBsOf(uid) {
		out = append(out, ociView(lb))
	}
	return out
}

func (*ociEnv) lbIDs() []string { return ociLiveLBIDs() }

func ociLiveLBIDs() []string {
	var ids []string
	for _, lb := range suite.sim.OCI().LoadBalancers() {
		if ociLive(lb) {
			ids = append(ids, lb.ID)
		}
	}
	return ids
}

func (*ociEnv) lb(id string) (lbView, bool) {
	lb, err := suite.sim.OCI().LoadBalancer(id)
	return ociView(lb), err == nil && ociLive(lb)
}

// ociLBOp is the operation of an OCI load balancing action ("oci:nlb:
// CreateBackendSet" is CreateBackendSet), or "" for any other action.
func ociLBOp(action string) string {
	op, ok := strings.CutPrefix(action, simoci.ActionPrefix)
	if !ok {
		return ""
	}
	return strings.TrimPrefix(op, "nlb:")
}

// lbWrites: every OCI action that creates, updates, deletes or changes
// something (nothing else writes to OCI during the scenarios: the node
// controllers only read, and the security list mode is None).
func (*ociEnv) lbWrites() map[string]int {
	out := map[string]int{}
	for action, byCode := range suite.sim.Calls() {
		op := ociLBOp(action)
		for _, verb := range []string{"Create", "Update", "Delete", "Change"} {
			if strings.HasPrefix(op, verb) {
				out[action] = total(byCode)
			}
		}
	}
	return out
}

func (*ociEnv) lbReads() int {
	n := 0
	for action, byCode := range suite.sim.Calls() {
		switch ociLBOp(action) {
		case "GetLoadBalancer", "ListLoadBalancers", "GetNetworkLoadBalancer", "ListNetworkLoadBalancers":
			n += total(byCode)
		}
	}
	return n
}

// adoptableLB: a Load Balancer made through the OCI API, as the public OCI
// CCM (or a user) would have made it for the Service: named by the
// Service's UID, with a listener and backend set of someone else's.
func (e *ociEnv) adoptableLB(t *testing.T, svc *corev1.Service) (lbView, lbListener) {
	t.Helper()
	clients, err := ociapi.New(ociapi.Options{Tenancy: ociTenancy, User: ociAdminUser, Region: ociRegion, Fingerprint: e.fingerprint,
		Key: e.keyPEM, Endpoint: suite.simURL, Limits: ociapi.Limits{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	name := string(svc.UID)
	_, err = clients.LB.CreateLoadBalancer(context.Background(), ocilb.CreateLoadBalancerRequest{CreateLoadBalancerDetails: ocilb.CreateLoadBalancerDetails{
		CompartmentId: common.String(ociCompartment), DisplayName: common.String(name), ShapeName: common.String("flexible"),
		ShapeDetails: &ocilb.ShapeDetails{MinimumBandwidthInMbps: common.Int(10), MaximumBandwidthInMbps: common.Int(100)},
		SubnetIds:    []string{ociLBSubnet}, IsPrivate: common.Bool(false),
		BackendSets: map[string]ocilb.BackendSetDetails{"legacy": {Policy: common.String("ROUND_ROBIN"),
			HealthChecker: &ocilb.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(9443)}}},
		Listeners: map[string]ocilb.ListenerDetails{"legacy": {DefaultBackendSetName: common.String("legacy"), Port: common.Int(9443), Protocol: common.String("TCP")}},
	}})
	if err != nil {
		t.Fatalf("create the load balancer to adopt: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, lb := range suite.sim.OCI().LoadBalancers() {
			if lb.DisplayName == name && lb.LifecycleState == "ACTIVE" {
				t.Cleanup(func() { _ = suite.sim.OCI().DeleteLoadBalancer(lb.ID) })
				return ociView(lb), lbListener{name: "legacy", port: 9443}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the load balancer to adopt, %s, is not ACTIVE within 30s", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (*ociEnv) adoptedLBKept() bool { return false }

func (*ociEnv) deleteListener(t *testing.T, lb lbView, port int) {
	t.Helper()
	l, ok := lb.listenerOn(port)
	if !ok {
		t.Fatalf("load balancer %s has no listener on port %d: %+v", lb.id, port, lb.listeners)
	}
	if err := suite.sim.OCI().DeleteListener(lb.id, l.name); err != nil {
		t.Fatalf("delete listener %s of %s: %v", l.name, lb.id, err)
	}
}

// badLBService: a flexible shape's minimum above its maximum, and a UDP
// port, which a Load Balancer does not take.
func (*ociEnv) badLBService() (func(*corev1.Service), []string) {
	return func(s *corev1.Service) {
			s.Annotations[annotations.OCILBShapeFlexMin.String()] = "400"
			s.Annotations[annotations.OCILBShapeFlexMax.String()] = "100"
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: nextNodePort()})
		},
		[]string{annotations.OCILBShapeFlexMax.String(), "port 53/UDP"}
}
