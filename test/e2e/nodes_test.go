//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// A tainted node is initialized: taint gone, providerID, addresses, topology
// and instance-type labels, at the cost of a handful of cloud calls.
func TestNodeInitialized(t *testing.T) {
	in := newInstance(t, "init-node")
	suite.sim.ResetCalls()
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})

	n := waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)

	if want := fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID); n.Spec.ProviderID != want {
		t.Errorf("providerID = %q, want %q", n.Spec.ProviderID, want)
	}
	wantLabels := map[string]string{
		corev1.LabelTopologyZone:       zone,
		corev1.LabelTopologyRegion:     region,
		corev1.LabelInstanceTypeStable: "S5.MEDIUM4",
	}
	for k, v := range wantLabels {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	addrs := addressesOf(n)
	if !contains(addrs[corev1.NodeInternalIP], in.PrivateIP) {
		t.Errorf("InternalIP addresses = %v, want %s", addrs[corev1.NodeInternalIP], in.PrivateIP)
	}
	if !contains(addrs[corev1.NodeExternalIP], in.PublicIP) {
		t.Errorf("ExternalIP addresses = %v, want %s", addrs[corev1.NodeExternalIP], in.PublicIP)
	}
	if !contains(addrs[corev1.NodeHostName], in.PrivateIP) {
		t.Errorf("Hostname addresses = %v, want %s", addrs[corev1.NodeHostName], in.PrivateIP)
	}
	// Initializing one node should take a few lookups, not a storm.
	if c := total(describeCalls()); c < 1 || c > 6 {
		t.Errorf("DescribeInstances calls to initialize one node = %d, want 1..6 (%v)", c, describeCalls())
	}
}

// Nodes are found whatever their naming scheme: the seed project's private
// IPv4 name, the instance name, the instance ID, or only the InternalIP.
func TestNodeMapping(t *testing.T) {
	cases := []struct {
		name string
		node func(in cloudsim.Instance) testcluster.NodeSpec
	}{
		{"name is private IP", func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP}
		}},
		{"name is instance name, no address", func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.Name}
		}},
		{"name is instance ID", func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.ID, InternalIP: in.PrivateIP}
		}},
		{"other name, InternalIP", func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: "host-" + in.ID[4:], InternalIP: in.PrivateIP}
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := newInstance(t, fmt.Sprintf("mapping-%d", i))
			spec := tc.node(in)
			registerNode(t, spec)
			n := waitNode(t, spec.Name, 30*time.Second, "initialized", initialized)
			if !strings.HasSuffix(n.Spec.ProviderID, "/"+in.ID) {
				t.Errorf("providerID = %q, want instance %s", n.Spec.ProviderID, in.ID)
			}
		})
	}
}

// An instance in another VPC is not ours: its node stays uninitialized.
func TestNodeInOtherVPCNotInitialized(t *testing.T) {
	in := cloudsim.Instance{ID: "ins-othervpc", Name: "other-vpc", Zone: zone, PrivateIP: nextIP(), VpcID: "vpc-other001", State: "RUNNING"}
	if _, err := suite.sim.AddInstances(in); err != nil {
		t.Fatal(err)
	}
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
	holdsFor(t, 5*time.Second, "node in another VPC stays uninitialized", func() bool {
		n, err := suite.cluster.WaitForNode(context.Background(), in.PrivateIP, func(*corev1.Node) bool { return true })
		return err == nil && !initialized(n)
	})
}

// A NotReady node whose instance is terminated is deleted; a NotReady node
// whose instance still runs is kept.
func TestTerminatedNodeDeleted(t *testing.T) {
	gone := newInstance(t, "terminated")
	kept := newInstance(t, "kept")
	for _, in := range []cloudsim.Instance{gone, kept} {
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
		waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)
		setReady(t, in.PrivateIP, false)
	}
	if err := suite.sim.SetInstanceState(gone.ID, "TERMINATING"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for nodeExists(t, gone.PrivateIP) {
		if ctx.Err() != nil {
			t.Fatalf("node %s of terminated instance %s was not deleted", gone.PrivateIP, gone.ID)
		}
		time.Sleep(200 * time.Millisecond)
	}
	holdsFor(t, 3*time.Second, "node of running instance is kept", func() bool { return nodeExists(t, kept.PrivateIP) })
}

// A stopped instance's node gets the shutdown taint, and loses it once the
// instance runs and the node is Ready again.
func TestStoppedInstanceShutdownTaint(t *testing.T) {
	in := newInstance(t, "stopped")
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
	waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)

	if err := suite.sim.SetInstanceState(in.ID, "STOPPED"); err != nil {
		t.Fatal(err)
	}
	setReady(t, in.PrivateIP, false)
	waitNode(t, in.PrivateIP, 30*time.Second, "shutdown taint added", func(n *corev1.Node) bool {
		return testcluster.HasTaint(n, shutdownTaint)
	})
	if !nodeExists(t, in.PrivateIP) {
		t.Fatal("a stopped instance's node was deleted")
	}

	if err := suite.sim.SetInstanceState(in.ID, "RUNNING"); err != nil {
		t.Fatal(err)
	}
	setReady(t, in.PrivateIP, true)
	waitNode(t, in.PrivateIP, 30*time.Second, "shutdown taint removed", func(n *corev1.Node) bool {
		return !testcluster.HasTaint(n, shutdownTaint)
	})
}

