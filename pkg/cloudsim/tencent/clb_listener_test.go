package tencent

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

func TestCLBCreateListenerValidation(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	id := e.createLB(t, nil)
	e.createListener(t, id, "TCP", 80, nil)
	hc := func(mod func(*clb.HealthCheck)) func(*clb.CreateListenerRequest) {
		return func(r *clb.CreateListenerRequest) {
			r.HealthCheck = &clb.HealthCheck{}
			mod(r.HealthCheck)
		}
	}
	tests := []struct {
		name   string
		proto  string
		port   int64
		mutate func(*clb.CreateListenerRequest)
		code   string
	}{
		{"port conflict", "TCP", 80, nil, "InvalidParameter.PortCheckFailed"},
		{"UDP on the same port is fine", "UDP", 80, nil, ""},
		{"missing protocol", "", 81, nil, "MissingParameter"},
		{"QUIC is not emulated", "QUIC", 81, nil, "UnsupportedOperation"},
		{"HTTP takes no Scheduler: the rules have it", "HTTP", 81, func(r *clb.CreateListenerRequest) { r.Scheduler = common.StringPtr("WRR") }, "InvalidParameter"},
		{"HTTPS needs a certificate", "HTTPS", 81, nil, "MissingParameter"},
		{"HTTP", "HTTP", 8081, nil, ""},
		{"unknown protocol", "SCTP", 81, nil, "InvalidParameterValue"},
		{"lower-case protocol", "tcp", 81, nil, "InvalidParameterValue"},
		{"port 0", "TCP", 0, nil, "InvalidParameterValue"},
		{"port 65536", "TCP", 65536, nil, "InvalidParameterValue"},
		// CreateListener documents neither InvalidParameterValue.Duplicate
		// nor InvalidParameter.LBIdNotFound (clb_codes.go): their generic codes.
		{"duplicate ports", "TCP", 81, func(r *clb.CreateListenerRequest) { r.Ports = append(r.Ports, common.Int64Ptr(81)) }, "InvalidParameterValue"},
		{"names do not match ports", "TCP", 81, func(r *clb.CreateListenerRequest) {
			r.ListenerNames = common.StringPtrs([]string{"a", "b"})
		}, "InvalidParameter"},
		{"name too long", "TCP", 81, func(r *clb.CreateListenerRequest) {
			r.ListenerNames = common.StringPtrs([]string{string(make([]byte, 81))})
		}, "InvalidParameterValue.Length"},
		{"unknown LB", "TCP", 81, func(r *clb.CreateListenerRequest) { r.LoadBalancerId = common.StringPtr("lb-nothere") }, "InvalidParameter"},
		{"scheduler IP_HASH only on modify", "TCP", 81, func(r *clb.CreateListenerRequest) { r.Scheduler = common.StringPtr("IP_HASH") }, "InvalidParameterValue"},
		{"session expire 10", "TCP", 81, func(r *clb.CreateListenerRequest) { r.SessionExpireTime = common.Int64Ptr(10) }, "InvalidParameterValue"},
		{"port range", "TCP", 81, func(r *clb.CreateListenerRequest) { r.EndPort = common.Uint64Ptr(90) }, "UnsupportedOperation"},
		{"timeout 1", "TCP", 81, hc(func(h *clb.HealthCheck) { h.TimeOut = common.Int64Ptr(1) }), "InvalidParameterValue"},
		{"timeout not below interval", "TCP", 81, hc(func(h *clb.HealthCheck) {
			h.TimeOut, h.IntervalTime = common.Int64Ptr(5), common.Int64Ptr(5)
		}), "InvalidParameterValue"},
		{"HealthNum 11", "TCP", 81, hc(func(h *clb.HealthCheck) { h.HealthNum = common.Int64Ptr(11) }), "InvalidParameterValue"},
		{"UnHealthNum 1", "TCP", 81, hc(func(h *clb.HealthCheck) { h.UnHealthNum = common.Int64Ptr(1) }), "InvalidParameterValue"},
		{"TCP check on UDP", "UDP", 81, hc(func(h *clb.HealthCheck) { h.CheckType = common.StringPtr("TCP") }), "InvalidParameterValue"},
		{"PING check on TCP", "TCP", 81, hc(func(h *clb.HealthCheck) { h.CheckType = common.StringPtr("PING") }), "InvalidParameterValue"},
		{"HTTP check without HttpVersion", "TCP", 81, hc(func(h *clb.HealthCheck) {
			h.CheckType, h.HttpCheckDomain = common.StringPtr("HTTP"), common.StringPtr("h")
		}), "MissingParameter"},
		{"HTTP check without domain", "TCP", 81, hc(func(h *clb.HealthCheck) {
			h.CheckType, h.HttpVersion = common.StringPtr("HTTP"), common.StringPtr("HTTP/1.1")
		}), "MissingParameter"},
		{"HTTP check with a bad path", "TCP", 81, hc(func(h *clb.HealthCheck) {
			h.CheckType, h.HttpVersion, h.HttpCheckDomain = common.StringPtr("HTTP"), common.StringPtr("HTTP/1.1"), common.StringPtr("h")
			h.HttpCheckPath = common.StringPtr("healthz")
		}), "InvalidParameterValue"},
		{"HttpCode 32", "TCP", 81, hc(func(h *clb.HealthCheck) { h.HttpCode = common.Int64Ptr(32) }), "InvalidParameterValue"},
		{"CheckPort 0", "TCP", 81, hc(func(h *clb.HealthCheck) { h.CheckPort = common.Int64Ptr(0) }), "InvalidParameterValue"},
		{"custom check without context type", "UDP", 81, hc(func(h *clb.HealthCheck) {
			h.CheckType, h.SendContext, h.RecvContext = common.StringPtr("CUSTOM"), common.StringPtr("a"), common.StringPtr("b")
		}), "MissingParameter"},
		{"custom HEX check with odd length", "UDP", 81, hc(func(h *clb.HealthCheck) {
			h.CheckType, h.ContextType = common.StringPtr("CUSTOM"), common.StringPtr("HEX")
			h.SendContext, h.RecvContext = common.StringPtr("ABC"), common.StringPtr("AB")
		}), "InvalidParameterValue"},
		{"health check off skips type checks", "TCP", 82, hc(func(h *clb.HealthCheck) {
			h.HealthSwitch, h.CheckType = common.Int64Ptr(0), common.StringPtr("HTTP")
		}), ""},
		{"HTTP check on a NodePort", "TCP", 83, hc(func(h *clb.HealthCheck) {
			h.CheckType, h.HttpVersion, h.HttpCheckDomain = common.StringPtr("HTTP"), common.StringPtr("HTTP/1.1"), common.StringPtr("healthz.local")
			h.HttpCheckPath, h.CheckPort, h.HttpCode = common.StringPtr("/healthz"), common.Int64Ptr(32000), common.Int64Ptr(2)
		}), ""},
		{"two ports, two names", "TCP", 84, func(r *clb.CreateListenerRequest) {
			r.Ports = append(r.Ports, common.Int64Ptr(85))
			r.ListenerNames = common.StringPtrs([]string{"TCP-84", "TCP-85"})
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := clb.NewCreateListenerRequest()
			req.LoadBalancerId = common.StringPtr(id)
			if tt.proto != "" {
				req.Protocol = common.StringPtr(tt.proto)
			}
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
}

func TestCLBListenerLifecycle(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	id := e.createLB(t, nil)
	tcp := e.createListener(t, id, "TCP", 80, func(r *clb.CreateListenerRequest) {
		r.ListenerNames = common.StringPtrs([]string{"TCP-80"})
		r.SessionExpireTime = common.Int64Ptr(30)
	})
	udp := e.createListener(t, id, "UDP", 53, nil)

	describe := func(mutate func(*clb.DescribeListenersRequest)) ([]*clb.Listener, error) {
		req := clb.NewDescribeListenersRequest()
		req.LoadBalancerId = common.StringPtr(id)
		if mutate != nil {
			mutate(req)
		}
		resp, err := e.api.DescribeListeners(req)
		if err != nil {
			return nil, err
		}
		if int(*resp.Response.TotalCount) != len(resp.Response.Listeners) {
			t.Fatalf("TotalCount %d for %d listeners", *resp.Response.TotalCount, len(resp.Response.Listeners))
		}
		return resp.Response.Listeners, nil
	}
	all, err := describe(nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("DescribeListeners: %v %v", all, err)
	}
	l0 := all[0]
	if *l0.ListenerId != tcp || *l0.ListenerName != "TCP-80" || *l0.Protocol != "TCP" || *l0.Port != 80 ||
		*l0.SessionExpireTime != 30 || *l0.Scheduler != "WRR" || *l0.IdleConnectTimeout != 900 {
		t.Fatalf("TCP listener: %s", mustJSON(l0))
	}
	h := l0.HealthCheck
	if *h.HealthSwitch != 1 || *h.CheckType != "TCP" || *h.IntervalTime != 5 || *h.TimeOut != 2 || *h.HealthNum != 3 || *h.UnHealthNum != 3 {
		t.Fatalf("default TCP health check: %s", mustJSON(h))
	}
	if *all[1].HealthCheck.CheckType != "PING" || *all[1].IdleConnectTimeout != 300 {
		t.Fatalf("UDP listener defaults: %s", mustJSON(all[1]))
	}
	for _, f := range []struct {
		name   string
		mutate func(*clb.DescribeListenersRequest)
		want   int
		code   string
	}{
		{"by port", func(r *clb.DescribeListenersRequest) { r.Port = common.Int64Ptr(53) }, 1, ""},
		{"by protocol", func(r *clb.DescribeListenersRequest) { r.Protocol = common.StringPtr("TCP") }, 1, ""},
		{"by id", func(r *clb.DescribeListenersRequest) { r.ListenerIds = common.StringPtrs([]string{udp}) }, 1, ""},
		{"no match", func(r *clb.DescribeListenersRequest) { r.Port = common.Int64Ptr(1) }, 0, ""},
		{"101 ids", func(r *clb.DescribeListenersRequest) { r.ListenerIds = common.StringPtrs(make([]string, 101)) }, 0, "InvalidParameterValue.Length"},
		{"unknown LB", func(r *clb.DescribeListenersRequest) { r.LoadBalancerId = common.StringPtr("lb-nothere") }, 0, "InvalidParameter.LBIdNotFound"},
	} {
		got, err := describe(f.mutate)
		if sdkCode(err) != f.code || len(got) != f.want {
			t.Errorf("%s: %d listeners, %v; want %d, %q", f.name, len(got), err, f.want, f.code)
		}
	}

	// ModifyListener merges the health check: unset fields keep their values.
	mreq := clb.NewModifyListenerRequest()
	mreq.LoadBalancerId, mreq.ListenerId = common.StringPtr(id), common.StringPtr(tcp)
	mreq.ListenerName = common.StringPtr("renamed")
	mreq.Scheduler = common.StringPtr("IP_HASH")
	mreq.HealthCheck = &clb.HealthCheck{IntervalTime: common.Int64Ptr(10), HealthNum: common.Int64Ptr(2)}
	if _, err := e.api.ModifyListener(mreq); err != nil {
		t.Fatal(err)
	}
	got, _ := describe(func(r *clb.DescribeListenersRequest) { r.ListenerIds = common.StringPtrs([]string{tcp}) })
	h = got[0].HealthCheck
	if *got[0].ListenerName != "renamed" || *got[0].Scheduler != "IP_HASH" || *h.IntervalTime != 10 || *h.HealthNum != 2 ||
		*h.TimeOut != 2 || *h.CheckType != "TCP" || *got[0].SessionExpireTime != 30 {
		t.Fatalf("after ModifyListener: %s", mustJSON(got[0]))
	}
	mreq = clb.NewModifyListenerRequest()
	mreq.LoadBalancerId, mreq.ListenerId = common.StringPtr(id), common.StringPtr("lbl-nothere")
	// ModifyListener does not document InvalidParameter.ListenerIdNotFound.
	if _, err := e.api.ModifyListener(mreq); sdkCode(err) != "InvalidParameter" || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("modifying an unknown listener: %v", err)
	}
	mreq.ListenerId = common.StringPtr(tcp)
	mreq.HealthCheck = &clb.HealthCheck{TimeOut: common.Int64Ptr(10)}
	if _, err := e.api.ModifyListener(mreq); sdkCode(err) != "InvalidParameterValue" {
		t.Fatalf("a timeout not below the interval: %v", err)
	}

	dreq := clb.NewDeleteListenerRequest()
	dreq.LoadBalancerId, dreq.ListenerId = common.StringPtr(id), common.StringPtr(tcp)
	if _, err := e.api.DeleteListener(dreq); err != nil {
		t.Fatal(err)
	}
	// DeleteListener does not document InvalidParameter.ListenerIdNotFound
	// (clb@v1.3.105 client.go): the generic InvalidParameter.
	if _, err := e.api.DeleteListener(dreq); sdkCode(err) != "InvalidParameter" || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("deleting it again: %v", err)
	}
	breq := clb.NewDeleteLoadBalancerListenersRequest()
	breq.LoadBalancerId = common.StringPtr(id)
	if _, err := e.api.DeleteLoadBalancerListeners(breq); err != nil {
		t.Fatal(err)
	}
	if got, _ := describe(nil); len(got) != 0 {
		t.Fatalf("listeners left: %d", len(got))
	}
}

// TestCLBHealthCheckNulls: HttpCode, HttpCheckPath, HttpCheckDomain,
// HttpCheckMethod, HttpVersion, CheckPort, ContextType, SendContext and
// RecvContext "may be returned as null" (注意：此字段可能返回 null，表示取不到有效值,
// HealthCheck in clb@v1.3.105 models.go). cloudsim answers null for the
// fields that do not apply to the check type and for the target's port,
// and, with NullHealthCheckFields, for all of them.
func TestCLBHealthCheckNulls(t *testing.T) {
	httpCheck := func(r *clb.CreateListenerRequest) {
		r.HealthCheck = &clb.HealthCheck{CheckType: common.StringPtr("HTTP"), HttpVersion: common.StringPtr("HTTP/1.1"),
			HttpCheckDomain: common.StringPtr("localhost"), HttpCheckPath: common.StringPtr("/healthz"),
			HttpCheckMethod: common.StringPtr("GET"), HttpCode: common.Int64Ptr(2), CheckPort: common.Int64Ptr(31000)}
	}
	nullable := func(h *clb.HealthCheck) map[string]bool {
		return map[string]bool{
			"HttpCode": h.HttpCode == nil, "HttpCheckPath": h.HttpCheckPath == nil, "HttpCheckDomain": h.HttpCheckDomain == nil,
			"HttpCheckMethod": h.HttpCheckMethod == nil, "HttpVersion": h.HttpVersion == nil, "CheckPort": h.CheckPort == nil,
			"ContextType": h.ContextType == nil, "SendContext": h.SendContext == nil, "RecvContext": h.RecvContext == nil,
		}
	}
	for _, nulls := range []bool{false, true} {
		e := newCLBEnv(t, CLBOptions{NullHealthCheckFields: nulls}, dataplane.Config{Disabled: true})
		id := e.createLB(t, nil)
		tcp := e.createListener(t, id, "TCP", 80, nil)
		http := e.createListener(t, id, "TCP", 81, httpCheck)
		req := clb.NewDescribeListenersRequest()
		req.LoadBalancerId = common.StringPtr(id)
		resp, err := e.api.DescribeListeners(req)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range resp.Response.Listeners {
			h := l.HealthCheck
			if *h.HealthSwitch != 1 || h.CheckType == nil || h.TimeOut == nil || h.IntervalTime == nil {
				t.Errorf("nulls=%v %s: the fields that are never null are missing: %s", nulls, *l.ListenerId, mustJSON(h))
			}
			for field, isNull := range nullable(h) {
				// A TCP check on the target's port: none applies; an HTTP
				// check: the CUSTOM fields do not.
				wantNull := nulls || *l.ListenerId == tcp || strings.HasSuffix(field, "Context") || field == "ContextType"
				if isNull != wantNull {
					t.Errorf("nulls=%v listener %s: %s null=%v, want %v", nulls, *l.ListenerId, field, isNull, wantNull)
				}
			}
		}
		// The admin view always has the stored values.
		lb, _ := e.clb.LoadBalancer(id)
		for _, l := range lb.Listeners {
			if l.ID == http && (l.HealthCheck.HttpCode == nil || *l.HealthCheck.HttpCode != 2) {
				t.Errorf("nulls=%v: admin view lost HttpCode: %s", nulls, mustJSON(l.HealthCheck))
			}
		}
	}
}
