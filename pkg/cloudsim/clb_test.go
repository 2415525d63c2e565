package cloudsim_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// simVIPs keeps this package's VIPs apart from other test packages'.
const simVIPs = "127.243.0.1-127.243.0.254"

func clbClient(t *testing.T, url string) *clb.Client {
	t.Helper()
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	c, err := clb.NewClient(common.NewCredential(secretID, secretKey), "ap-guangzhou", cpf)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCLBAdmin drives the CLB admin endpoints through AdminClient: an
// existing CLB with a foreign listener (adoption), drift by deleting a
// listener, the data-plane view, and a task fault.
func TestCLBAdmin(t *testing.T) {
	sim, url := start(t, cloudsim.Options{VIPRange: simVIPs, HealthCheckInterval: 50 * time.Millisecond, Tencent: cloudsim.TencentOptions{TaskLatency: -1}})
	ctx := context.Background()
	admin := &cloudsim.AdminClient{BaseURL: url}

	// A node serving on a "NodePort".
	ln, err := net.Listen("tcp", "127.0.43.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "foreign backend")
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	nodePort := ln.Addr().(*net.TCPAddr).Port
	nodes, err := admin.AddInstances(ctx, cloudsim.Instance{Name: "node-1", PrivateIP: "127.0.43.1", VpcID: "vpc-adopt001"})
	if err != nil {
		t.Fatal(err)
	}

	lb, err := admin.CreateCLB(ctx, tencent.CLBSpec{
		Name: "existing", VpcID: "vpc-adopt001", Tags: map[string]string{"owner": "someone-else"},
		Listeners: []tencent.CLBListenerSpec{{
			Name: "foreign", Protocol: "TCP", Port: 9000,
			Targets: []tencent.CLBTarget{{InstanceID: nodes[0].ID, Port: nodePort}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Status != 1 || lb.VIP == "" || len(lb.Listeners) != 1 || lb.Listeners[0].Targets[0].IP != "127.0.43.1" {
		t.Fatalf("created CLB: %+v", lb)
	}
	if _, err := admin.CreateCLB(ctx, tencent.CLBSpec{Type: "INTERNAL"}); err == nil || !strings.Contains(err.Error(), "MissingParameter") {
		t.Fatalf("an INTERNAL CLB without VPC: %v", err)
	}

	// The SDK sees it, and its foreign listener carries traffic.
	api := clbClient(t, url)
	req := clb.NewDescribeListenersRequest()
	req.LoadBalancerId = common.StringPtr(lb.ID)
	resp, err := api.DescribeListeners(req)
	if err != nil || len(resp.Response.Listeners) != 1 || *resp.Response.Listeners[0].ListenerName != "foreign" {
		t.Fatalf("DescribeListeners of the adopted CLB: %v %v", resp, err)
	}
	var body string
	deadline := time.Now().Add(5 * time.Second)
	for {
		body, err = get(fmt.Sprintf("http://%s:9000/", lb.VIP))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if body != "foreign backend" {
		t.Fatalf("GET through the foreign listener: %q %v", body, err)
	}
	dp, err := admin.CLBDataPlane(ctx, lb.ID)
	if err != nil || dp.VIP != lb.VIP || len(dp.Listeners) != 1 || dp.Listeners[0].HealthyTargets != 1 {
		t.Fatalf("data plane: %+v %v", dp, err)
	}

	// Out-of-band listener changes.
	added, err := admin.AddCLBListener(ctx, lb.ID, tencent.CLBListenerSpec{Protocol: "UDP", Port: 9000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AddCLBListener(ctx, lb.ID, tencent.CLBListenerSpec{Protocol: "TCP", Port: 9000}); err == nil ||
		!strings.Contains(err.Error(), "PortCheckFailed") {
		t.Fatalf("a second TCP:9000: %v", err)
	}
	if err := admin.DeleteCLBListener(ctx, lb.ID, added.ID); err != nil {
		t.Fatal(err)
	}
	var ae *cloudsim.AdminError
	if err := admin.DeleteCLBListener(ctx, lb.ID, added.ID); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Fatalf("deleting it again: %v", err)
	}
	all, err := admin.CLBs(ctx)
	if err != nil || len(all) != 1 || len(all[0].Listeners) != 1 || all[0].Tags["owner"] != "someone-else" {
		t.Fatalf("CLBs: %+v %v", all, err)
	}

	// A task fault set through the admin API.
	if err := admin.SetFault(ctx, cloudsim.Fault{Action: "DeleteLoadBalancer", ErrorRate: 1, FailTask: true}); err != nil {
		t.Fatal(err)
	}
	dreq := clb.NewDeleteLoadBalancerRequest()
	dreq.LoadBalancerIds = common.StringPtrs([]string{lb.ID})
	dresp, err := api.DeleteLoadBalancer(dreq)
	if err != nil {
		t.Fatal(err)
	}
	treq := clb.NewDescribeTaskStatusRequest()
	treq.TaskId = dresp.Response.RequestId
	tresp, err := api.DescribeTaskStatus(treq)
	if err != nil || *tresp.Response.Status != 1 {
		t.Fatalf("DescribeTaskStatus of a faulted delete: %v %v", tresp, err)
	}
	if _, err := sim.Tencent().CLB().LoadBalancer(lb.ID); err != nil {
		t.Fatalf("the CLB must survive a failed delete: %v", err)
	}
	if err := admin.DeleteCLB(ctx, lb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CLB(ctx, lb.ID); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Fatalf("CLB after DeleteCLB: %v", err)
	}
}

// TestCloseStopsDataPlane checks that Sim.Close closes the listeners, even
// for a Sim that was never started.
func TestCloseStopsDataPlane(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency, VIPRange: simVIPs})
	lb, err := sim.Tencent().CLB().CreateLoadBalancer(tencent.CLBSpec{Listeners: []tencent.CLBListenerSpec{{Protocol: "TCP", Port: 9100}}})
	if err != nil {
		t.Fatal(err)
	}
	if dp, err := sim.Tencent().CLB().DataPlane(lb.ID); err != nil || !dp.Listeners[0].Listening {
		t.Fatalf("the listener is not bound: %+v %v", dp, err)
	}
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	// Without targets the listener resets connections; once closed, nothing
	// listens and the connection is refused.
	c, err := net.DialTimeout("tcp", net.JoinHostPort(lb.VIP, "9100"), time.Second)
	if err == nil {
		c.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("dialing the listener after Close: %v", err)
	}
	if err := cloudsim.CheckVIPRange("10.0.0.1-10.0.0.0"); err == nil {
		t.Fatal("CheckVIPRange accepts a reversed range")
	}
}

func get(url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
