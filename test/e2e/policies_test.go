//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/cloudpolicy/cam"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The suite runs under exactly the shipped cloud policies
// (deploy/policies): cloudsim enforces them on every CCM's principal, so a
// permission the code needs and the policy lacks fails the tests that use
// it. Fixtures that set the cloud up through the API act as an
// administrator: a principal in no group and without a policy, which
// cloudsim gives full access.

// The OCI side: the suite's user is in group ccmOCIGroup, whose policy is
// the shipped one in compartment ociCompartmentName; ociAdminUser, in no
// group, sets things up.
const (
	ociAdminUser       = "ocid1.user.oc1..aaaaaaaae2eadmin"
	ccmOCIGroup        = "ccm-e2e"
	ociCompartmentName = "ccm-e2e"
)

// shippedCAMPolicies attaches the shipped CAM policy to each SecretId.
func shippedCAMPolicies(ids []string) map[string][]json.RawMessage {
	out := map[string][]json.RawMessage{}
	for _, id := range ids {
		out[id] = []json.RawMessage{deploy.TencentCAMPolicy}
	}
	return out
}

// setUpOCIIAM registers the administrator's key (the suite's key, for user
// ociAdminUser) and puts the suite's user under the shipped policy.
func setUpOCIIAM(fingerprint, publicKeyPEM string) error {
	if _, err := suite.sim.OCI().AddKey(ociTenancy+"/"+ociAdminUser+"/"+fingerprint, publicKeyPEM); err != nil {
		return err
	}
	return suite.sim.OCI().SeedIAM(simoci.IAMSeed{
		Groups:           map[string][]string{ccmOCIGroup: {ociUser}},
		CompartmentNames: map[string]string{ociCompartmentName: ociCompartment},
		Policies:         map[string][]string{ccmOCIGroup: policyLines(deploy.OCIPolicyFor("group", ccmOCIGroup, ociCompartmentName))},
	})
}

func policyLines(text string) []string { return strings.Split(strings.TrimSpace(text), "\n") }

// lpCase is one row of TestLeastPrivilege: the shipped policy minus one
// permission, a scenario that needs it, and the operation the failure must
// name.
type lpCase struct {
	name     string // the permission removed, as the policy writes it
	scenario string // nodes, routes, lb, nlb
	op       string // the refused operation, named in logs and events
}

// TestLeastPrivilege removes one permission at a time from the shipped
// policies and shows the failure named clearly: in the CCM's log (the
// operation and the cloud's refusal), in a Warning Event for Services (and
// Nodes, for routes), and in `cloud-controller-manager preflight`. A node
// is never deleted because a permission is missing.
func TestLeastPrivilege(t *testing.T) {
	t.Run("tencentcloud", func(t *testing.T) {
		for i, tc := range []lpCase{
			{name: "cvm:DescribeInstances", scenario: "nodes", op: "DescribeInstances"},
			{name: "tke:CreateClusterRoute", scenario: "routes", op: "CreateClusterRoute"},
			{name: "clb:CreateListener", scenario: "lb", op: "CreateListener"},
			{name: "clb:BatchRegisterTargets", scenario: "lb", op: "BatchRegisterTargets"},
		} {
			t.Run(tc.name, func(t *testing.T) { tencentLeastPrivilege(t, tc, leastPrivSecretIDs[i]) })
		}
	})
	t.Run("oci", func(t *testing.T) {
		theOCIEnv.prepare(t)
		for i, tc := range []lpCase{
			{name: "read instances", scenario: "nodes", op: "GetInstance"},
			{name: "manage load-balancers", scenario: "lb", op: "CreateLoadBalancer"},
			{name: "manage network-load-balancers", scenario: "nlb", op: "CreateNetworkLoadBalancer"},
		} {
			t.Run(tc.name, func(t *testing.T) { ociLeastPrivilege(t, tc, i) })
		}
	})
}

const tencentRefusal = "AuthFailure.UnauthorizedOperation"

