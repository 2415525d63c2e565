package cloudsim_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// TestOCIThroughSim drives the OCI dialect as mounted by cloudsim.New, next
// to the Tencent API on the same address: a key registered with the admin
// client, an instance shared by the fleet, an LB whose work request ends.
func TestOCIThroughSim(t *testing.T) {
	sim, url := start(t, cloudsim.Options{OCI: cloudsim.OCIOptions{WorkRequestLatency: 50 * time.Millisecond}})
	admin := &cloudsim.AdminClient{BaseURL: url}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	tenancy, user, fp := "ocid1.tenancy.oc1..aaaaaaaasim", "ocid1.user.oc1..aaaaaaaasim", oci.Fingerprint(&key.PublicKey)
	if _, err := admin.AddOCIKey(ctx, tenancy+"/"+user+"/"+fp, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))); err != nil {
		t.Fatal(err)
	}
	provider := ocicommon.NewRawConfigurationProvider(tenancy, user, oci.DefaultRegion, fp,
		string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})), nil)

	in, err := admin.AddInstances(ctx, cloudsim.Instance{Name: "node-1", HostnameLabel: "node-1"})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := ocicore.NewComputeClientWithConfigurationProvider(provider)
	if err != nil {
		t.Fatal(err)
	}
	cc.Host = url
	got, err := cc.GetInstance(ctx, ocicore.GetInstanceRequest{InstanceId: ocicommon.String(in[0].OCID)})
	if err != nil || *got.DisplayName != "node-1" {
		t.Fatalf("GetInstance: %v %v", got.DisplayName, err)
	}
	// One fleet: the admin API stops it, by either id, for both dialects.
	if err := admin.SetInstanceState(ctx, in[0].OCID, "STOPPED"); err != nil {
		t.Fatal(err)
	}
	got, err = cc.GetInstance(ctx, ocicore.GetInstanceRequest{InstanceId: ocicommon.String(in[0].OCID)})
	if err != nil || got.LifecycleState != ocicore.InstanceLifecycleStateStopped {
		t.Fatalf("after stop: %v %v", got.LifecycleState, err)
	}

	lbc, err := loadbalancer.NewLoadBalancerClientWithConfigurationProvider(provider)
	if err != nil {
		t.Fatal(err)
	}
	lbc.Host = url
	lbc.Configuration.CircuitBreaker = nil
	created, err := lbc.CreateLoadBalancer(ctx, loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: loadbalancer.CreateLoadBalancerDetails{
		CompartmentId: ocicommon.String(oci.DefaultCompartmentID), DisplayName: ocicommon.String("svc"), ShapeName: ocicommon.String("flexible"),
		ShapeDetails: &loadbalancer.ShapeDetails{MinimumBandwidthInMbps: ocicommon.Int(10), MaximumBandwidthInMbps: ocicommon.Int(100)},
		SubnetIds:    []string{oci.DefaultSubnetID},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var lbID string
	deadline := time.Now().Add(10 * time.Second)
	for {
		wr, err := lbc.GetWorkRequest(ctx, loadbalancer.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
		if err != nil {
			t.Fatal(err)
		}
		if wr.LifecycleState == loadbalancer.WorkRequestLifecycleStateSucceeded {
			lbID = *wr.LoadBalancerId
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("work request still %s", wr.LifecycleState)
		}
		time.Sleep(20 * time.Millisecond)
	}
	lbs, err := admin.OCILoadBalancers(ctx)
	if err != nil || len(lbs) != 1 || lbs[0].ID != lbID || lbs[0].LifecycleState != "ACTIVE" || lbs[0].IPAddress == "" {
		t.Fatalf("admin view: %+v %v", lbs, err)
	}
	if len(sim.OCI().LoadBalancers()) != 1 {
		t.Fatal("Go API disagrees with the admin API")
	}
	calls, err := admin.Calls(ctx)
	if err != nil || calls["oci:GetInstance"]["OK"] != 2 || calls["oci:CreateLoadBalancer"]["OK"] != 1 {
		t.Fatalf("calls: %v %v", calls, err)
	}
	if err := admin.DeleteOCILoadBalancer(ctx, lbID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.OCINetwork(ctx); err != nil {
		t.Fatal(err)
	}

	// A terminated instance stays TERMINATED (12 h by default) until the
	// admin API purges it; then GetInstance answers 404.
	if err := admin.PurgeOCITerminated(ctx, in[0].OCID); err == nil {
		t.Fatal("purged an instance that is not terminated")
	}
	if err := admin.SetInstanceState(ctx, in[0].OCID, "TERMINATED"); err != nil {
		t.Fatal(err)
	}
	if err := admin.PurgeOCITerminated(ctx, in[0].OCID); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.GetInstance(ctx, ocicore.GetInstanceRequest{InstanceId: ocicommon.String(in[0].OCID)}); err == nil {
		t.Fatal("a purged instance is still there")
	}
}
