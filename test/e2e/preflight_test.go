//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
	simtencent "github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// `cloud-controller-manager preflight` against broken setups: each is found
// by the right check with the right hint, and a good setup passes. The test
// has its own control plane (so that the node check sees only its nodes)
// and its own clouds: a good one, one whose clock is 10 minutes ahead, one
// 2 minutes ahead, and one whose CLB quota is used up.

const (
	pfVPC        = "vpc-pf000001"
	pfVPCCIDR    = "10.0.0.0/16"
	pfTable      = "cls-pf000001"
	pfTableCIDR  = "10.244.0.0/16"
	pfOtherTable = "cls-pf000002"
	pfOtherCIDR  = "10.96.0.0/16"

	pfCompartment = "ocid1.compartment.oc1..aaaaaaaapfcompartment"
	pfVCN         = "ocid1.vcn.oc1..aaaaaaaapfvcn"
	pfSubnet      = "ocid1.subnet.oc1..aaaaaaaapfsubnet"
	pfOtherVCN    = "ocid1.vcn.oc1..aaaaaaaapfothervcn"
	pfOtherSubnet = "ocid1.subnet.oc1..aaaaaaaapfothersubnet"
	pfUser        = "ocid1.user.oc1..aaaaaaaapfuser"
)

// pfCloud is one cloudsim with both clouds laid out for preflight.
type pfCloud struct {
	sim *cloudsim.Sim
	url string
}

// pfOCIKey is the OCI API key every pfCloud accepts.
type pfOCIKey struct {
	pem, fingerprint string
}

