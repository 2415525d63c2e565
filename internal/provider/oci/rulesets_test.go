package oci

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccm/internal/annotations"
)

// TestRuleSetsAnnotation: the Load Balancer gets the parsed rule sets; bad
// JSON or an unknown action is refused naming the Service and the
// annotation before the operations layer is called; a Network Load
// Balancer gets a Warning Event and no rule sets, and is still ensured.
func TestRuleSetsAnnotation(t *testing.T) {
	rs, typ := string(annotations.OCILBRuleSets), annotations.OCILoadBalancerType.String()
	good := `{"hdr": {"items": [{"action": "ADD_HTTP_REQUEST_HEADER", "header": "x-env", "value": "prod"}]}, "size": {"items": [{"action": "HTTP_HEADER", "httpLargeHeaderSizeInKB": 16}]}}`
	tests := []struct {
		name      string
		ann       map[string]string
		want      int // rule sets ensured
		wantErr   string
		wantEvent string
	}{
		{name: "unset", ann: nil, want: 0},
		{name: "two", ann: map[string]string{rs: good}, want: 2},
		{name: "bad JSON", ann: map[string]string{rs: `{"hdr": `}, wantErr: "oci-load-balancer-rule-sets: invalid value"},
		{name: "unknown action", ann: map[string]string{rs: `{"hdr": {"items": [{"action": "TELEPORT"}]}}`}, wantErr: `action "TELEPORT" is not one of`},
		{name: "nlb", ann: map[string]string{typ: "nlb", rs: good}, want: 0,
			wantEvent: "Warning " + EventReasonRuleSetsNotOnNLB + " oci.oraclecloud.com/oci-load-balancer-rule-sets applies to the OCI Load Balancer only"},
		{name: "nlb with a bad value is still only a warning", ann: map[string]string{typ: "nlb", rs: `{`}, want: 0,
			wantEvent: "Warning " + EventReasonRuleSetsNotOnNLB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lb, f := testLB(lbCfg)
			events := record.NewFakeRecorder(10)
			lb.UseRecorder(events)
			svc := lbService(tt.ann)
			_, err := lb.EnsureLoadBalancer(context.Background(), "k", svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), svc.Namespace+"/"+svc.Name) {
					t.Fatalf("error %v, want one naming %s/%s and %q", err, svc.Namespace, svc.Name, tt.wantErr)
				}
				if len(f.ensured) != 0 {
					t.Error("the operations layer was called for a bad Service")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(f.ensured[0].RuleSets); got != tt.want {
				t.Errorf("%d rule sets ensured, want %d", got, tt.want)
			}
			var event string
			if len(events.Events) > 0 {
				event = <-events.Events
			}
			if !strings.HasPrefix(event, tt.wantEvent) || (tt.wantEvent == "") != (event == "") {
				t.Errorf("event %q, want %q", event, tt.wantEvent)
			}
		})
	}
}
