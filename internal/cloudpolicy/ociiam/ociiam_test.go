package ociiam

import (
	"slices"
	"strings"
	"testing"
)

func TestParseStatement(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Statement
		wantErr string
	}{
		{in: "Allow group ccm to read instances in compartment prod",
			want: Statement{Subject: Group, Names: []string{"ccm"}, Verb: Read, ResourceType: "instances", Location: Location{CompartmentName: "prod"}}},
		{in: "allow dynamic-group nodes, others to manage load-balancers in tenancy",
			want: Statement{Subject: DynamicGroup, Names: []string{"nodes", "others"}, Verb: Manage, ResourceType: "load-balancers", Location: Location{Tenancy: true}}},
		{in: "Allow any-user to inspect vcns in compartment id ocid1.compartment.oc1..x",
			want: Statement{Subject: AnyUser, Verb: Inspect, ResourceType: "vcns", Location: Location{CompartmentID: "ocid1.compartment.oc1..x"}}},
		{in: "Allow group g to manage vcns in tenancy where any {request.permission = 'VCN_ATTACH', request.permission='VCN_DETACH'}",
			want: Statement{Subject: Group, Names: []string{"g"}, Verb: Manage, ResourceType: "vcns", Location: Location{Tenancy: true}, OnlyPermissions: []string{"VCN_ATTACH", "VCN_DETACH"}}},
		{in: "Deny group g to manage vcns in tenancy", wantErr: "must start with Allow"},
		{in: "Allow group g to own vcns in tenancy", wantErr: `verb "own"`},
		{in: "Allow group g to manage buckets in tenancy", wantErr: `resource-type "buckets"`},
		{in: "Allow group g to manage vcns in region x", wantErr: "location"},
		{in: "Allow group to manage vcns in tenancy", wantErr: "group names no group"},
		{in: "Allow group g to manage vcns", wantErr: "want `to <verb>"},
		{in: "Allow group g to manage vcns in tenancy where target.vcn.id = 'x'", wantErr: "only request.permission"},
		{in: "Allow group g to manage vcns in tenancy where request.permission = 'NOPE'", wantErr: `"NOPE"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseStatement(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Text = ""
			if got.Subject != tc.want.Subject || !slices.Equal(got.Names, tc.want.Names) || got.Verb != tc.want.Verb ||
				got.ResourceType != tc.want.ResourceType || got.Location != tc.want.Location || !slices.Equal(got.OnlyPermissions, tc.want.OnlyPermissions) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVerbsAreCumulative(t *testing.T) {
	st := func(s string) Statement {
		x, err := ParseStatement(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		stmt, perm string
		want       bool
	}{
		{"Allow group g to read instances in tenancy", "INSTANCE_INSPECT", true},
		{"Allow group g to read instances in tenancy", "INSTANCE_READ", true},
		{"Allow group g to inspect instances in tenancy", "INSTANCE_READ", false},
		{"Allow group g to use security-lists in tenancy", "SECURITY_LIST_UPDATE", false}, // "only with the manage verb"
		{"Allow group g to manage security-lists in tenancy", "SECURITY_LIST_UPDATE", true},
		{"Allow group g to use virtual-network-family in tenancy", "SUBNET_ATTACH", true},
		{"Allow group g to use virtual-network-family in tenancy", "INSTANCE_READ", false},
		{"Allow group g to manage all-resources in tenancy", "NETWORK_LOAD_BALANCER_CREATE", true},
		{"Allow group g to manage vcns in tenancy where request.permission = 'VCN_ATTACH'", "VCN_ATTACH", true},
		{"Allow group g to manage vcns in tenancy where request.permission = 'VCN_ATTACH'", "VCN_CREATE", false},
	} {
		if got := st(tc.stmt).Grants(tc.perm); got != tc.want {
			t.Errorf("%q grants %s = %v, want %v", tc.stmt, tc.perm, got, tc.want)
		}
	}
}

func TestMissing(t *testing.T) {
	policy, err := Parse(`
# comment
Allow group ccm to read instances in compartment prod
Allow dynamic-group nodes to manage load-balancers in compartment id ocid1.compartment.oc1..prod
`)
	if err != nil {
		t.Fatal(err)
	}
	names := func(id string) string {
		if id == "ocid1.compartment.oc1..prod" {
			return "prod"
		}
		return "other"
	}
	prod := Target{CompartmentID: "ocid1.compartment.oc1..prod", NameOf: names}
	other := Target{CompartmentID: "ocid1.compartment.oc1..other", NameOf: names}
	user := Subjects{Groups: []string{"CCM"}}
	node := Subjects{DynamicGroups: []string{"nodes"}}
	for _, tc := range []struct {
		name   string
		s      Subjects
		t      Target
		need   []string
		wanted []string
	}{
		{"group by name, compartment by name", user, prod, []string{"INSTANCE_READ"}, nil},
		{"other compartment", user, other, []string{"INSTANCE_READ"}, []string{"INSTANCE_READ"}},
		{"unknown compartment: location not evaluated", user, Target{}, []string{"INSTANCE_READ"}, nil},
		{"not the user's grant", user, prod, []string{"LOAD_BALANCER_CREATE"}, []string{"LOAD_BALANCER_CREATE"}},
		{"dynamic group, compartment by id", node, prod, []string{"LOAD_BALANCER_CREATE", "INSTANCE_READ"}, []string{"INSTANCE_READ"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Missing(policy, tc.s, tc.t, tc.need); !slices.Equal(got, tc.wanted) {
				t.Errorf("Missing = %v, want %v", got, tc.wanted)
			}
		})
	}
}

func TestMatchingRule(t *testing.T) {
	in := Principal{InstanceID: "ocid1.instance.oc1..a", CompartmentID: "ocid1.compartment.oc1..c"}
	for _, tc := range []struct {
		rule string
		p    Principal
		want bool
	}{
		{"ANY {instance.id = 'ocid1.instance.oc1..a', instance.id = 'ocid1.instance.oc1..b'}", in, true},
		{"ANY {instance.id = 'ocid1.instance.oc1..b'}", in, false},
		{"ALL {instance.compartment.id = 'ocid1.compartment.oc1..c', instance.id != 'ocid1.instance.oc1..a'}", in, false},
		{"ALL {instance.compartment.id = 'ocid1.compartment.oc1..c', instance.id != 'ocid1.instance.oc1..b'}", in, true},
		{"instance.compartment.id = 'ocid1.compartment.oc1..c'", in, true},
		{"instance.compartment.id = 'ocid1.compartment.oc1..c'", Principal{User: "ocid1.user.oc1..u"}, false},
	} {
		r, err := ParseMatchingRule(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Matches(tc.p); got != tc.want {
			t.Errorf("%q matches %+v = %v, want %v", tc.rule, tc.p, got, tc.want)
		}
	}
	for _, bad := range []string{"ANY {tag.x.value = 'y'}", "ANY instance.id = 'x'", "instance.id = ''", "resource.type = 'instance'"} {
		if _, err := ParseMatchingRule(bad); err == nil {
			t.Errorf("ParseMatchingRule(%q) accepted it", bad)
		}
	}
}

// TestTable: every operation's permissions are granted by some verb of
// some resource type, and carry a source.
func TestTable(t *testing.T) {
	for _, op := range Operations() {
		if op.Source == "" {
			t.Errorf("%s: no source", op.Name)
		}
		if len(op.All()) == 0 {
			t.Errorf("%s: needs no permission", op.Name)
		}
		for _, p := range op.All() {
			if !KnownPermission(p) {
				t.Errorf("%s needs %s, which no verb grants", op.Name, p)
			}
		}
	}
	op, _ := LookupOperation("ListPublicIps")
	q := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := op.For(q(map[string]string{"scope": "REGION"})); !slices.Equal(got, []string{"PUBLIC_IP_READ"}) {
		t.Errorf("ListPublicIps scope REGION needs %v", got)
	}
	if got := op.For(q(map[string]string{"scope": "AVAILABILITY_DOMAIN"})); !slices.Equal(got, []string{"PRIVATE_IP_READ"}) {
		t.Errorf("ListPublicIps scope AVAILABILITY_DOMAIN needs %v", got)
	}
	if rt, v, _ := Least("SECURITY_LIST_UPDATE"); rt != "security-lists" || v != Manage {
		t.Errorf("Least(SECURITY_LIST_UPDATE) = %s %s", v, rt)
	}
}
