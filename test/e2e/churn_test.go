//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// Traffic under node churn: every node behind a load balancer is replaced,
// one at a time, the way the cluster autoscaler (or a node upgrade with
// surge) does it: a new node joins; the old one is tainted
// ToBeDeletedByClusterAutoscaler, which fails kube-proxy's /healthz and so
// the load balancer's health check; once the load balancer has stopped
// sending it new connections, the Node and then its instance are deleted.
// A steady load runs through the VIP all along (traffic.Load: 100 short
// requests/s and 2 keep-alive connections). No request may fail. A
// keep-alive connection open to a node that goes is reset when its target
// is deregistered (after the drain period): counted, and retried by the
// client on a new connection.

// churnNode is one node of the scenario: its instance and its server.
type churnNode struct {
	in   cloudsim.Instance
	stop func()
}

// churnCloud is what the scenario needs from a cloud.
type churnCloud struct {
	// join adds a node labeled for the Service, its server already
	// answering body on the NodePort.
	join func(t *testing.T, body string) churnNode
	// target reports a node's target (by private IP) on the load
	// balancer: present, and in service in the data plane.
	target func(ip string) (present, inService bool)
	// terminate ends the node's instance.
	terminate func(t *testing.T, in cloudsim.Instance)
}

func TestTrafficUnderNodeChurn(t *testing.T) {
	const sel, port = "churn", int32(8099)
	spec := churnServiceSpec("churn", sel, port)
	np := nodePort(spec, port)
	var svc *corev1.Service
	c := tencentChurn(sel, []int32{np}, func() *corev1.Service { return svc })
	churnScenario(t, c, spec, port, func(s *corev1.Service) { svc = s }, nil)
}

// TestTrafficUnderLeaderFailover is the churn with two CCM replicas under
// leader election, the leader SIGKILLed as the second node's replacement
// starts: the replacement waits for the new leader, and no request fails.
func TestTrafficUnderLeaderFailover(t *testing.T) {
	pauseMainCCM(t)
	procs := map[string]*testcluster.Process{}
	for i, id := range haSecretIDs {
		name := []string{"ccm-churn-a", "ccm-churn-b"}[i]
		p, err := startCCM(name, writeCloudConfig(suite.dir, name+".yaml", id, secretKey),
			"--leader-elect=true", "--leader-elect-lease-duration="+leaseDuration.String(),
			"--leader-elect-renew-deadline=5s", "--leader-elect-retry-period="+retryPeriod.String())
		if err != nil {
			t.Fatal(err)
		}
		// A cleanup, not a defer: the Service's own cleanup, registered
		// later, runs first and needs a CCM to remove its finalizer.
		t.Cleanup(p.Stop)
		procs[id] = p
	}
	leader, follower := waitForLeader(t, procs, 30*time.Second)

	const sel, port = "churn-failover", int32(8102)
	spec := churnServiceSpec("churn-failover", sel, port)
	np := nodePort(spec, port)
	var svc *corev1.Service
	c := tencentChurn(sel, []int32{np}, func() *corev1.Service { return svc })
	churnScenario(t, c, spec, port, func(s *corev1.Service) { svc = s }, func(t *testing.T, i int) {
		if i != 1 {
			return
		}
		procs[leader].Kill()
		killed := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), leaseDuration+15*time.Second)
		defer cancel()
		if err := procs[follower].WaitForOutput(ctx, acquiredLease); err != nil {
			t.Fatalf("the follower did not take over: %v", err)
		}
		t.Logf("leader %s SIGKILLed; %s took over %s later", leader, follower, time.Since(killed).Round(100*time.Millisecond))
	})
}

// tencentChurn is the scenario's view of Tencent CLB for a Service (read
// through svc once it exists).
func tencentChurn(sel string, nps []int32, svc func() *corev1.Service) churnCloud {
	return churnCloud{
		join: func(t *testing.T, body string) churnNode {
			ip := nextIP()
			var stops []func()
			for _, np := range nps {
				stops = append(stops, serveStoppable(t, ip, np, body))
			}
			stop := func() {
				for _, s := range stops {
					s()
				}
			}
			return churnNode{in: lbNodeAt(t, sel, ip), stop: stop}
		},
		target: func(ip string) (bool, bool) {
			lbs := clbsOf(svc().UID)
			if len(lbs) != 1 {
				return false, false
			}
			st, err := suite.sim.Tencent().CLB().DataPlane(lbs[0].ID)
			return targetIn(st, err, ip)
		},
		terminate: func(t *testing.T, in cloudsim.Instance) {
			if err := suite.sim.SetInstanceState(in.ID, "TERMINATING"); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestOCITrafficUnderNodeChurn(t *testing.T) {
	startOCIServiceController(t)
	for i, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			sel, port := "oci-churn-"+kind, int32(8100+i)
			spec := churnServiceSpec("oci-churn-"+kind, sel, port)
			spec.Annotations[annotations.OCILoadBalancerType.String()] = kind
			// The OCI health check annotations, in milliseconds, win over
			// the neutral ones.
			spec.Annotations[annotations.OCILBHealthCheckInterval.String()] = "1000"
			spec.Annotations[annotations.OCILBHealthCheckTimeout.String()] = "500"
			spec.Annotations[annotations.OCILBHealthCheckRetries.String()] = "2"
			np := nodePort(spec, port)
			var svc *corev1.Service
			c := churnCloud{
				join: func(t *testing.T, body string) churnNode {
					ip := nextIP()
					stop := serveStoppable(t, ip, np, body)
					return churnNode{in: ociLBNodeWith(t, sel, func(in *cloudsim.Instance) { in.PrivateIP = ip }), stop: stop}
				},
				target: func(ip string) (bool, bool) {
					lbs := ociLBsOf(svc.UID)
					if len(lbs) != 1 {
						return false, false
					}
					st, err := suite.sim.OCI().DataPlane(lbs[0].ID)
					return targetIn(st, err, ip)
				},
				terminate: func(t *testing.T, in cloudsim.Instance) {
					if err := suite.sim.SetInstanceState(in.ID, "TERMINATED"); err != nil {
						t.Fatal(err)
					}
				},
			}
			churnScenario(t, c, spec, port, func(s *corev1.Service) { svc = s }, nil)
		})
	}
}

