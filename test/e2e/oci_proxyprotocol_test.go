//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// TestOCIProxyProtocol: the PROXY protocol on an OCI Load Balancer
// (connection-proxy-protocol-version 1, then 2, then removed) and a Network
// Load Balancer (is-ppv2-enabled true, then false). The node reads the
// PROXY header before the HTTP request and answers the client address it
// found there: the client, bound to its own 127.x address, must see that
// address come back, so the backend learned the real client although the
// connection came from the load balancer. Each change is one UpdateListener;
// a bad version is an Event naming the annotation and changes nothing.
func TestOCIProxyProtocol(t *testing.T) {
	startOCIServiceController(t)
	for _, tc := range []struct {
		kind, client string
		name         annotations.Name
		update       string // the UpdateListener action cloudsim counts
		steps        []proxyStep
	}{
		{"lb", srcClientA, annotations.OCILBConnectionProxyProtocolVersion.Name, "UpdateListener",
			[]proxyStep{{"1", "v1 " + srcClientA}, {"2", "v2 " + srcClientA}, {"", "no header"}}},
		{"nlb", srcClientB, annotations.OCINLBIsPpv2Enabled.Name, "nlb:UpdateListener",
			[]proxyStep{{"true", "v2 " + srcClientB}, {"false", "no header"}}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			sel := "oci-pp-" + tc.kind
			n := ociLBNode(t, sel)
			spec := lbServiceSpec("oci-pp-"+tc.kind, sel, 8093)
			spec.Annotations[annotations.OCILoadBalancerType.String()] = tc.kind
			spec.Annotations[string(tc.name)] = tc.steps[0].value
			serveProxyProtocol(t, n.PrivateIP, nodePort(spec, 8093))
			svc := createService(t, spec)
			url := fmt.Sprintf("http://%s:8093/", waitIngress(t, svc, 90*time.Second))
			waitAnswerFrom(t, tc.client, url, tc.steps[0].want, 30*time.Second)

			for _, step := range tc.steps[1:] {
				before := ociCalls(tc.update)
				svc = updateService(t, svc, func(s *corev1.Service) {
					if step.value == "" {
						delete(s.Annotations, string(tc.name))
					} else {
						s.Annotations[string(tc.name)] = step.value
					}
				})
				took := waitAnswerFrom(t, tc.client, url, step.want, 30*time.Second)
				t.Logf("%s=%q: the backend saw %q within %s", tc.name, step.value, step.want, took.Round(time.Millisecond))
				if w := ociCalls(tc.update) - before; w != 1 {
					t.Errorf("%s=%q: %d %s calls, want 1", tc.name, step.value, w, tc.update)
				}
			}

			if tc.kind == "lb" {
				// A version OCI does not have: an Event, and the load
				// balancer carries on as it was.
				before := ociCalls(tc.update)
				svc = updateService(t, svc, func(s *corev1.Service) { s.Annotations[string(tc.name)] = "3" })
				waitEvent(t, svc, "", []string{string(tc.name), `invalid value "3"`, "must be 1 or 2"}, 30*time.Second)
				waitAnswerFrom(t, tc.client, url, tc.steps[len(tc.steps)-1].want, 5*time.Second)
				if w := ociCalls(tc.update) - before; w != 0 {
					t.Errorf("a bad version made %d %s calls, want 0", w, tc.update)
				}
			}
		})
	}
}

// proxyStep is one value of the proxy protocol annotation ("" removes it)
// and what the node then answers.
type proxyStep struct{ value, want string }

// serveProxyProtocol runs a node's NodePort that reads a PROXY header, if
// one comes, then an HTTP request, and answers "v<version> <client IP>"
// from the header, or "no header".
func serveProxyProtocol(t *testing.T, ip string, port int32) {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				r := bufio.NewReader(c)
				body := "no header"
				if b, err := r.Peek(1); err == nil && (b[0] == 'P' || b[0] == '\r') {
					v, src, _, err := dataplane.ReadProxyHeader(r)
					if err != nil {
						body = "bad header: " + err.Error()
					} else {
						body = fmt.Sprintf("v%d %s", v, src.Addr())
					}
				}
				if _, err := http.ReadRequest(r); err != nil {
					return
				}
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
}

// waitAnswerFrom waits until a GET of url from src answers want and
// returns how long that took.
func waitAnswerFrom(t *testing.T, src, url, want string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	for {
		body, err := httpGetFrom(src, url)
		if err == nil && body == want {
			return time.Since(start)
		}
		last = fmt.Sprintf("%q %v", body, err)
		if time.Since(start) > d {
			t.Fatalf("GET %s from %s: not %q within %s (last %s)", url, src, want, d, strings.TrimSpace(last))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
