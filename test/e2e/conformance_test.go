//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The conformance suite: one table of scenarios, run against every cloud;
// the node scenarios are here, the load balancer ones in
// lb_conformance_test.go. A cloud is a cloudEnv (cloud_tencent_test.go, cloud_oci_test.go);
// a third cloud costs a provider package, a cloudsim dialect and one more
// cloudEnv, and gets every scenario below for free.
//
// Every cloud shares the suite's apiserver and cloudsim, and only one
// cloud's CCM runs at a time: env.start makes the cloud's CCM the cluster's
// only one for the subtest. Each CCM also only ever matches its own
// instances (its VPC, or its OCI compartment and VCN).

// cloudEnv is one cloud under the conformance scenarios.
type cloudEnv interface {
	name() string
	// start prepares the cloud (credentials, network; once per suite) and
	// makes its CCM the cluster's only CCM for the rest of the (sub)test.
	start(t *testing.T)
	// newInstance adds a RUNNING instance of the cluster, with a unique
	// private IP (a loopback address) and a public IP.
	newInstance(t *testing.T, name string) cloudsim.Instance
	// newInstanceWith is newInstance with setup applied to the instance
	// before it is added (setup may be nil).
	newInstanceWith(t *testing.T, name string, setup func(*cloudsim.Instance)) cloudsim.Instance
	// foreignInstance adds a RUNNING instance outside the cluster's network
	// (another VPC or VCN): not ours to initialize.
	foreignInstance(t *testing.T, name string) cloudsim.Instance
	// providerID is what the CCM writes for the instance.
	providerID(in cloudsim.Instance) string
	// labels are the labels the CCM must set for the instance.
	labels(in cloudsim.Instance) map[string]string
	// mappings are the node naming schemes the cloud supports.
	mappings() []nodeMapping
	// lookupCalls counts the cloud API calls that read instances (all
	// results), and initBudget bounds them for initializing one node.
	lookupCalls() int
	initBudget() int
	// faults are failures during which no node may be deleted.
	faults() []faultCase
	// badCredentials are configs the cloud rejects, with the code the CCM
	// must log.
	badCredentials(t *testing.T) []credentialCase
	// malformedConfigs must make the CCM exit non-zero naming a field.
	malformedConfigs() []configCase
	// startCCM starts a CCM process for this cloud.
	startCCM(name, cloudConfig string, extraArgs ...string) (*testcluster.Process, error)
	// pause stops the cloud's CCM for the rest of the test.
	pause(t *testing.T)
	// leaksSecret reports whether text holds the cloud's secret.
	leaksSecret(text string) bool
	// The load balancer scenarios' hooks (lb_conformance_test.go).
	lbHooks
}

type nodeMapping struct {
	name string
	// setup may change the instance before it is added (e.g. a hostname label).
	setup func(in *cloudsim.Instance)
	node  func(in cloudsim.Instance) testcluster.NodeSpec
	// providerID overrides env.providerID (a kubelet-set one is kept).
	providerID func(in cloudsim.Instance) string
}

type faultCase struct {
	name   string
	faults []cloudsim.Fault
	// visible: the new node's instance can still be read some other way
	// (e.g. a listing), so the new node may be initialized under the fault;
	// only "nothing is deleted" is checked.
	visible bool
}

type credentialCase struct {
	name, config, wantCode string
}

type configCase struct {
	name, config, want string
}

// cloudEnvs are the clouds under test; each cloud_<name>_test.go adds its
// env in init(), so a new cloud needs no line here.
var cloudEnvs []cloudEnv

func registerCloud(env cloudEnv) { cloudEnvs = append(cloudEnvs, env) }