func tencentLeastPrivilege(t *testing.T, tc lpCase, id string) {
	full, err := cam.Parse(deploy.TencentCAMPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if err := suite.sim.Tencent().DetachPolicies(id); err != nil {
		t.Fatal(err)
	}
	if err := suite.sim.Tencent().AttachPolicy(id, full.Without(tc.name).JSON()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.sim.Tencent().DetachPolicies(id)
		_ = suite.sim.Tencent().AttachPolicy(id, deploy.TencentCAMPolicy)
	})
	pauseMainCCM(t)
	name := "ccm-lp-" + strings.NewReplacer(":", "-").Replace(tc.name)
	var args []string
	config := writeCloudConfig(suite.dir, name+".yaml", id, secretKey)
	switch tc.scenario {
	case "nodes":
		args = []string{"--controllers=cloud-node,cloud-node-lifecycle"}
	case "routes":
		config = writeRoutesCloudConfigAs(suite.dir, name+".yaml", id)
		args = append(routeArgs(), "--controllers=route")
	case "lb":
		args = lbControllers
	}
	p, err := startCCM(name, config, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop) // after the scenario's cleanups: it releases their Services

	switch tc.scenario {
	case "nodes":
		nodesScenario(t, p, tc, tencentRefusal, lbNode(t, "lp-tc-old"), func(n int) testcluster.NodeSpec {
			in := newInstance(t, fmt.Sprintf("lp-tc-new-%d", n))
			return testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP, ProviderID: fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID)}
		})
	case "routes":
		in := newInstance(t, "lp-tc-route")
		cidr := nextPodCIDR()
		node := routeNode(t, in, cidr)
		waitLog(t, p, tc.op, tencentRefusal)
		waitNodeEvent(t, node, "FailedToCreateRoute", tc.op, tencentRefusal)
		if hasRoute(tableRoutes(t), route(cidr, in.PrivateIP)) {
			t.Errorf("the route %s via %s exists although %s is refused", cidr, in.PrivateIP, tc.name)
		}
	case "lb":
		sel := "lp-" + strings.ToLower(tc.op)
		lbNode(t, sel)
		svc := createService(t, lbServiceSpec("lp", sel, 8090))
		ev := waitEvent(t, svc, "SyncLoadBalancerFailed", []string{tc.op, tencentRefusal}, 90*time.Second)
		mustNotContainSecret(t, "event", ev)
		waitLog(t, p, tc.op, tencentRefusal)
	}
	preflightNames(t, "tencentcloud", config, tc)
}

