package main

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
	"time"

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The OCI peer's world: a compartment, a VCN with one subnet for the nodes
// and the load balancers, and a security list admitting what the peer's
// "None" security list mode leaves to the user.
const (
	ociTenancy     = "ocid1.tenancy.oc1..aaaaaaaapeertenancy"
	ociUser        = "ocid1.user.oc1..aaaaaaaapeeruser"
	ociCompartment = "ocid1.compartment.oc1..aaaaaaaapeercompartment"
	ociVCN         = "ocid1.vcn.oc1..aaaaaaaapeervcn"
	ociSubnet      = "ocid1.subnet.oc1..aaaaaaaapeersubnet"
	ociList        = "ocid1.securitylist.oc1..aaaaaaaapeerlist"
	ociCIDR        = "127.78.0.0/16"
	ociNodePort    = 31180
)

// ociAlsoRefused: see tencentAlsoRefused.
var ociAlsoRefused = map[string]string{}

func runOCI(binary, listen string, duration time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), duration+time.Minute)
	defer cancel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return 0, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return 0, err
	}
	sum := md5.Sum(der) //nolint:gosec // the fingerprint format
	hexes := make([]string, len(sum))
	for i, b := range sum {
		hexes[i] = fmt.Sprintf("%02x", b)
	}
	fingerprint := strings.Join(hexes, ":")

	tcp := func(src string, lo, hi int) ocicore.IngressSecurityRule {
		return ocicore.IngressSecurityRule{Protocol: ocicommon.String("6"), Source: ocicommon.String(src),
			TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: ocicommon.Int(lo), Max: ocicommon.Int(hi)}}}
	}
	w, err := newWorld(ctx, "oci", listen, cloudsim.Options{
		VIPRange: "127.78.1.1-127.78.1.254",
		OCI: cloudsim.OCIOptions{
			Keys: map[string]string{ociTenancy + "/" + ociUser + "/" + fingerprint: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
			Network: simoci.NetworkSeed{
				Compartments: []string{ociCompartment},
				VCNs:         []simoci.VCN{{ID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociCIDR, DisplayName: "peer", DNSLabel: "peervcn"}},
				SecurityLists: []simoci.SecurityList{{ID: ociList, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: "peer",
					IngressSecurityRules: []ocicore.IngressSecurityRule{tcp("0.0.0.0/0", 80, 80), tcp(ociCIDR, 30000, 32767), tcp(ociCIDR, 10256, 10256)},
					EgressSecurityRules:  []ocicore.EgressSecurityRule{{Protocol: ocicommon.String("all"), Destination: ocicommon.String("0.0.0.0/0")}}}},
				Subnets: []simoci.Subnet{{ID: ociSubnet, VCNID: ociVCN, CompartmentID: ociCompartment, DNSLabel: "peer", SecurityListIDs: []string{ociList}}},
			},
		},
	}, []string{"*.us-ashburn-1.oraclecloud.com", "*.us-ashburn-1.oci.oraclecloud.com"})
	if err != nil {
		return 0, err
	}
	defer w.close()

	var names []string
	for i := 1; i <= 3; i++ {
		ip := fmt.Sprintf("127.78.0.%d", i)
		in := cloudsim.Instance{Name: fmt.Sprintf("peer-%d", i), PrivateIP: ip, Shape: "VM.Standard.E4.Flex",
			FaultDomain: fmt.Sprintf("FAULT-DOMAIN-%d", i), VpcID: ociVCN, SubnetID: ociSubnet, CompartmentID: ociCompartment, State: "RUNNING"}
		added, err := w.sim.AddInstances(in)
		if err != nil {
			return 0, err
		}
		// Nodes named by display name, or by IP as OKE names them; the peer
		// resolves both. Like OKE's kubelets, they come with their
		// providerID (the instance OCID): the peer expects every node to
		// have one.
		name := in.Name
		if i == 2 {
			name = ip
		}
		if _, err := w.cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: name, InternalIP: ip, ProviderID: added[0].OCID}); err != nil {
			return 0, err
		}
		names = append(names, name)
		// kube-proxy's health port too, which the peer's health checks
		// probe (HTTP /healthz on 10256) for externalTrafficPolicy Cluster.
		if err := w.serveNode(ip, ociNodePort, ociNodePort+1, 10256); err != nil {
			return 0, err
		}
	}
	// A load balancer (flexible, as tenancies since May 2023 require) and a
	// network load balancer, by the peer's annotations.
	services := []*corev1.Service{
		lbService("peer-lb", map[string]string{
			"service.beta.kubernetes.io/oci-load-balancer-shape":          "flexible",
			"service.beta.kubernetes.io/oci-load-balancer-shape-flex-min": "10",
			"service.beta.kubernetes.io/oci-load-balancer-shape-flex-max": "100"}),
		// A public NLB also lists its private address (IsPublic=false), and
		// the peer publishes every address unless told external-ip-only:
		// without it the Service's first ingress IP is the private one.
		lbService("peer-nlb", map[string]string{"oci.oraclecloud.com/load-balancer-type": "nlb",
			"oci-network-load-balancer.oraclecloud.com/external-ip-only": "true"}),
	}
	if err := w.createServices(services, ociNodePort); err != nil {
		return 0, err
	}

	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	cfgPath := filepath.Join(w.dir, "cloud-provider.yaml")
	cfg := fmt.Sprintf("auth:\n  region: us-ashburn-1\n  tenancy: %s\n  user: %s\n  fingerprint: %s\n  key: |\n    %s\ncompartment: %s\nvcn: %s\nloadBalancer:\n  subnet1: %s\n  securityListManagementMode: None\n",
		ociTenancy, ociUser, fingerprint, strings.ReplaceAll(strings.TrimSpace(keyPEM), "\n", "\n    "), ociCompartment, ociVCN, ociSubnet)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return 0, err
	}
	if err := w.startPeer(binary, []string{"--cloud-provider=oci", "--cloud-config=" + cfgPath, "--kubeconfig=" + w.cluster.AdminKubeconfig,
		"--leader-elect=false", "--use-service-account-credentials=false", "--configure-cloud-routes=false",
		"--secure-port=0", "--v=2"}, nil); err != nil {
		return 0, err
	}

	initialized, vips := w.await(duration, names, services, nil)
	fmt.Printf("== the OCI peer initialized %d/%d nodes, load balancer ingress %v\n", initialized, len(names), vips)
	probe(vips)
	return w.report(ociAlsoRefused), nil
}
