package deploy

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ccmkit/ccm/internal/cloudpolicy/cam"
	"github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"
)

// The shipped cloud policies are checked against the SDK calls the CCM
// binary makes: a call the policy does not grant, or a grant no call
// needs, fails here.

const module = "github.com/ccmkit/ccm"

var ccmCalls = sync.OnceValues(func() ([]sdkCall, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	return scanSDKCalls(root, module, "./cmd/cloud-controller-manager")
})

func calls(t *testing.T) []sdkCall {
	t.Helper()
	if testing.Short() {
		t.Skip("the scan type-checks the CCM's packages (go list -export): skipped with -short")
	}
	c, err := ccmCalls()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// camAction is the CAM action of a Tencent call ("clb:CreateListener");
// ok is false for other SDKs and for STS, whose AssumeRole* calls are
// authorized by the role's trust policy, not by a policy on the caller.
func camAction(c sdkCall) (string, bool) {
	rest, ok := strings.CutPrefix(c.Package, tencentSDK)
	if !ok {
		return "", false
	}
	service, _, _ := strings.Cut(rest, "/")
	if service == "sts" {
		return "", false
	}
	return service + ":" + c.Op, true
}

// ociOperation is an OCI call's operation as the permission table names
// it (Network Load Balancing's with "nlb:"); ok is false for other SDKs.
func ociOperation(c sdkCall) (string, bool) {
	rest, ok := strings.CutPrefix(c.Package, ociSDK)
	if !ok {
		return "", false
	}
	if rest == "networkloadbalancer" {
		return "nlb:" + c.Op, true
	}
	return c.Op, true
}

func TestTencentPolicyGrantsExactlyTheCalledActions(t *testing.T) {
	all := calls(t)
	called := sites(slices.DeleteFunc(slices.Clone(all), func(c sdkCall) bool { _, ok := camAction(c); return !ok }),
		func(c sdkCall) string { a, _ := camAction(c); return a })
	if len(called) == 0 {
		t.Fatal("the scan found no Tencent SDK call: the scanner is broken")
	}
	policy, err := cam.Parse(TencentCAMPolicy)
	if err != nil {
		t.Fatalf("policies/tencentcloud-cam-policy.json: %v", err)
	}
	granted := policy.Actions()
	for _, a := range granted {
		if strings.Contains(a, "*") {
			t.Errorf("policies/tencentcloud-cam-policy.json grants %q: the shipped policy names each action, no wildcard", a)
		}
	}
	for _, a := range slices.Sorted(maps.Keys(called)) {
		if d := cam.Decide([]*cam.Policy{policy}, a, "*"); !d.Allowed {
			t.Errorf("the code calls %s (%s) but policies/tencentcloud-cam-policy.json does not allow it", a, strings.Join(called[a], ", "))
		}
	}
	for _, a := range granted {
		if _, ok := called[a]; !ok {
			t.Errorf("policies/tencentcloud-cam-policy.json grants %s, which the code never calls", a)
		}
	}
	for _, st := range policy.Statements {
		if st.Effect != cam.Allow || !slices.Equal(st.Resources, []string{"*"}) {
			t.Errorf("statement %v: want effect allow on resource * (docs/credentials.md says why)", st.Actions)
		}
	}
	t.Logf("Tencent: %d actions in %d statements", len(granted), len(policy.Statements))
}

func TestOCIPolicyIsExactlySufficient(t *testing.T) {
	all := calls(t)
	called := sites(slices.DeleteFunc(slices.Clone(all), func(c sdkCall) bool { _, ok := ociOperation(c); return !ok }),
		func(c sdkCall) string { o, _ := ociOperation(c); return o })
	if len(called) == 0 {
		t.Fatal("the scan found no OCI SDK call: the scanner is broken")
	}
	// The permissions the calls need, each with the operations needing it.
	need := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(called)) {
		op, ok := ociiam.LookupOperation(name)
		if !ok {
			t.Errorf("the code calls OCI %s (%s), which internal/cloudpolicy/ociiam's table does not map to permissions: add it with its source",
				name, strings.Join(called[name], ", "))
			continue
		}
		for _, p := range op.All() {
			need[p] = append(need[p], name)
		}
	}
	needed := slices.Sorted(maps.Keys(need))

	for _, kind := range []string{"dynamic-group", "group"} {
		t.Run(kind, func(t *testing.T) {
			statements, err := ociiam.Parse(OCIPolicyFor(kind, "ccm", "ccm-compartment"))
			if err != nil {
				t.Fatalf("policies/oci-policy.txt: %v", err)
			}
			subjects := ociiam.Subjects{Groups: []string{"ccm"}, DynamicGroups: []string{"ccm"}}
			if missing := ociiam.Missing(statements, subjects, ociiam.Target{}, needed); len(missing) > 0 {
				for _, p := range missing {
					rt, v, _ := ociiam.Least(p)
					t.Errorf("policies/oci-policy.txt (%s) lacks %s (%s %s), which %v need", kind, p, v, rt, need[p])
				}
			}
			for i, st := range statements {
				others := slices.Delete(slices.Clone(statements), i, i+1)
				if len(ociiam.Missing(others, subjects, ociiam.Target{}, needed)) == 0 {
					t.Errorf("%q grants nothing the code needs that the other statements do not", st.Text)
					continue
				}
				if st.Verb > ociiam.Inspect {
					lower := st
					lower.Verb--
					if len(ociiam.Missing(append(others, lower), subjects, ociiam.Target{}, needed)) == 0 {
						t.Errorf("%q: %s %s would do (the least verb is wanted)", st.Text, lower.Verb, st.ResourceType)
					}
				}
				for _, p := range st.OnlyPermissions {
					if _, ok := need[p]; !ok {
						t.Errorf("%q: its condition names %s, which no call needs", st.Text, p)
					}
				}
			}
			t.Logf("OCI %s: %d statements for %d permissions of %d operations", kind, len(statements), len(needed), len(called))
		})
	}
}

// TestOCIPolicyBlocksMatch: the dynamic-group and group blocks grant the
// same, so that the docs' one description holds for both.
func TestOCIPolicyBlocksMatch(t *testing.T) {
	dg := strings.ReplaceAll(OCIPolicyFor("dynamic-group", "x", "c"), "dynamic-group", "group")
	g := OCIPolicyFor("group", "x", "c")
	if dg != g || g == "" {
		t.Errorf("the blocks of policies/oci-policy.txt differ:\ndynamic-group:\n%s\ngroup:\n%s", dg, g)
	}
}

func TestOCIPolicyForFillsPlaceholders(t *testing.T) {
	got := OCIPolicyFor("group", "ccm-users", "id ocid1.compartment.oc1..x")
	if strings.Contains(got, "<") || !strings.Contains(got, "Allow group ccm-users to read instances in compartment id ocid1.compartment.oc1..x\n") {
		t.Errorf("OCIPolicyFor:\n%s", got)
	}
	if strings.Contains(got, "dynamic-group") {
		t.Errorf("OCIPolicyFor(group) kept the dynamic-group block:\n%s", got)
	}
}