// clouds are the clouds under test, in order: the suite's main CCM's cloud
// first (its scenarios run with that CCM up; the others pause it), then by
// name.
func clouds() []cloudEnv {
	out := slices.Clone(cloudEnvs)
	slices.SortFunc(out, func(a, b cloudEnv) int {
		return cmp.Or(cmp.Compare(boolRank(a.name() != mainProvider), boolRank(b.name() != mainProvider)),
			cmp.Compare(a.name(), b.name()))
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// forEachCloud runs scenario as a subtest per cloud.
func forEachCloud(t *testing.T, scenario func(t *testing.T, env cloudEnv)) {
	for _, env := range clouds() {
		t.Run(env.name(), func(t *testing.T) {
			env.start(t)
			scenario(t, env)
		})
	}
}

// A tainted node is initialized: taint gone, providerID, addresses, topology
// and instance-type labels (and the cloud's own), at the cost of a handful
// of cloud calls.
func TestNodeInitialized(t *testing.T) {
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		in := env.newInstance(t, env.name()+"-init-node")
		suite.sim.ResetCalls()
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})

		waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)
		// The node controller removes the taint, then patches the addresses.
		n := waitNode(t, in.PrivateIP, 10*time.Second, "addresses set", func(n *corev1.Node) bool {
			return len(addressesOf(n)[corev1.NodeExternalIP]) > 0
		})

		if want := env.providerID(in); n.Spec.ProviderID != want {
			t.Errorf("providerID = %q, want %q", n.Spec.ProviderID, want)
		}
		for k, v := range env.labels(in) {
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
		if c := env.lookupCalls(); c < 1 || c > env.initBudget() {
			t.Errorf("instance lookups to initialize one node = %d, want 1..%d (%v)", c, env.initBudget(), suite.sim.Calls())
		}
	})
}

// Nodes are found whatever their naming scheme (the cloud's mappings).
func TestNodeMapping(t *testing.T) {
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		for i, tc := range env.mappings() {
			t.Run(tc.name, func(t *testing.T) {
				in := env.newInstanceWith(t, fmt.Sprintf("%s-mapping-%d", env.name(), i), tc.setup)
				spec := tc.node(in)
				registerNode(t, spec)
				n := waitNode(t, spec.Name, 30*time.Second, "initialized", initialized)
				want := env.providerID(in)
				if tc.providerID != nil {
					want = tc.providerID(in)
				}
				if n.Spec.ProviderID != want {
					t.Errorf("providerID = %q, want %q (instance %s)", n.Spec.ProviderID, want, in.ID)
				}
			})
		}
	})
}

// An instance outside the cluster's network is not ours: its node stays
// uninitialized.
func TestNodeInOtherNetworkNotInitialized(t *testing.T) {
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		in := env.foreignInstance(t, env.name()+"-other-network")
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
		holdsFor(t, 5*time.Second, "node in another network stays uninitialized", func() bool {
			n, err := suite.cluster.WaitForNode(context.Background(), in.PrivateIP, func(*corev1.Node) bool { return true })
			return err == nil && !initialized(n)
		})
	})
}

// A NotReady node whose instance is terminated is deleted; a NotReady node
// whose instance still runs is kept.
func TestTerminatedNodeDeleted(t *testing.T) {
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		gone := env.newInstance(t, env.name()+"-terminated")
		kept := env.newInstance(t, env.name()+"-kept")
		for _, in := range []cloudsim.Instance{gone, kept} {
			registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
			waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)
			markReady(t, in.PrivateIP, false)
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
	})
}

// A stopped instance's node gets the shutdown taint, and loses it once the
// instance runs and the node is Ready again.
func TestStoppedInstanceShutdownTaint(t *testing.T) {
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		in := env.newInstance(t, env.name()+"-stopped")
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
		waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)

		if err := suite.sim.SetInstanceState(in.ID, "STOPPED"); err != nil {
			t.Fatal(err)
		}
		markReady(t, in.PrivateIP, false)
		waitNode(t, in.PrivateIP, 30*time.Second, "shutdown taint added", func(n *corev1.Node) bool {
			return testcluster.HasTaint(n, shutdownTaint)
		})
		if !nodeExists(t, in.PrivateIP) {
			t.Fatal("a stopped instance's node was deleted")
		}

		if err := suite.sim.SetInstanceState(in.ID, "RUNNING"); err != nil {
			t.Fatal(err)
		}
		markReady(t, in.PrivateIP, true)
		waitNode(t, in.PrivateIP, 30*time.Second, "shutdown taint removed", func(n *corev1.Node) bool {
			return !testcluster.HasTaint(n, shutdownTaint)
		})
	})
}