func ociLeastPrivilege(t *testing.T, tc lpCase, i int) {
	user := fmt.Sprintf("ocid1.user.oc1..aaaaaaaae2elp%d", i)
	group := fmt.Sprintf("ccm-e2e-lp-%d", i)
	if _, err := suite.sim.OCI().AddKey(ociTenancy+"/"+user+"/"+theOCIEnv.fingerprint, publicPEM(theOCIEnv.key)); err != nil {
		t.Fatal(err)
	}
	// The shipped statements, with the one removed ("read ...") or lowered
	// from manage to use.
	var lines []string
	found := 0
	for _, l := range policyLines(deploy.OCIPolicyFor("group", group, ociCompartmentName)) {
		if !strings.Contains(l, " to "+tc.name+" ") {
			lines = append(lines, l)
			continue
		}
		found++
		if v, rt, ok := strings.Cut(tc.name, " "); ok && v == "manage" {
			lines = append(lines, strings.Replace(l, " to manage "+rt+" ", " to use "+rt+" ", 1))
		}
	}
	if found != 1 {
		t.Fatalf("%d statements %q in the shipped policy, want 1", found, tc.name)
	}
	if err := suite.sim.OCI().SeedIAM(simoci.IAMSeed{Groups: map[string][]string{group: {user}}, Policies: map[string][]string{group: lines}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.sim.OCI().RemoveIAM("groups", group)
		_ = suite.sim.OCI().RemoveIAM("policies", group)
	})
	name := "ccm-oci-lp-" + strings.ReplaceAll(tc.name, " ", "-")
	config := filepath.Join(suite.dir, name+".yaml")
	if err := os.WriteFile(config, []byte(theOCIEnv.ociConfig(user, theOCIEnv.keyPEM, theOCIEnv.fingerprint, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	pauseMainCCM(t)
	theOCIEnv.pause(t)
	args := lbControllers
	if tc.scenario == "nodes" {
		args = ociNodeControllers
	}
	p, err := theOCIEnv.startCCM(name, config, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)

	const refusal = "NotAuthorizedOrNotFound"
	switch tc.scenario {
	case "nodes":
		nodesScenario(t, p, tc, refusal, ociLBNode(t, "lp-oci-old"), func(n int) testcluster.NodeSpec {
			in := theOCIEnv.newInstance(t, fmt.Sprintf("lp-oci-new-%d", n))
			return testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP, ProviderID: "oci://" + in.OCID}
		})
	case "lb", "nlb":
		sel := "lp-oci-" + tc.scenario
		ociLBNode(t, sel)
		kind := theOCIEnv.lbKinds()[0]
		if tc.scenario == "nlb" {
			kind = theOCIEnv.lbKinds()[1]
		}
		svc := createService(t, lbSpec("lp", sel, kind, 8091))
		ev := waitEvent(t, svc, "SyncLoadBalancerFailed", []string{tc.op, refusal}, 90*time.Second)
		if strings.Contains(ev, "PRIVATE KEY") {
			t.Errorf("the event contains a key: %s", ev)
		}
		waitLog(t, p, tc.op, refusal)
		if lbs := ociLBsOf(svc.UID); len(lbs) != 0 {
			t.Errorf("load balancers exist although %s is missing: %+v", tc.name, lbs)
		}
	}
	preflightNames(t, "oci", config, tc)
}

// nodesScenario: an initialized node gone NotReady (the lifecycle
// controller asks whether its instance exists) and a new node (the node
// controller asks for its metadata), under a CCM that may not read
// instances. The refusal is logged; the NotReady node is kept and the new
// one stays uninitialized.
func nodesScenario(t *testing.T, p *testcluster.Process, tc lpCase, refusal string, old cloudsim.Instance, fresh func(int) testcluster.NodeSpec) {
	markReady(t, old.PrivateIP, false)
	spec := fresh(1)
	registerNode(t, spec)
	waitLog(t, p, tc.op, refusal)
	holdsFor(t, 6*time.Second, "the NotReady node is kept and the new node waits", func() bool {
		n, err := suite.cluster.WaitForNode(context.Background(), spec.Name, func(*corev1.Node) bool { return true })
		return nodeExists(t, old.PrivateIP) && err == nil && !initialized(n)
	})
}

// waitLog waits for a CCM log line naming both op and the refusal.
func waitLog(t *testing.T, p *testcluster.Process, op, refusal string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for line := range strings.Lines(p.Output()) {
			if strings.Contains(line, op) && strings.Contains(line, refusal) {
				mustNotContainSecret(t, "CCM log", line)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no CCM log line names %s and %s within 60s:\n%s", op, refusal, tail(p.Output(), 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitNodeEvent waits for a Node event of reason naming every phrase.
func waitNodeEvent(t *testing.T, node, reason string, phrases ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, m := range nodeEvents(t, node, reason) {
			ok := true
			for _, ph := range phrases {
				ok = ok && strings.Contains(m, ph)
			}
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event on node %s naming %v within 60s: %v", reason, node, phrases, nodeEvents(t, node, reason))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// preflightNames runs `cloud-controller-manager preflight` with the
// principal's config: a missing read is one failed row naming it; a
// missing write is in the row of what no read can check, and no read is
// reported missing.
func preflightNames(t *testing.T, provider, config string, tc lpCase) {
	t.Helper()
	out, _ := exec.Command(suite.ccmBinary, "preflight", "--cloud-provider="+provider, "--cloud-config="+config).CombinedOutput()
	text := string(out)
	mustNotContainSecret(t, "preflight output", text)
	failedRow := regexp.MustCompile(`(?m)^permission (.+?)\s{2,}FAIL\s`)
	var missing []string
	for _, m := range failedRow.FindAllStringSubmatch(text, -1) {
		missing = append(missing, m[1])
	}
	switch tc.name {
	case "cvm:DescribeInstances", "read instances":
		if len(missing) != 1 || missing[0] != tc.name {
			t.Errorf("preflight reports missing %v, want [%s]:\n%s", missing, tc.name, text)
		}
	default:
		if len(missing) != 0 {
			t.Errorf("preflight reports missing reads %v, but only a write was removed:\n%s", missing, text)
		}
		if row := rowOf(text, "write permissions"); !strings.Contains(row, strings.TrimPrefix(tc.name, "manage ")) {
			t.Errorf("preflight's write permissions row does not name %s:\n%s", tc.name, text)
		}
	}
}

// rowOf is the first line of text starting with prefix.
func rowOf(text, prefix string) string {
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}
