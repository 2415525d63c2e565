package tencent

import (
	"crypto/x509"
	"fmt"
	"strings"
	"testing"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// uploadTestCerts stores a server certificate for hosts and the CA that
// signed it; it returns their ids and the CA.
func uploadTestCerts(t *testing.T, l *CLB, hosts ...string) (srvID, caID string, ca *testca.CA) {
	t.Helper()
	ca, err := testca.New("cloudsim test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Server(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := l.UploadCertificate(CertificateSpec{Name: "srv", Certificate: string(leaf.CertPEM), Key: string(leaf.KeyPEM)})
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := l.UploadCertificate(CertificateSpec{Name: "ca", Type: CertTypeCA, Certificate: string(ca.PEM)})
	if err != nil {
		t.Fatal(err)
	}
	return srv.ID, caCert.ID, ca
}

func TestCLBCertificateUpload(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	ca, err := testca.New("upload CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Server("example.test")
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.Server("other.test")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		spec    CertificateSpec
		wantErr string
	}{
		{"server pair", CertificateSpec{Certificate: string(leaf.CertPEM), Key: string(leaf.KeyPEM)}, ""},
		{"CA", CertificateSpec{Type: CertTypeCA, Certificate: string(ca.PEM)}, ""},
		{"server without key", CertificateSpec{Certificate: string(leaf.CertPEM)}, "key pair"},
		{"key of another certificate", CertificateSpec{Certificate: string(leaf.CertPEM), Key: string(other.KeyPEM)}, "key pair"},
		{"CA with a key", CertificateSpec{Type: CertTypeCA, Certificate: string(ca.PEM), Key: string(leaf.KeyPEM)}, "without a key"},
		{"CA without PEM", CertificateSpec{Type: CertTypeCA, Certificate: "nonsense"}, "no PEM"},
		{"unknown type", CertificateSpec{Type: "CLIENT", Certificate: string(ca.PEM)}, "type must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := e.clb.UploadCertificate(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), core.ErrInvalid.Error()) {
					t.Fatalf("err %v, want an invalid-input error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.ID) != 8 || c.Name != c.ID || c.NotAfter.IsZero() {
				t.Fatalf("uploaded: %+v", c)
			}
		})
	}
	if n := len(e.clb.Certificates()); n != 2 {
		t.Fatalf("%d certificates stored, want 2", n)
	}
}

func TestCLBTCPSSLListenerValidation(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	id := e.createLB(t, nil)
	srvID, caID, ca := uploadTestCerts(t, e.clb, "example.test")
	e.createListener(t, id, "TCP", 80, nil)
	leaf, err := ca.Server("inline.test")
	if err != nil {
		t.Fatal(err)
	}
	cert := func(c *clb.CertificateInput) func(*clb.CreateListenerRequest) {
		return func(r *clb.CreateListenerRequest) { r.Certificate = c }
	}
	tests := []struct {
		name   string
		proto  string
		port   int64
		mutate func(*clb.CreateListenerRequest)
		code   string
	}{
		{"TCP_SSL without a certificate", "TCP_SSL", 443, nil, "MissingParameter"},
		{"unknown CertId", "TCP_SSL", 443, cert(&clb.CertificateInput{CertId: common.StringPtr("nothere1")}), "InvalidParameter"},
		{"a CA as CertId", "TCP_SSL", 443, cert(&clb.CertificateInput{CertId: common.StringPtr(caID)}), "InvalidParameter"},
		{"bad SSLMode", "TCP_SSL", 443, cert(&clb.CertificateInput{SSLMode: common.StringPtr("BOTH"), CertId: common.StringPtr(srvID)}), "InvalidParameterValue"},
		{"bad SSLVerifyClient", "TCP_SSL", 443, cert(&clb.CertificateInput{SSLMode: common.StringPtr("MUTUAL"), SSLVerifyClient: common.StringPtr("OFF"),
			CertId: common.StringPtr(srvID), CertCaId: common.StringPtr(caID)}), "InvalidParameterValue"},
		{"MUTUAL without a CA", "TCP_SSL", 443, cert(&clb.CertificateInput{SSLMode: common.StringPtr("MUTUAL"), CertId: common.StringPtr(srvID)}), "MissingParameter"},
		{"MUTUAL with a server certificate as CA", "TCP_SSL", 443, cert(&clb.CertificateInput{SSLMode: common.StringPtr("MUTUAL"),
			CertId: common.StringPtr(srvID), CertCaId: common.StringPtr(srvID)}), "InvalidParameter"},
		{"inline certificate without its key", "TCP_SSL", 443, cert(&clb.CertificateInput{CertName: common.StringPtr("x"),
			CertContent: common.StringPtr(string(leaf.CertPEM))}), "MissingParameter"},
		{"MultiCertInfo", "TCP_SSL", 443, func(r *clb.CreateListenerRequest) { r.MultiCertInfo = &clb.MultiCertInfo{} }, "UnsupportedOperation"},
		{"certificate on TCP", "TCP", 81, cert(&clb.CertificateInput{CertId: common.StringPtr(srvID)}), "InvalidParameter"},
		// TCP and TCP_SSL share the TCP port space (clb_certificate.go, portFamily).
		{"TCP_SSL on a TCP listener's port", "TCP_SSL", 80, cert(&clb.CertificateInput{CertId: common.StringPtr(srvID)}), "InvalidParameter.PortCheckFailed"},
		{"one-way", "TCP_SSL", 443, cert(&clb.CertificateInput{CertId: common.StringPtr(srvID)}), ""},
		{"mutual", "TCP_SSL", 444, cert(&clb.CertificateInput{SSLMode: common.StringPtr("MUTUAL"), CertId: common.StringPtr(srvID), CertCaId: common.StringPtr(caID)}), ""},
		{"inline upload", "TCP_SSL", 445, cert(&clb.CertificateInput{CertName: common.StringPtr("inline"),
			CertContent: common.StringPtr(string(leaf.CertPEM)), CertKey: common.StringPtr(string(leaf.KeyPEM))}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := clb.NewCreateListenerRequest()
			req.LoadBalancerId, req.Protocol = common.StringPtr(id), common.StringPtr(tt.proto)
			req.Ports = []*int64{common.Int64Ptr(tt.port)}
			if tt.mutate != nil {
				tt.mutate(req)
			}
			_, err := e.api.CreateListener(req)
			if got := sdkCode(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
	// Only the call that went ahead stored its inline certificate.
	if n := len(e.clb.Certificates()); n != 3 {
		t.Fatalf("%d certificates stored, want 3 (server, CA, inline)", n)
	}
	req := clb.NewDescribeListenersRequest()
	req.LoadBalancerId, req.Protocol = common.StringPtr(id), common.StringPtr("TCP_SSL")
	resp, err := e.api.DescribeListeners(req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for _, li := range resp.Response.Listeners {
		c := li.Certificate
		got[*li.Port] = fmt.Sprintf("%s %t %s %s", ptrStr(c.SSLMode), ptrStr(c.CertId) == srvID, ptrStr(c.CertCaId), ptrStr(c.SSLVerifyClient))
	}
	want := map[int64]string{
		443: "UNIDIRECTIONAL true  ",
		444: "MUTUAL true " + caID + " ON",
		445: "UNIDIRECTIONAL false  ", // the inline certificate's new id
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("DescribeListeners certificates:\n got %v\nwant %v", got, want)
	}
	if err := e.clb.DeleteCertificate(srvID); err == nil || !strings.Contains(err.Error(), "used by listener") {
		t.Fatalf("deleting a certificate in use: %v", err)
	}
}

// TestCLBTCPSSLDataPlane: a TCP_SSL listener terminates TLS with its
// certificate and forwards plain bytes to the targets; ModifyListener
// switches the certificate, and an unknown id changes nothing.
func TestCLBTCPSSLDataPlane(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{})
	nodes, webPort, _, _ := startTestNodes(t, "127.0.46.1")
	e.mustAdd(t, core.Instance{ID: "ins-sslnode1", Name: nodes[0].name, PrivateIP: nodes[0].ip, VpcID: clbTestVPC})
	lbID := e.createLB(t, nil)
	vip := *e.describeLB(t, lbID).LoadBalancerVips[0]
	srvID, _, ca := uploadTestCerts(t, e.clb, vip)
	const port = 18443
	lis := e.createListener(t, lbID, "TCP_SSL", port, func(r *clb.CreateListenerRequest) {
		r.Certificate = &clb.CertificateInput{CertId: common.StringPtr(srvID)}
		r.HealthCheck = &clb.HealthCheck{HealthSwitch: common.Int64Ptr(0)}
	})
	breq := clb.NewBatchRegisterTargetsRequest()
	breq.LoadBalancerId = common.StringPtr(lbID)
	breq.Targets = []*clb.BatchTarget{{ListenerId: common.StringPtr(lis), InstanceId: common.StringPtr("ins-sslnode1"), Port: common.Int64Ptr(int64(webPort))}}
	if _, err := e.api.BatchRegisterTargets(breq); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("https://%s:%d/", vip, port)
	get := func(roots *x509.CertPool) (string, error) { return testca.Get(url, roots, "", nil) }
	eventually(t, "HTTPS through the VIP", func() bool { body, err := get(ca.Pool()); return err == nil && body == "node-1" })

	// Another certificate: ModifyListener switches it for new connections.
	ca2, err := testca.New("second CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf2, err := ca2.Server(vip)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := e.clb.UploadCertificate(CertificateSpec{Certificate: string(leaf2.CertPEM), Key: string(leaf2.KeyPEM)})
	if err != nil {
		t.Fatal(err)
	}
	modify := func(certID string) error {
		req := clb.NewModifyListenerRequest()
		req.LoadBalancerId, req.ListenerId = common.StringPtr(lbID), common.StringPtr(lis)
		req.Certificate = &clb.CertificateInput{CertId: common.StringPtr(certID)}
		_, err := e.api.ModifyListener(req)
		return err
	}
	if err := modify("nothere1"); sdkCode(err) != "InvalidParameter" {
		t.Fatalf("ModifyListener with an unknown certificate: %v", err)
	}
	if body, err := get(ca.Pool()); err != nil || body != "node-1" {
		t.Fatalf("a refused ModifyListener changed the listener: %q %v", body, err)
	}
	if err := modify(c2.ID); err != nil {
		t.Fatal(err)
	}
	if body, err := get(ca2.Pool()); err != nil || body != "node-1" {
		t.Fatalf("after the certificate change: %q %v", body, err)
	}
	if _, err := get(ca.Pool()); err == nil {
		t.Fatal("the old chain still verifies after ModifyListener")
	}
	st, err := e.clb.DataPlane(lbID)
	if err != nil || len(st.Listeners) != 1 || !st.Listeners[0].TLS || st.Listeners[0].Protocol != "TCP" {
		t.Fatalf("data plane: %s %v", mustJSON(st), err)
	}
}