// While the cloud fails, throttles or denies access, no node is deleted and
// new nodes wait; once it recovers, they are initialized.
func TestCloudFaultsDeleteNothing(t *testing.T) {
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		for i, fc := range env.faults() {
			t.Run(fc.name, func(t *testing.T) {
				old := env.newInstance(t, fmt.Sprintf("%s-fault-old-%d", env.name(), i))
				registerNode(t, testcluster.NodeSpec{Name: old.PrivateIP, InternalIP: old.PrivateIP})
				waitNode(t, old.PrivateIP, 30*time.Second, "initialized", initialized)
				markReady(t, old.PrivateIP, false)

				for _, f := range fc.faults {
					suite.sim.SetFault(f)
				}
				defer suite.sim.ClearFaults()
				suite.sim.ResetCalls()
				fresh := env.newInstance(t, fmt.Sprintf("%s-fault-new-%d", env.name(), i))
				registerNode(t, testcluster.NodeSpec{Name: fresh.PrivateIP, InternalIP: fresh.PrivateIP})

				holdsFor(t, 4*time.Second, "under fault, the NotReady node stays and the new node waits", func() bool {
					n, err := suite.cluster.WaitForNode(context.Background(), fresh.PrivateIP, func(*corev1.Node) bool { return true })
					return nodeExists(t, old.PrivateIP) && err == nil && (fc.visible || !initialized(n))
				})
				if env.lookupCalls() == 0 {
					t.Fatal("the CCM made no instance lookup under the fault; the scenario proved nothing")
				}
				suite.sim.ClearFaults()
				waitNode(t, fresh.PrivateIP, 30*time.Second, "initialized after recovery", initialized)
				if !nodeExists(t, old.PrivateIP) {
					t.Fatal("NotReady node of a running instance was deleted")
				}
			})
		}
	})
}

// A CCM with wrong credentials says so clearly, deletes nothing, and
// counts the refusals with result="auth" (what CCMKitCloudAPIAuthFailures
// fires on, whatever the cloud).
func TestWrongCredentials(t *testing.T) {
	token := metricsReaderToken(t)
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		in := env.newInstance(t, env.name()+"-wrong-creds")
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
		waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)

		// Only the badly configured CCM may look at the node.
		env.pause(t)
		markReady(t, in.PrivateIP, false)

		for _, tc := range env.badCredentials(t) {
			t.Run(tc.name, func(t *testing.T) {
				p, err := env.startCCM("ccm-"+env.name()+"-"+strings.ReplaceAll(tc.name, " ", "-"), tc.config)
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
				code, body := scrape(t, p.SecurePort, "/metrics", token)
				if code != 200 {
					t.Fatalf("GET /metrics as a metrics reader: HTTP %d", code)
				}
				refused := map[string]string{"provider": env.name(), "code": tc.wantCode}
				if all, auth := sumMetric(body, "ccmkit_cloud_api_requests_total", refused),
					sumMetric(body, "ccmkit_cloud_api_requests_total", withLabel(refused, "result", "auth")); auth < 1 || auth != all {
					t.Errorf("ccmkit_cloud_api_requests_total{provider=%s,code=%s}: %v with result auth of %v; want every one, at least 1",
						env.name(), tc.wantCode, auth, all)
				}
				if env.leaksSecret(p.Output()) || env.leaksSecret(body) {
					t.Errorf("CCM output or /metrics contains the secret")
				}
			})
		}
	})
}

// A malformed config makes the CCM exit non-zero, naming the bad field.
func TestMalformedConfigExits(t *testing.T) {
	forEachCloud(t, func(t *testing.T, env cloudEnv) {
		for _, tc := range env.malformedConfigs() {
			t.Run(tc.name, func(t *testing.T) {
				slug := env.name() + "-" + strings.ReplaceAll(tc.name, " ", "-")
				path := filepath.Join(suite.dir, "bad-"+slug+".yaml")
				if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
				p, err := env.startCCM("ccm-bad-"+slug, path)
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
				if env.leaksSecret(p.Output()) {
					t.Errorf("exit message contains the secret")
				}
			})
		}
	})
}

// markReady is setReady, retried on a write conflict: right after
// initializing a node the node controller patches its status (addresses),
// which can race the test's read-modify-write of the Ready condition.
func markReady(t *testing.T, name string, ready bool) {
	t.Helper()
	var err error
	for range 5 {
		if err = suite.cluster.SetNodeReady(context.Background(), name, ready); err == nil || !apierrors.IsConflict(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
}
