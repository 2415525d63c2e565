package cloudsim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// TestCertificateAdmin drives the certificate store through AdminClient:
// upload a server certificate and its CA, list them (without keys), refuse
// a bad upload, delete.
func TestCertificateAdmin(t *testing.T) {
	_, url := start(t, cloudsim.Options{VIPRange: simVIPs, Tencent: cloudsim.TencentOptions{TaskLatency: -1}})
	ctx := context.Background()
	admin := &cloudsim.AdminClient{BaseURL: url}
	ca, err := testca.New("admin test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Server("svc.example.test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := admin.UploadCertificate(ctx, tencent.CertificateSpec{Name: "svc", Certificate: string(leaf.CertPEM), Key: string(leaf.KeyPEM)})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Type != tencent.CertTypeServer || srv.Name != "svc" || len(srv.DNSNames) != 1 || srv.DNSNames[0] != "svc.example.test" {
		t.Fatalf("uploaded: %+v", srv)
	}
	caCert, err := admin.UploadCertificate(ctx, tencent.CertificateSpec{Type: tencent.CertTypeCA, Certificate: string(ca.PEM)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.UploadCertificate(ctx, tencent.CertificateSpec{Certificate: string(leaf.CertPEM)})
	var ae *cloudsim.AdminError
	if !errors.As(err, &ae) || ae.StatusCode != 400 {
		t.Fatalf("a server certificate without its key: %v", err)
	}
	list, err := admin.Certificates(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("Certificates: %+v %v", list, err)
	}
	if err := admin.DeleteCertificate(ctx, caCert.ID); err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteCertificate(ctx, caCert.ID); !errors.As(err, &ae) || ae.StatusCode != 404 {
		t.Fatalf("deleting it again: %v", err)
	}
}