func newPFCloud(t *testing.T, key pfOCIKey, pub string, opts cloudsim.Options) pfCloud {
	t.Helper()
	opts.Region = region
	opts.Tencent.Credentials = credentials()
	opts.Tencent.VPCs = []simtencent.VPCNetwork{{ID: pfVPC, CIDR: pfVPCCIDR}}
	opts.Tencent.RouteTables = []simtencent.RouteTable{
		{Name: pfTable, CIDR: pfTableCIDR, VpcID: pfVPC},
		{Name: pfOtherTable, CIDR: pfOtherCIDR, VpcID: pfVPC},
	}
	opts.Tencent.CLBTargetQuota = 2
	opts.DisableDataPlane = true
	sim := cloudsim.New(opts)
	if _, err := sim.OCI().AddKey(ociTenancy+"/"+pfUser+"/"+key.fingerprint, pub); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.OCI().SeedNetwork(simoci.NetworkSeed{
		Compartments: []string{pfCompartment},
		VCNs: []simoci.VCN{
			{ID: pfVCN, CompartmentID: pfCompartment, CIDRBlock: "10.0.0.0/16", DisplayName: "pf"},
			{ID: pfOtherVCN, CompartmentID: pfCompartment, CIDRBlock: "10.1.0.0/16", DisplayName: "pf-other"},
		},
		Subnets: []simoci.Subnet{
			{ID: pfSubnet, VCNID: pfVCN, CompartmentID: pfCompartment, CIDRBlock: "10.0.1.0/24", DNSLabel: "pflb"},
			{ID: pfOtherSubnet, VCNID: pfOtherVCN, CompartmentID: pfCompartment, CIDRBlock: "10.1.1.0/24", DNSLabel: "pfother"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return pfCloud{sim: sim, url: url}
}

// pfExpect is one row the output must hold: the check, its result, and a
// phrase of its detail or hint.
type pfExpect struct {
	check, status, phrase string
}

type pfCase struct {
	name   string
	config string   // the cloud config's content
	args   []string // besides --cloud-provider and --cloud-config
	nodes  []*corev1.Node
	exit   int
	want   []pfExpect
}

func TestPreflight(t *testing.T) {
	dir := t.TempDir()
	cluster, err := testcluster.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cluster.ApplyFile(ctx, filepath.Join(repoRoot(), "deploy", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	ccmKube, err := cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.CoreV1().ServiceAccounts("kube-system").Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "no-rbac"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	noRBACKube, err := cluster.ServiceAccountKubeconfig(ctx, "kube-system", "no-rbac")
	if err != nil {
		t.Fatal(err)
	}
	adminKube := cluster.AdminKubeconfig

	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key := pfOCIKey{
		pem:         string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)})),
		fingerprint: ociFingerprint(rsaKey),
	}
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	unregistered := pfOCIKey{
		pem:         string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(otherKey)})),
		fingerprint: ociFingerprint(otherKey),
	}
	pub := publicPEM(rsaKey)
	good := newPFCloud(t, key, pub, cloudsim.Options{})
	ahead10m := newPFCloud(t, key, pub, cloudsim.Options{Clock: func() time.Time { return time.Now().Add(10 * time.Minute) }})
	ahead2m := newPFCloud(t, key, pub, cloudsim.Options{Clock: func() time.Time { return time.Now().Add(2 * time.Minute) }})
	full := newPFCloud(t, key, pub, cloudsim.Options{Tencent: cloudsim.TencentOptions{CLBQuotaOpen: 1}})
	if _, err := full.sim.Tencent().CLB().CreateLoadBalancer(simtencent.CLBSpec{Name: "someone-elses", VpcID: pfVPC}); err != nil {
		t.Fatal(err)
	}

	withRole := newPFCloud(t, key, pub, cloudsim.Options{Tencent: cloudsim.TencentOptions{
		Roles: []simtencent.Role{{Name: "pf-ccm-node"}}, MetadataRole: "pf-ccm-node",
	}})
	cvmRole := func(c pfCloud) string {
		return fmt.Sprintf("region: %s\nvpc_id: %s\ncredential_source: cvm-role\nmetadata_endpoint: %s\napi_endpoint: %s\n",
			region, pfVPC, c.url, c.url)
	}

	tencent := func(c pfCloud, id, secret, extra string) string {
		return fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\n%s",
			region, pfVPC, id, secret, c.url, extra)
	}
	withTable := "cluster_route_table: " + pfTable + "\n"
	oci := func(c pfCloud, k pfOCIKey, compartment, vcn, subnet string) string {
		indented := "    " + strings.ReplaceAll(strings.TrimRight(k.pem, "\n"), "\n", "\n    ")
		return fmt.Sprintf("auth:\n  region: %s\n  tenancy: %s\n  user: %s\n  fingerprint: %s\n  key: |\n%s\ncompartment: %s\nvcn: %s\nloadBalancer:\n  subnet1: %s\nendpoint: %s\n",
			ociRegion, ociTenancy, pfUser, k.fingerprint, indented, compartment, vcn, subnet, c.url)
	}
	// The instance principal the good cloud's metadata service answers for.
	pfHost, err := good.sim.AddInstances(cloudsim.Instance{Name: "pf-ccm-host", VpcID: pfVCN, SubnetID: pfSubnet, CompartmentID: pfCompartment})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := good.sim.OCI().SetMetadataInstance(pfHost[0].OCID, ociTenancy); err != nil {
		t.Fatal(err)
	}
	ociIP := func(c pfCloud, metadata string) string {
		return fmt.Sprintf("useInstancePrincipals: true\nauth:\n  metadataEndpoint: %s/opc/v2\n  federationEndpoint: %s\ncompartment: %s\nvcn: %s\nloadBalancer:\n  subnet1: %s\nendpoint: %s\n",
			metadata, c.url, pfCompartment, pfVCN, pfSubnet, c.url)
	}
	kube := "--kubeconfig=" + ccmKube
	tcNodes := []*corev1.Node{
		pfNode("pf-tc-1", "tencentcloud:///"+zone+"/ins-pf000001", false),
		pfNode("pf-tc-2", "", true), // joining: the CCM will initialize it
	}
	ociNodes := []*corev1.Node{
		pfNode("pf-oci-1", "oci://ocid1.instance.oc1.iad.aaaaaaaapfinstance1", false),
		pfNode("pf-oci-2", "ocid1.instance.oc1.iad.aaaaaaaapfinstance2", false), // kubelet --provider-id, bare OCID
	}

	cases := []pfCase{
		{name: "tencent good setup", config: tencent(good, secretID, secretKey, withTable), nodes: tcNodes,
			args: []string{kube, "--cluster-cidr=" + pfTableCIDR, "--leader-elect=true", "--v=2"}, exit: 0,
			want: []pfExpect{
				{"cloud config", "ok", pfVPC}, {"credential source", "ok", "a key (secret_id, secret_key); does not expire"},
				{"credentials", "ok", "signed DescribeInstances"}, {"clock", "ok", ""},
				{"VPC", "ok", pfVPCCIDR}, {"route table", "ok", pfTable}, {"cluster CIDR", "ok", "overlaps none"},
				{"CLB quota", "ok", "0 of 100 public CLBs"}, {"targets per listener", "ok", "2 nodes fit in 2"},
				{"RBAC", "ok", "system:serviceaccount:kube-system:cloud-controller-manager holds all"},
				{"nodes", "ok", "1 with a providerID of tencentcloud, 1 waiting"},
			}},
		{name: "tencent CVM role", config: cvmRole(withRole), nodes: tcNodes, args: []string{kube}, exit: 0,
			want: []pfExpect{{"credential source", "ok", "the CVM's CAM role (bound to the instance) from the metadata service"},
				{"credential source", "ok", "; temporary, expires "}, {"credentials", "ok", "signed DescribeInstances"}}},
		{name: "tencent CVM without a role", config: cvmRole(good), nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credential source", "FAIL", "404: no such CAM role is bound to this instance"}}},
		{name: "tencent wrong secret key", config: tencent(good, secretID, "not-the-key", withTable), nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credentials", "FAIL", "secret_key does not belong to secret_id"}, {"VPC", "skip", "credentials"}}},
		{name: "tencent unknown secret id", config: tencent(good, "AKIDccmkitE2EUNKNOWN000000000000000", secretKey, withTable), nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credentials", "FAIL", "secret_id is not an API key"}}},
		{name: "tencent clock 10 minutes behind", config: tencent(ahead10m, secretID, secretKey, withTable), nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credentials", "FAIL", "AuthFailure.SignatureExpire"}, {"clock", "FAIL", "10m0s behind"}}},
		{name: "tencent clock 2 minutes behind", config: tencent(ahead2m, secretID, secretKey, withTable), nodes: tcNodes, args: []string{kube}, exit: 0,
			want: []pfExpect{{"credentials", "ok", ""}, {"clock", "warn", "2m0s behind"}}},
		{name: "tencent VPC missing", config: strings.Replace(tencent(good, secretID, secretKey, ""), pfVPC, "vpc-pf0000ff", 1), nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"VPC", "FAIL", "set vpc_id"}}},
		{name: "tencent route table missing", config: tencent(good, secretID, secretKey, "cluster_route_table: cls-pfmissing\n"), nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"route table", "FAIL", "create_cluster_route_table"}}},
		{name: "tencent cluster CIDR of another cluster", config: tencent(good, secretID, secretKey, withTable), nodes: tcNodes,
			args: []string{kube, "--cluster-cidr=10.96.0.0/17"}, exit: 1,
			want: []pfExpect{{"route table", "FAIL", "not inside route table"}, {"cluster CIDR", "FAIL", "overlaps route table " + pfOtherTable}}},
		{name: "tencent cluster CIDR overlaps the VPC", config: tencent(good, secretID, secretKey, ""), nodes: tcNodes,
			args: []string{kube, "--cluster-cidr=10.0.0.0/8"}, exit: 1,
			want: []pfExpect{{"route table", "skip", "routes are off"}, {"cluster CIDR", "FAIL", "overlaps VPC " + pfVPC}}},
		{name: "tencent CLB quota used up", config: tencent(full, secretID, secretKey, withTable), nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"CLB quota", "FAIL", "1 of 1 public CLBs"}}},
		{name: "tencent more nodes than targets per listener", config: tencent(good, secretID, secretKey, withTable),
			nodes: append([]*corev1.Node{pfNode("pf-tc-3", "", true)}, tcNodes...), args: []string{kube}, exit: 0,
			want: []pfExpect{{"targets per listener", "warn", "subset of 2 nodes"}}},
		{name: "RBAC not granted", config: tencent(good, secretID, secretKey, withTable), nodes: tcNodes,
			args: []string{"--kubeconfig=" + noRBACKube}, exit: 1,
			want: []pfExpect{{"RBAC", "FAIL", "system:serviceaccount:kube-system:no-rbac may not: get nodes"}, {"nodes", "FAIL", "list nodes"}}},
		{name: "RBAC checked by impersonation", config: tencent(good, secretID, secretKey, withTable), nodes: tcNodes,
			args: []string{"--kubeconfig=" + adminKube, "--as=system:serviceaccount:kube-system:cloud-controller-manager"}, exit: 0,
			want: []pfExpect{{"RBAC", "ok", "system:serviceaccount:kube-system:cloud-controller-manager holds all"}}},
		{name: "kubelet without --cloud-provider=external", config: tencent(good, secretID, secretKey, withTable),
			nodes: append([]*corev1.Node{pfNode("pf-internal", "", false)}, tcNodes...), args: []string{kube}, exit: 1,
			want: []pfExpect{{"nodes", "FAIL", "no providerID and no uninitialized taint (the CCM will never initialize them): pf-internal"}}},
		{name: "node of another cloud", config: tencent(good, secretID, secretKey, withTable),
			nodes: append([]*corev1.Node{pfNode("pf-aws", "aws:///us-east-1a/i-0123456789", false)}, tcNodes...), args: []string{kube}, exit: 1,
			want: []pfExpect{{"nodes", "FAIL", "another cloud's providerID: pf-aws (aws:///us-east-1a/i-0123456789)"}}},
		{name: "no kubeconfig", config: tencent(good, secretID, secretKey, withTable), nodes: tcNodes, exit: 0,
			want: []pfExpect{{"RBAC", "skip", "pass the CCM's kubeconfig"}, {"targets per listener", "skip", "node count is unknown"}}},
		{name: "bad cloud config", config: "region: ap-guangzhou\nvpc_idd: vpc-1\n", nodes: tcNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"cloud config", "FAIL", "vpc_idd"}}},

		{name: "oci good setup", config: oci(good, key, pfCompartment, pfVCN, pfSubnet), nodes: ociNodes,
			args: []string{kube, "--cluster-cidr=10.244.0.0/16"}, exit: 0,
			want: []pfExpect{
				{"credential source", "ok", "static-key: API key " + ociTenancy + "/" + pfUser + "/" + key.fingerprint},
				{"credentials", "ok", "signed ListInstances"}, {"clock", "ok", ""}, {"VCN", "ok", "10.0.0.0/16"},
				{"subnets", "ok", "in the VCN"}, {"cluster CIDR", "ok", ""}, {"backends per backend set", "ok", "2 nodes fit"},
				{"RBAC", "ok", ""}, {"nodes", "ok", "2 with a providerID of oci"},
			}},
		{name: "oci instance principal", config: ociIP(good, good.url), nodes: ociNodes, args: []string{kube}, exit: 0,
			want: []pfExpect{
				{"credential source", "ok", "instance-principal: instance principal of " + pfHost[0].OCID + " (tenancy " + ociTenancy + "), security token valid until"},
				{"credentials", "ok", "signed ListInstances"}, {"VCN", "ok", "10.0.0.0/16"},
			}},
		{name: "oci instance principal off OCI", config: ociIP(good, "http://127.0.0.1:9"), nodes: ociNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credential source", "FAIL", "instance principals work only on an OCI instance"}}},
		{name: "oci unregistered key", config: oci(good, unregistered, pfCompartment, pfVCN, pfSubnet), nodes: ociNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credentials", "FAIL", "the API key is not accepted"}}},
		{name: "oci unknown compartment", config: oci(good, key, "ocid1.compartment.oc1..aaaaaaaapfnowhere", pfVCN, pfSubnet), nodes: ociNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credentials", "FAIL", "does not exist, or no policy lets the user read it"}}},
		{name: "oci clock 10 minutes behind", config: oci(ahead10m, key, pfCompartment, pfVCN, pfSubnet), nodes: ociNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"credentials", "FAIL", "the clock"}, {"clock", "FAIL", "10m0s behind"}}},
		{name: "oci VCN missing", config: oci(good, key, pfCompartment, "ocid1.vcn.oc1..aaaaaaaapfnovcn", pfSubnet), nodes: ociNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"VCN", "FAIL", "set vcn"}, {"subnets", "FAIL", "is in VCN " + pfVCN}}},
		{name: "oci subnet of another VCN", config: oci(good, key, pfCompartment, pfVCN, pfOtherSubnet), nodes: ociNodes, args: []string{kube}, exit: 1,
			want: []pfExpect{{"subnets", "FAIL", "is in VCN " + pfOtherVCN}}},
		{name: "oci cluster CIDR overlaps the VCN", config: oci(good, key, pfCompartment, pfVCN, pfSubnet), nodes: ociNodes,
			args: []string{kube, "--cluster-cidr=10.0.128.0/17"}, exit: 1,
			want: []pfExpect{{"cluster CIDR", "FAIL", "overlaps VCN pf"}}},
		{name: "oci node of Tencent Cloud", config: oci(good, key, pfCompartment, pfVCN, pfSubnet), nodes: append([]*corev1.Node{tcNodes[0]}, ociNodes...),
			args: []string{kube}, exit: 1,
			want: []pfExpect{{"nodes", "FAIL", "another cloud's providerID: pf-tc-1"}}},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			setPFNodes(t, cluster, tc.nodes)
			provider := "tencentcloud"
			if strings.HasPrefix(tc.name, "oci ") {
				provider = "oci"
			}
			cfg := filepath.Join(dir, "cloud.yaml")
			if err := os.WriteFile(cfg, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"preflight", "--cloud-provider=" + provider, "--cloud-config=" + cfg}, tc.args...)
			cmd := exec.Command(suite.ccmBinary, args...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir} // no KUBECONFIG, not in a cluster
			out, err := cmd.CombinedOutput()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			text := string(out)
			if code != tc.exit {
				t.Errorf("exit code %d, want %d", code, tc.exit)
			}
			for _, w := range tc.want {
				row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(w.check) + `\s{2,}(\S+)\s.*$`).FindStringSubmatch(text)
				switch {
				case row == nil:
					t.Errorf("no %q row", w.check)
				case row[1] != w.status:
					t.Errorf("%q is %s, want %s: %s", w.check, row[1], w.status, row[0])
				case !strings.Contains(row[0], w.phrase):
					t.Errorf("%q row does not say %q: %s", w.check, w.phrase, row[0])
				}
			}
			mustNotContainSecret(t, "preflight output", text)
			if strings.Contains(text, "PRIVATE KEY") || strings.Contains(text, "not-the-key") {
				t.Error("preflight printed a credential")
			}
			if t.Failed() {
				t.Logf("preflight %s:\n%s", strings.Join(args[1:], " "), text)
			}
		})
	}
}

// pfNode is a Node as a kubelet registers it: with the uninitialized taint
// when it runs with --cloud-provider=external and is not initialized yet.
func pfNode(name, providerID string, uninitialized bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if uninitialized {
		n.Spec.Taints = []corev1.Taint{{Key: cloudapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

// setPFNodes makes the preflight cluster's nodes exactly these.
func setPFNodes(t *testing.T, cluster *testcluster.Cluster, nodes []*corev1.Node) {
	t.Helper()
	ctx := context.Background()
	want := map[string]bool{}
	for _, n := range nodes {
		want[n.Name] = true
	}
	have, err := cluster.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range have.Items {
		if !want[n.Name] {
			if err := cluster.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range nodes {
		_ = cluster.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
		if _, err := cluster.Client.CoreV1().Nodes().Create(ctx, n.DeepCopy(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