// churnServiceSpec is a LoadBalancer Service whose health check notices a
// node going within a few seconds.
func churnServiceSpec(name, sel string, port int32) *corev1.Service {
	spec := lbServiceSpec(name, sel, port)
	spec.Annotations[annotations.HealthCheckInterval.String()] = "3s"
	spec.Annotations[annotations.HealthCheckHealthyThreshold.String()] = "2"
	spec.Annotations[annotations.HealthCheckUnhealthyThreshold.String()] = "2"
	return spec
}

// churnScenario runs 3 nodes behind the Service, then replaces each while
// the load runs, and checks that no request failed. before, if set, runs
// before replacement i starts.
func churnScenario(t *testing.T, c churnCloud, spec *corev1.Service, port int32, created func(*corev1.Service), before func(t *testing.T, i int)) {
	t.Helper()
	var nodes []churnNode
	for i := range 3 {
		nodes = append(nodes, c.join(t, fmt.Sprintf("node-%d", i+1)))
	}
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 90*time.Second)
	svc = getService(t, svc)
	created(svc)
	addr := fmt.Sprintf("%s:%d", vip, port)
	waitAnswers(t, "http://"+addr+"/", 60*time.Second, "node-1", "node-2", "node-3")

	load := traffic.Start(traffic.Options{Addrs: []string{addr}})
	begin := time.Now()
	for i, old := range nodes {
		if before != nil {
			before(t, i)
		}
		repl := replaceNode(t, c, old, fmt.Sprintf("node-%d", 4+i))
		t.Logf("replaced %s with %s after %s: %s", old.in.PrivateIP, repl.in.PrivateIP, time.Since(begin).Round(time.Second), load.Counts())
	}
	counts := load.Stop()
	t.Logf("3 nodes replaced in %s: %s", time.Since(begin).Round(time.Second), counts)
	if counts.RequestsFailed != 0 {
		t.Errorf("requests failed while nodes were replaced: %s", counts)
	}
	if counts.Requests < 100 {
		t.Errorf("only %d requests: the load did not run", counts.Requests)
	}
}

// replaceNode replaces old the way the cluster autoscaler does, and
// returns the replacement (answering body).
func replaceNode(t *testing.T, c churnCloud, old churnNode, body string) churnNode {
	t.Helper()
	ip := old.in.PrivateIP
	// Surge: the replacement joins and takes traffic first.
	repl := c.join(t, body)
	waitFor(t, repl.in.PrivateIP+" in service", 60*time.Second, func() bool { _, in := c.target(repl.in.PrivateIP); return in })
	// The autoscaler's taint: kube-proxy's /healthz fails, the health
	// check takes the node out of service.
	setTaint(t, ip, true)
	waitFor(t, ip+" out of service after the taint", 30*time.Second, func() bool { _, in := c.target(ip); return !in })
	// Then the Node goes (the CCM drains and deregisters its target), then
	// the instance and its server.
	if err := suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), ip, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ip+" deregistered", 60*time.Second, func() bool { present, _ := c.target(ip); return !present })
	c.terminate(t, old.in)
	old.stop()
	return repl
}

// targetIn finds the target at ip in a data plane status: present, and in
// service (takes new connections).
func targetIn(st cloudsim.DataPlaneStatus, err error, ip string) (present, inService bool) {
	if err != nil {
		return false, false
	}
	for _, l := range st.Listeners {
		for _, tg := range l.Targets {
			if strings.HasPrefix(tg.Address, ip+":") {
				return true, tg.InService
			}
		}
	}
	return false, false
}

// serveStoppable is serve with a way to stop the server before the test
// ends: the node going away.
func serveStoppable(t *testing.T, ip string, port int32, body string) func() {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, body)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() { _ = srv.Close() }
	t.Cleanup(stop)
	return stop
}
