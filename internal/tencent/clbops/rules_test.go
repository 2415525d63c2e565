package clbops

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// ruleTargetsOf lists the targets of each rule of a listener as
// "domain/url: instance:port/weight", sorted, as DescribeTargets answers.
func (e *clbEnv) ruleTargetsOf(lbID, listenerName string) []string {
	e.t.Helper()
	l := e.listener(lbID, listenerName)
	if l == nil {
		e.t.Fatalf("no listener %s", listenerName)
	}
	req := clb.NewDescribeTargetsRequest()
	req.LoadBalancerId, req.ListenerIds = common.StringPtr(lbID), []*string{l.ListenerId}
	resp, err := e.own.DescribeTargetsWithContext(context.Background(), req)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, lb := range resp.Response.Listeners {
		if len(lb.Targets) > 0 {
			e.t.Errorf("listener %s has layer-4 targets %d", listenerName, len(lb.Targets))
		}
		for _, r := range lb.Rules {
			for _, t := range r.Targets {
				out = append(out, fmt.Sprintf("%s%s: %s:%d/%d", deref(r.Domain), deref(r.Url), deref(t.InstanceId), deref(t.Port), deref(t.Weight)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// rulesOf lists a listener's rules as "domain url default".
func (e *clbEnv) rulesOf(lbID, listenerName string) []string {
	e.t.Helper()
	var out []string
	for _, r := range e.listener(lbID, listenerName).Rules {
		out = append(out, fmt.Sprintf("%s %s %v", deref(r.Domain), deref(r.Url), deref(r.DefaultServer)))
	}
	return out
}

// TestEnsureLayer7: HTTP and HTTPS ports are listeners with one default
// rule (the VIP, "/") whose targets follow the backends as layer-4
// listeners' do (register, weights, drain, deregister); an unchanged
// resync writes nothing; a health check change is one ModifyRule; a rule
// made by hand is deleted; a protocol change replaces the listener.
func TestEnsureLayer7(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	ids := env.uploadCerts("a.example.test", "b.example.test")
	certA, certB := ids[0], ids[1]
	l7 := func(https string) specOpt {
		return func(s *Desired) {
			onlyTCPPorts(s)
			withProtocol("TCP-80", PortProtocol{Protocol: ProtocolHTTP})(s)
			withProtocol("TCP-443", PortProtocol{Protocol: ProtocolHTTPS, CertID: https})(s)
		}
	}
	weighted := func(s *Desired) {
		s.Backends = []lbspec.Backend{{NodeName: "n1", InstanceID: "ins-00000001", Weight: 30}, {NodeName: "n2", InstanceID: "ins-00000002", Weight: 10}}
	}
	draining := func(s *Desired) { s.DrainPeriod = time.Minute }
	httpCheck := func(s *Desired) { s.HealthCheck.Protocol = lbspec.HealthCheckHTTP }

	mustEnsure(t, o, testSpec(l7(certA)))
	id := env.lbIDs()[0]
	vip := env.lb(id).VIP
	if got, want := env.listenerNames(id), []string{"HTTP-80:HTTP/80", "HTTPS-443:HTTPS/443"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listeners = %v, want %v", got, want)
	}
	for _, name := range []string{"HTTP-80", "HTTPS-443"} {
		if got, want := env.rulesOf(id, name), []string{vip + " / true"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s rules = %v, want %v", name, got, want)
		}
	}
	if c := env.listener(id, "HTTPS-443").Certificate; c == nil || deref(c.CertId) != certA {
		t.Errorf("HTTPS-443 certificate = %+v, want %s", c, certA)
	}
	rt := func(port int, ws ...string) []string {
		var out []string
		for i, w := range ws {
			out = append(out, fmt.Sprintf("%s/: ins-0000000%d:%d/%s", vip, i+1, port, w))
		}
		return out
	}
	if got, want := env.ruleTargetsOf(id, "HTTP-80"), rt(30080, "10", "10"); !reflect.DeepEqual(got, want) {
		t.Errorf("HTTP-80 rule targets = %v, want %v", got, want)
	}

	steps := []struct {
		name       string
		spec       *Desired
		wantWrites []string
		check      func(t *testing.T)
	}{
		{"unchanged resync", testSpec(l7(certA)), nil, nil},
		{"weights from the backends", testSpec(l7(certA), weighted), []string{"BatchModifyTargetWeight"}, func(t *testing.T) {
			if got, want := env.ruleTargetsOf(id, "HTTPS-443"), rt(30443, "30", "10"); !reflect.DeepEqual(got, want) {
				t.Errorf("HTTPS-443 rule targets = %v, want %v", got, want)
			}
		}},
		{"weighted, resync", testSpec(l7(certA), weighted), nil, nil},
		{"node 2 leaves with a drain period: weight 0", testSpec(l7(certA), draining, withBackends("ins-00000001")), []string{"BatchModifyTargetWeight"}, func(t *testing.T) {
			if got, want := env.ruleTargetsOf(id, "HTTP-80"), rt(30080, "30", "0"); !reflect.DeepEqual(got, want) {
				t.Errorf("HTTP-80 rule targets = %v, want %v", got, want)
			}
		}},
		{"no drain period: deregistered; node 3 joins", testSpec(l7(certA), withBackends("ins-00000001", "ins-00000003")),
			[]string{"BatchRegisterTargets", "BatchDeregisterTargets"}, func(t *testing.T) {
				// A weight no backend asks for any more stays (targets.go).
				want := []string{vip + "/: ins-00000001:30080/30", vip + "/: ins-00000003:30080/10"}
				if got := env.ruleTargetsOf(id, "HTTP-80"); !reflect.DeepEqual(got, want) {
					t.Errorf("HTTP-80 rule targets = %v, want %v", got, want)
				}
			}},
		{"back to two, resync", testSpec(l7(certA)), []string{"BatchRegisterTargets", "BatchDeregisterTargets"}, nil},
		{"HTTP health check: one ModifyRule per rule", testSpec(l7(certA), httpCheck), []string{"ModifyRule", "ModifyRule"}, func(t *testing.T) {
			if hc := env.listener(id, "HTTP-80").Rules[0].HealthCheck; deref(hc.CheckType) != "HTTP" || deref(hc.HttpCheckPath) != "/healthz" {
				t.Errorf("rule health check = %s %s", deref(hc.CheckType), deref(hc.HttpCheckPath))
			}
		}},
		{"HTTP health check, resync", testSpec(l7(certA), httpCheck), nil, nil},
		{"certificate changed", testSpec(l7(certB), httpCheck), []string{"ModifyListener"}, nil},
		{"back to TCP: listeners replaced", testSpec(onlyTCPPorts, httpCheck),
			[]string{"DeleteListener", "DeleteListener", "CreateListener", "BatchRegisterTargets"}, func(t *testing.T) {
				if got, want := env.listenerNames(id), []string{"TCP-443:TCP/443", "TCP-80:TCP/80"}; !reflect.DeepEqual(got, want) {
					t.Errorf("listeners = %v, want %v", got, want)
				}
			}},
		{"TCP to HTTP", testSpec(l7(certB), httpCheck),
			[]string{"DeleteListener", "DeleteListener", "CreateListener", "CreateListener", "CreateRule", "CreateRule", "BatchRegisterTargets"}, nil},
		{"layer 7 again, resync", testSpec(l7(certB), httpCheck), nil, nil},
	}
	for _, st := range steps {
		env.resetCalls()
		mustEnsure(t, o, st.spec)
		if got := env.writes(); !reflect.DeepEqual(got, st.wantWrites) {
			t.Errorf("%s: writes = %v, want %v", st.name, got, st.wantWrites)
		}
		if st.check != nil {
			st.check(t)
		}
	}

	// A rule made by hand on our listener goes; ours and its targets stay.
	ctx := context.Background()
	req := clb.NewCreateRuleRequest()
	req.LoadBalancerId, req.ListenerId = common.StringPtr(id), env.listener(id, "HTTP-80").ListenerId
	req.Rules = []*clb.RuleInput{{Domain: common.StringPtr("extra.example.test"), Url: common.StringPtr("/x")}}
	if _, err := env.own.CreateRuleWithContext(ctx, req); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, env, id)
	env.resetCalls()
	mustEnsure(t, o, testSpec(l7(certB), httpCheck))
	if got, want := env.writes(), []string{"DeleteRule"}; !reflect.DeepEqual(got, want) {
		t.Errorf("extra rule: writes = %v, want %v", got, want)
	}
	if got, want := env.rulesOf(id, "HTTP-80"), []string{vip + " / true"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %v, want %v", got, want)
	}
	if got, want := env.ruleTargetsOf(id, "HTTP-80"), rt(30080, "10", "10"); !reflect.DeepEqual(got, want) {
		t.Errorf("HTTP-80 rule targets = %v, want %v", got, want)
	}
}

// onlyTCPPorts keeps the Service's TCP ports 80 and 443.
func onlyTCPPorts(s *Desired) {
	s.Listeners = slices.DeleteFunc(s.Listeners, func(l lbspec.Listener) bool { return l.Protocol != lbspec.TCP })
}

// TestLayer7Domain: the rule is named after the CLB's first VIP; a CLB
// without one is an error naming it.
func TestLayer7Domain(t *testing.T) {
	tests := []struct {
		vips    []string
		want    string
		wantErr string
	}{
		{[]string{"127.0.0.9", "10.0.0.1"}, "127.0.0.9", ""},
		{nil, "", "CLB lb-1 has no VIP"},
		{[]string{""}, "", "CLB lb-1 has no VIP"},
	}
	for _, tt := range tests {
		got, err := ruleDomain(&loadBalancer{id: "lb-1", vips: tt.vips})
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("vips %v: err = %v, want %q", tt.vips, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("vips %v: got %q, %v; want %q", tt.vips, got, err, tt.want)
		}
	}
}
