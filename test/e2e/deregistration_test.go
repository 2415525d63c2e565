//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
)

// A node that leaves a load balancer (here: excluded by label) is drained
// before it is deregistered: Tencent CLB sets its weight to 0, OCI marks
// the backend drain. A connection open to it keeps being served for the
// drain period while new connections go to the other node; then the
// target goes, and with it the connection.

// drainPeriodForTest is the Services' drain-period annotation here: long
// enough to observe both phases, short enough for the suite.
const drainPeriodForTest = 8 * time.Second

// targetState reports the leaving node's target: present, and draining
// (weight 0 / drain).
type targetState func() (present, draining bool)

func TestDeregistrationDrainsOpenConnections(t *testing.T) {
	const sel = "dereg"
	n1, n2 := lbNode(t, sel), lbNode(t, sel)
	spec := lbServiceSpec("dereg", sel, 8097)
	spec.Annotations[annotations.DrainPeriod.String()] = drainPeriodForTest.String()
	np := nodePort(spec, 8097)
	serve(t, n1.PrivateIP, np, 200, "node-1")
	serve(t, n2.PrivateIP, np, 200, "node-2")
	svc := createService(t, spec)
	addr := fmt.Sprintf("%s:8097", waitIngress(t, svc, 60*time.Second))
	svc = getService(t, svc)
	state := func() (present, draining bool) {
		lbs := clbsOf(svc.UID)
		if len(lbs) != 1 {
			return false, false
		}
		l, _ := listenerNamed(lbs[0], "TCP-8097")
		for _, tg := range l.Targets {
			if tg.InstanceID == n2.ID {
				return true, tg.Weight != nil && *tg.Weight == 0
			}
		}
		return false, false
	}
	deregistrationScenario(t, addr, n2.PrivateIP, state)
}

func TestOCIDeregistrationDrainsOpenConnections(t *testing.T) {
	startOCIServiceController(t)
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			sel := "oci-dereg-" + kind
			n1, n2 := ociLBNode(t, sel), ociLBNode(t, sel)
			spec := lbServiceSpec("oci-dereg-"+kind, sel, 8098)
			spec.Annotations[annotations.OCILoadBalancerType.String()] = kind
			spec.Annotations[annotations.DrainPeriod.String()] = drainPeriodForTest.String()
			np := nodePort(spec, 8098)
			serve(t, n1.PrivateIP, np, 200, "node-1")
			serve(t, n2.PrivateIP, np, 200, "node-2")
			svc := createService(t, spec)
			addr := fmt.Sprintf("%s:8098", waitIngress(t, svc, 90*time.Second))
			svc = getService(t, svc)
			state := func() (present, draining bool) {
				lbs := ociLBsOf(svc.UID)
				if len(lbs) != 1 {
					return false, false
				}
				for _, bs := range lbs[0].BackendSets {
					for _, b := range bs.Backends {
						if bs.Name == "TCP-8098" && b.IPAddress == n2.PrivateIP {
							return true, b.Drain
						}
					}
				}
				return false, false
			}
			deregistrationScenario(t, addr, n2.PrivateIP, state)
		})
	}
}

// deregistrationScenario: a keep-alive connection lands on node (named by
// its IP, answering "node-2"); node is excluded from load balancers. While
// its target drains, that connection is still served by it and new ones go
// to node-1 only; once the target is gone, the connection is closed.
func deregistrationScenario(t *testing.T, addr, node string, state targetState) {
	t.Helper()
	waitAnswers(t, "http://"+addr+"/", 60*time.Second, "node-1", "node-2")
	var open *traffic.Conn
	for range 20 {
		c := dialKeepAlive(t, addr)
		if b, err := body(c); err == nil && b == "node-2" {
			open = c
			break
		}
		c.Close()
	}
	if open == nil {
		t.Fatal("no connection through the VIP reached node-2 in 20 tries")
	}

	labelNode(t, node, corev1.LabelNodeExcludeBalancers, "true")
	t.Cleanup(func() { labelNode(t, node, corev1.LabelNodeExcludeBalancers, "false") })
	waitFor(t, "node-2's target draining", 30*time.Second, func() bool { p, d := state(); return p && d })
	drainStart := time.Now()

	// Draining: the open connection goes on; new ones avoid node-2.
	for i := 0; time.Since(drainStart) < drainPeriodForTest/2; i++ {
		if b, err := body(open); err != nil || b != "node-2" {
			t.Fatalf("request %d on the connection open to the draining node, %s into the drain: %q, %v; want node-2",
				i, time.Since(drainStart).Round(time.Millisecond), b, err)
		}
		if b, err := httpGet("http://" + addr + "/"); err != nil || b != "node-1" {
			t.Fatalf("new connection %d during the drain: %q, %v; want node-1", i, b, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Deregistered after the drain period (plus a reconcile): the open
	// connection is closed with it.
	waitFor(t, "node-2's target deregistered", drainPeriodForTest+30*time.Second, func() bool { p, _ := state(); return !p })
	drained := time.Since(drainStart)
	if drained < drainPeriodForTest*3/4 {
		t.Errorf("the target went %s after it started draining; the drain period is %s", drained.Round(time.Millisecond), drainPeriodForTest)
	}
	t.Logf("drained for %s (drain period %s)", drained.Round(100*time.Millisecond), drainPeriodForTest)
	if b, err := body(open); err == nil {
		t.Errorf("the connection to the deregistered node still answers (%q); want it closed", b)
	}
	waitAnswers(t, "http://"+addr+"/", 10*time.Second, "node-1")
}

// dialKeepAlive opens a keep-alive connection through a VIP, closed when
// the test ends.
func dialKeepAlive(t *testing.T, addr string) *traffic.Conn {
	t.Helper()
	c, err := traffic.Dial(addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// body sends one request on c and returns the answer's body; an answer
// that is not 2xx is an error.
func body(c *traffic.Conn) (string, error) {
	a, err := c.Get(2 * time.Second)
	if err != nil {
		return "", err
	}
	return a.Body, a.Err()
}

// waitFor polls cond every 100 ms until it holds, failing the test after d.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
