package clbops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// These tests run the operations against cloudsim with its data plane:
// traffic through the VIP, health checks, out-of-band changes. The other
// tests use clbEnv (cloudsim without the data plane, calls recorded).

const (
	simID  = "AKIDclbopstest"
	simKey = "clbops-test-key"
)

func startSim(t *testing.T) (*cloudsim.Sim, *clb.Client) {
	t.Helper()
	return startSimWith(t, func(*cloudsim.Options) {})
}

// startSimWith is startSim with options changed by mod.
func startSimWith(t *testing.T, mod func(*cloudsim.Options)) (*cloudsim.Sim, *clb.Client) {
	t.Helper()
	opts := cloudsim.Options{
		Latency:             cloudsim.ZeroLatency, // unit test: answers at once
		HealthCheckInterval: 200 * time.Millisecond,
		VIPRange:            "127.241.0.1-127.241.0.200",
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{simID: simKey},
			TaskLatency: 20 * time.Millisecond,
		},
	}
	mod(&opts)
	sim := cloudsim.New(opts)
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	client, err := clb.NewClient(common.NewCredential(simID, simKey), "ap-guangzhou", cpf)
	if err != nil {
		t.Fatal(err)
	}
	return sim, client
}

// backend starts an HTTP server standing in for a node's NodePort.
func backend(t *testing.T, ip, name string) int {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s (loopback aliases unavailable): %v", ip, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

func simOps(client *clb.Client) *Ops {
	return New(client, Config{VpcID: testVPC, Timing: Timing{
		TaskPoll: 5 * time.Millisecond, TaskPollMax: 20 * time.Millisecond, TaskTimeout: 10 * time.Second,
		RetryBackoff: 5 * time.Millisecond, RetryBackoffMax: 20 * time.Millisecond, RetryTimeout: 5 * time.Second,
	}})
}

func writes(calls map[string]map[string]int) []string {
	var out []string
	for action, byCode := range calls {
		if strings.HasPrefix(action, "Describe") {
			continue
		}
		for code, n := range byCode {
			out = append(out, fmt.Sprintf("%s:%s=%d", action, code, n))
		}
	}
	slices.Sort(out)
	return out
}

func TestAgainstCloudsim(t *testing.T) {
	sim, client := startSim(t)
	simCLB := sim.Tencent().CLB()
	ops := simOps(client)
	ctx := context.Background()

	// Two "nodes" on loopback addresses, each serving the same NodePort.
	ips := []string{"127.0.77.1", "127.0.77.2"}
	port := backend(t, ips[0], "node-1")
	ln2, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ips[1], port))
	if err != nil {
		t.Skipf("port %d taken on %s", port, ips[1])
	}
	srv2 := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "node-2") })}
	go func() { _ = srv2.Serve(ln2) }()
	t.Cleanup(func() { _ = srv2.Close() })
	for i, ip := range ips {
		if _, err := sim.AddInstances(cloudsim.Instance{ID: fmt.Sprintf("ins-clbops0%d", i+1), PrivateIP: ip, VpcID: testVPC}); err != nil {
			t.Fatal(err)
		}
	}

	spec := testSpec(withBackends("ins-clbops01", "ins-clbops02"), func(s *Desired) {
		s.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 8080, NodePort: int32(port)}, {Protocol: lbspec.UDP, Port: 5353, NodePort: int32(port)}}
	})
	st, err := ops.Ensure(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Ingress) != 1 || st.Ingress[0].IP == "" {
		t.Fatalf("status = %+v", st)
	}
	vip := st.Ingress[0].IP

	// Traffic through the VIP reaches both nodes (round robin).
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 2 && time.Now().Before(deadline) {
		if body, err := get(fmt.Sprintf("http://%s:8080/", vip)); err == nil {
			seen[body] = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !seen["node-1"] || !seen["node-2"] {
		t.Fatalf("answers through the VIP = %v, want node-1 and node-2", seen)
	}

	// An unchanged resync writes nothing.
	sim.ResetCalls()
	if _, err := ops.Ensure(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if w := writes(sim.Calls()); len(w) != 0 {
		t.Errorf("unchanged resync wrote: %v", w)
	}

	// Health check to a healthCheckNodePort, a node removed, session affinity.
	hcPort := backend(t, ips[0], "healthz")
	changed := testSpec(withBackends("ins-clbops01"), func(s *Desired) {
		s.Listeners = spec.Listeners
		s.HealthCheck.Protocol, s.HealthCheck.Port = lbspec.HealthCheckHTTP, int32(hcPort)
		s.SessionAffinity = lbspec.SessionAffinity{ClientIP: true, Timeout: 10 * time.Minute}
	})
	if _, err := ops.Ensure(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if d, err := ops.Drift(ctx, changed); err != nil || d != nil {
		t.Errorf("after the change: drift %v, err %v", d, err)
	}

	// Drift: a listener deleted behind our back is found and repaired.
	lbs := simCLB.LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("CLBs = %d, want 1", len(lbs))
	}
	var tcpID string
	for _, l := range lbs[0].Listeners {
		if l.Protocol == "TCP" {
			tcpID = l.ID
		}
	}
	if err := simCLB.DeleteListener(lbs[0].ID, tcpID); err != nil {
		t.Fatal(err)
	}
	d, err := ops.Drift(ctx, changed)
	if err != nil || len(d) != 1 || d[0] != "listener TCP-8080 missing" {
		t.Fatalf("drift = %v, err %v", d, err)
	}
	if _, err := ops.Ensure(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if body, err := getWithin(fmt.Sprintf("http://%s:8080/", vip), 10*time.Second); err != nil || body != "node-1" {
		t.Errorf("after repair: %q, %v", body, err)
	}

	// Deletion.
	if err := ops.Delete(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if n := len(simCLB.LoadBalancers()); n != 0 {
		t.Errorf("CLBs after delete = %d", n)
	}
}

func TestAdoptAgainstCloudsim(t *testing.T) {
	sim, client := startSim(t)
	ops := simOps(client)
	ctx := context.Background()
	existing, err := sim.Tencent().CLB().CreateLoadBalancer(tencent.CLBSpec{Name: "team-lb", VpcID: testVPC,
		Listeners: []tencent.CLBListenerSpec{{Name: "legacy", Protocol: "TCP", Port: 9000}}})
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec(withAdopt(existing.ID), withBackends(), onlyTCP80)
	if _, err := ops.Ensure(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := ops.Delete(ctx, spec); err != nil {
		t.Fatal(err)
	}
	lb, err := sim.Tencent().CLB().LoadBalancer(existing.ID)
	if err != nil {
		t.Fatalf("the adopted CLB is gone: %v", err)
	}
	if len(lb.Listeners) != 1 || lb.Listeners[0].Name != "legacy" {
		t.Errorf("listeners = %+v, want only legacy", lb.Listeners)
	}
}

func TestRecreateAgainstCloudsim(t *testing.T) {
	sim, client := startSim(t)
	simCLB := sim.Tencent().CLB()
	ops := simOps(client)
	ctx := context.Background()
	spec := testSpec(withBackends(), onlyTCP80)
	if _, err := ops.Ensure(ctx, spec); err != nil {
		t.Fatal(err)
	}
	first := simCLB.LoadBalancers()[0].ID
	if err := simCLB.DeleteLoadBalancer(first); err != nil { // behind our back
		t.Fatal(err)
	}
	if d, err := ops.Drift(ctx, spec); err != nil || len(d) != 1 || d[0] != "load balancer missing" {
		t.Fatalf("drift = %v, err %v", d, err)
	}
	if _, err := ops.Ensure(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if lbs := simCLB.LoadBalancers(); len(lbs) != 1 || lbs[0].ID == first {
		t.Fatalf("CLBs = %+v, want one new CLB", lbs)
	}
}

func get(url string) (string, error) {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func getWithin(url string, d time.Duration) (string, error) {
	deadline := time.Now().Add(d)
	for {
		body, err := get(url)
		if err == nil || time.Now().After(deadline) {
			return body, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Nodes whose security group admits nothing: with LoadBalancerPassToTarget
// (our default) the CLB's traffic reaches them; without, the nodes' group
// drops the clients and the VIP's health checks.
func TestPassToTargetAgainstCloudsim(t *testing.T) {
	sim, client := startSim(t)
	ops := simOps(client)
	ctx := context.Background()
	port := backend(t, "127.0.77.11", "node")
	sg, err := sim.Tencent().SecurityGroups().Create(tencent.SecurityGroup{Name: "nodes-closed"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.AddInstances(cloudsim.Instance{ID: "ins-clbops11", PrivateIP: "127.0.77.11", VpcID: testVPC, SecurityGroupIDs: []string{sg.ID}}); err != nil {
		t.Fatal(err)
	}
	spec := func(pass bool) *Desired {
		return testSpec(withBackends("ins-clbops11"), withPassToTarget(pass), func(s *Desired) {
			s.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 8080, NodePort: int32(port)}}
			s.HealthCheck.Interval = 3 * time.Second
		})
	}
	st, err := ops.Ensure(ctx, spec(true))
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:8080/", st.Ingress[0].IP)
	if body, err := getWithin(url, 10*time.Second); err != nil || body != "node" {
		t.Fatalf("with pass-to-target: %q, %v", body, err)
	}
	if _, err := ops.Ensure(ctx, spec(false)); err != nil {
		t.Fatal(err)
	}
	if lb := sim.Tencent().CLB().LoadBalancers()[0]; lb.PassToTarget {
		t.Fatal("LoadBalancerPassToTarget still on")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := get(url); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("traffic still flows with pass-to-target off and a node group that admits nothing")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := ops.Ensure(ctx, spec(true)); err != nil {
		t.Fatal(err)
	}
	if body, err := getWithin(url, 10*time.Second); err != nil || body != "node" {
		t.Fatalf("pass-to-target back on: %q, %v", body, err)
	}
}

// Reads that lag writes (cloudsim's read lag): DescribeLoadBalancers does
// not show the CLB CreateLoadBalancer just answered. That must not count
// as "its ClientToken belongs to a deleted CLB": the next token would make
// a second CLB for the Service. With read_lag_window the create asks to be
// retried until the CLB shows, and exactly one CLB is made; with the window
// at 0 (the trust-every-answer behavior) this test sees a duplicate.
func TestLaggingReadsMakeNoDuplicateAgainstCloudsim(t *testing.T) {
	// Without the window, the duplicate needs a retry before the new CLB is
	// visible: the lag is far longer than a starved test takes to retry
	// (with 2 s, a loaded CI machine once retried after it and found the
	// CLB). With the window, a short lag keeps the test short.
	for _, tc := range []struct {
		name          string
		window, lag   time.Duration
		wantDuplicate bool
	}{
		{name: "read lag window", window: 30 * time.Second, lag: 2 * time.Second},
		{name: "no window", window: 0, lag: 20 * time.Second, wantDuplicate: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, client := startSimWith(t, func(o *cloudsim.Options) { o.ReadLag = tc.lag })
			ops := simOps(client)
			ops.readLagWindow = tc.window
			spec := testSpec(withBackends(), onlyTCP80)
			deadline := time.Now().Add(15 * time.Second)
			for {
				_, err := ops.Ensure(context.Background(), spec)
				if err == nil || (tc.wantDuplicate && len(sim.Tencent().CLB().LoadBalancers()) > 1) {
					break
				}
				// The service controller retries every error; with the window the
				// only one is a RetryError while the new one is not visible.
				var retry *api.RetryError
				if (tc.window > 0 && !errors.As(err, &retry)) || time.Now().After(deadline) {
					t.Fatalf("Ensure: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got := len(sim.Tencent().CLB().LoadBalancers()); (got > 1) != tc.wantDuplicate || got == 0 {
				t.Fatalf("%d CLBs for one Service; want a duplicate: %v", got, tc.wantDuplicate)
			}
		})
	}
}
