package cam

import (
	"strings"
	"testing"
)

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"version", `{"version":"1.0","statement":[{"effect":"allow","action":"cvm:*","resource":"*"}]}`, `version is "1.0"`},
		{"no statement", `{"version":"2.0","statement":[]}`, "statement is empty"},
		{"effect", `{"version":"2.0","statement":[{"effect":"maybe","action":"cvm:*","resource":"*"}]}`, `effect is "maybe"`},
		{"action", `{"version":"2.0","statement":[{"effect":"allow","action":"DescribeInstances","resource":"*"}]}`, `action "DescribeInstances"`},
		{"resource", `{"version":"2.0","statement":[{"effect":"allow","action":"cvm:*","resource":"lb-1"}]}`, `resource "lb-1"`},
		{"condition", `{"version":"2.0","statement":[{"effect":"allow","action":"cvm:*","resource":"*","condition":{"ip_equal":{"qcs:ip":"10.0.0.1"}}}]}`, "condition is not evaluated"},
		{"principal", `{"version":"2.0","statement":[{"effect":"allow","action":"sts:AssumeRole","resource":"*","principal":{"qcs":["qcs::cam::uin/1:root"]}}]}`, "trust policy"},
		{"unknown key", `{"version":"2.0","statements":[]}`, "unknown field"},
		{"both reported", `{"version":"2.0","statement":[{"effect":"x","action":"y","resource":"*"}]}`, `effect is "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	policy := func(doc string) *Policy {
		p, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	readOnly := policy(`{"version":"2.0","statement":[{"effect":"allow","action":["clb:Describe*","name/cvm:DescribeInstances"],"resource":"*"}]}`)
	all := policy(`{"version":"2.0","statement":[{"effect":"allow","action":"*","resource":["*"]}]}`)
	denyDelete := policy(`{"version":"2.0","statement":[{"effect":"deny","action":"clb:DeleteLoadBalancer","resource":"*"}]}`)
	clbOnly := policy(`{"version":"2.0","statement":[{"effect":"allow","action":"*","resource":"qcs::clb:ap-guangzhou:uin/1:clb/*"}]}`)
	for _, tc := range []struct {
		name     string
		policies []*Policy
		action   string
		want     bool
	}{
		{"wildcard suffix", []*Policy{readOnly}, "clb:DescribeListeners", true},
		{"wildcard does not cover writes", []*Policy{readOnly}, "clb:CreateListener", false},
		{"name/ prefix", []*Policy{readOnly}, "cvm:DescribeInstances", true},
		{"case-insensitive", []*Policy{readOnly}, "CVM:describeinstances", true},
		{"no policy", nil, "cvm:DescribeInstances", false},
		{"star", []*Policy{all}, "tke:CreateClusterRoute", true},
		{"deny wins", []*Policy{all, denyDelete}, "clb:DeleteLoadBalancer", false},
		{"deny only its action", []*Policy{all, denyDelete}, "clb:DeleteListener", true},
		{"qcs resource: its service", []*Policy{clbOnly}, "clb:CreateListener", true},
		{"qcs resource: other service", []*Policy{clbOnly}, "cvm:DescribeInstances", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.policies, tc.action, "*").Allowed; got != tc.want {
				t.Errorf("Decide(%s) = %v, want %v", tc.action, got, tc.want)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	p, err := Parse([]byte(`{"version":"2.0","statement":[{"effect":"allow","action":["clb:A","clb:B"],"resource":"*"},{"effect":"allow","action":"cvm:C","resource":"*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	q := p.Without("cvm:C").Without("clb:A")
	if got := strings.Join(q.Actions(), ","); got != "clb:B" {
		t.Errorf("Actions after Without = %s, want clb:B", got)
	}
	if len(p.Actions()) != 3 {
		t.Errorf("Without changed the original: %v", p.Actions())
	}
	back, err := Parse(q.JSON())
	if err != nil || strings.Join(back.Actions(), ",") != "clb:B" {
		t.Errorf("JSON round trip: %v %v", back, err)
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "anything", true},
		{"clb:*", "clb:X", true},
		{"clb:*", "cvm:X", false},
		{"clb:Describe*s", "clb:DescribeTargets", true},
		{"clb:Describe*s", "clb:DescribeQuota", false},
		{"*:Describe*", "vpc:DescribeVpcs", true},
		{"clb:A", "clb:AB", false},
	} {
		if got := Glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