// While the cloud fails or throttles, no node is deleted and new nodes wait;
// once it recovers, they are initialized.
func TestCloudFaultsDeleteNothing(t *testing.T) {
	faults := []cloudsim.Fault{
		{Action: "*", ErrorRate: 1, ErrorCode: "InternalError"},
		{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "RequestLimitExceeded"},
		{Action: "*", ErrorRate: 1, HTTPStatus: 503},
		{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "AuthFailure.UnauthorizedOperation"},
	}
	for i, f := range faults {
		t.Run(fmt.Sprintf("%s-%s%d", f.Action, f.ErrorCode, f.HTTPStatus), func(t *testing.T) {
			old := newInstance(t, fmt.Sprintf("fault-old-%d", i))
			registerNode(t, testcluster.NodeSpec{Name: old.PrivateIP, InternalIP: old.PrivateIP})
			waitNode(t, old.PrivateIP, 30*time.Second, "initialized", initialized)
			setReady(t, old.PrivateIP, false)

			suite.sim.SetFault(f)
			defer suite.sim.ClearFaults()
			suite.sim.ResetCalls()
			fresh := newInstance(t, fmt.Sprintf("fault-new-%d", i))
			registerNode(t, testcluster.NodeSpec{Name: fresh.PrivateIP, InternalIP: fresh.PrivateIP})

			holdsFor(t, 4*time.Second, "under fault, the NotReady node stays and the new node waits", func() bool {
				n, err := suite.cluster.WaitForNode(context.Background(), fresh.PrivateIP, func(*corev1.Node) bool { return true })
				return nodeExists(t, old.PrivateIP) && err == nil && !initialized(n)
			})
			if total(describeCalls()) == 0 {
				t.Fatal("the CCM made no DescribeInstances call under the fault; the scenario proved nothing")
			}
			suite.sim.ClearFaults()
			waitNode(t, fresh.PrivateIP, 30*time.Second, "initialized after recovery", initialized)
			if !nodeExists(t, old.PrivateIP) {
				t.Fatal("NotReady node of a running instance was deleted")
			}
		})
	}
}

// A CCM with wrong credentials says so clearly and deletes nothing.
func TestWrongCredentials(t *testing.T) {
	in := newInstance(t, "wrong-creds")
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
	waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)

	// Only the badly configured CCM may look at the node.
	pauseMainCCM(t)
	setReady(t, in.PrivateIP, false)

	cases := []struct{ name, id, key, wantCode string }{
		{"wrong key", secretID, "not-the-right-key", "AuthFailure.SignatureFailure"},
		{"unknown id", "AKIDunknown", secretKey, "AuthFailure.SecretIdNotFound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeCloudConfig(suite.dir, "cloud-"+strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.id, tc.key)
			p, err := startCCM("ccm-"+strings.ReplaceAll(tc.name, " ", "-"), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := p.WaitForOutput(ctx, tc.wantCode); err != nil {
				t.Fatalf("CCM log does not show %s: %v\n%s", tc.wantCode, err, tail(p.Output(), 30))
			}
			holdsFor(t, 3*time.Second, "node is kept while credentials are wrong", func() bool { return nodeExists(t, in.PrivateIP) })
			if tc.key != secretKey {
				mustNotContainSecret(t, "CCM output", p.Output())
			}
		})
	}
}

// A malformed config makes the CCM exit non-zero, naming the bad field.
func TestMalformedConfigExits(t *testing.T) {
	cases := []struct{ name, config, want string }{
		{"bad vpc", "region: ap-guangzhou\nvpc_id: 12345\nsecret_id: a\nsecret_key: b\n", "vpc_id"},
		{"missing region", "vpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\n", "region"},
		{"unknown key", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\nvpcid: x\n", "vpcid"},
		{"bad endpoint", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\napi_endpoint: ftp://x\n", "api_endpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(suite.dir, "bad-"+strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := startCCM("ccm-bad-"+strings.ReplaceAll(tc.name, " ", "-"), path)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code, err := p.Wait(ctx)
			if err != nil {
				t.Fatalf("CCM with a malformed config did not exit: %v\n%s", err, tail(p.Output(), 20))
			}
			if code == 0 {
				t.Fatalf("CCM exited 0 with a malformed config")
			}
			if !strings.Contains(p.Output(), tc.want) {
				t.Errorf("exit message does not name %q:\n%s", tc.want, tail(p.Output(), 20))
			}
		})
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
