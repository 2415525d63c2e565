package tencent

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// getFrom GETs url with the client's source bound to src, as a client at
// that address would.
func getFrom(src, url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestCLBSecurityGroupsCarryTraffic drives the data plane through the CLB
// and VPC APIs: the CLB's groups filter clients, the instances' groups
// filter clients and health checks unless LoadBalancerPassToTarget.
func TestCLBSecurityGroupsCarryTraffic(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{TaskLatency: 20 * time.Millisecond}, dataplane.Config{HealthCheckInterval: 40 * time.Millisecond})
	for action := range e.d.SecurityGroups().Actions() {
		e.core.SetRateLimit(action, 0)
	}
	cl, err := vpc.NewClient(common.NewCredential(testID, testKey), testRegion, clientProfile(e.env))
	if err != nil {
		t.Fatal(err)
	}
	const allowed, denied = "127.0.44.100", "127.0.44.101"
	nodes, webPort, _, _ := startTestNodes(t, "127.0.44.1")
	nodeSG := createSG(t, cl, "nodes") // no policy: drops everything
	e.mustAdd(t, core.Instance{ID: "ins-fwnode01", PrivateIP: nodes[0].ip, VpcID: clbTestVPC, SecurityGroupIDs: []string{nodeSG}})

	idle := func(id string) func() bool {
		return func() bool {
			lb, err := e.clb.LoadBalancer(id)
			return err == nil && lb.Status == 1 && lb.InOperation == ""
		}
	}
	lbID := e.createLB(t, func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerPassToTarget = common.BoolPtr(true) })
	eventually(t, "the CLB created", idle(lbID))
	lis := e.createListener(t, lbID, "TCP", 18181, func(r *clb.CreateListenerRequest) {
		r.HealthCheck = &clb.HealthCheck{HealthNum: common.Int64Ptr(2), UnHealthNum: common.Int64Ptr(2)}
	})
	eventually(t, "the listener created", idle(lbID))
	reg := clb.NewRegisterTargetsRequest()
	reg.LoadBalancerId, reg.ListenerId = common.StringPtr(lbID), common.StringPtr(lis)
	reg.Targets = []*clb.Target{{InstanceId: common.StringPtr("ins-fwnode01"), Port: common.Int64Ptr(int64(webPort))}}
	rresp, err := e.api.RegisterTargets(reg)
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, *rresp.Response.RequestId)
	vip := *e.describeLB(t, lbID).LoadBalancerVips[0]
	url := fmt.Sprintf("http://%s:18181/", vip)
	alive := func() bool { return e.targetHealth(t, lbID, lis)["ins-fwnode01"] == "Alive" }
	dead := func() bool { return e.targetHealth(t, lbID, lis)["ins-fwnode01"] == "Dead" }
	flows := func(src string) bool { body, err := getFrom(src, url); return err == nil && body == "node-1" }

	// Pass-to-target and no CLB group: the instance's group (which drops
	// everything) is not consulted, probes included.
	eventually(t, "the target Alive with pass-to-target", alive)
	if !flows(allowed) || !flows(denied) {
		t.Fatal("a CLB without security groups, with pass-to-target, must carry every client")
	}

	// A CLB group admitting one client.
	clbSG := createSG(t, cl, "clb")
	if err := addIngress(cl, clbSG, nil, "", pol("TCP", "18181", allowed+"/32", "ACCEPT")); err != nil {
		t.Fatal(err)
	}
	sreq := clb.NewSetLoadBalancerSecurityGroupsRequest()
	sreq.LoadBalancerId, sreq.SecurityGroups = common.StringPtr(lbID), common.StringPtrs([]string{clbSG})
	if _, err := e.api.SetLoadBalancerSecurityGroups(sreq); err != nil {
		t.Fatal(err)
	}
	if !flows(allowed) {
		t.Fatal("the client the CLB's group accepts is refused")
	}
	if flows(denied) {
		t.Fatal("a client no policy accepts got through (a group drops what it does not accept)")
	}
	// First match wins: a DROP in front of the ACCEPT closes it.
	if err := addIngress(cl, clbSG, common.Int64Ptr(0), "", pol("ALL", "", "127.0.44.0/24", "DROP")); err != nil {
		t.Fatal(err)
	}
	if flows(allowed) {
		t.Fatal("a DROP policy before the ACCEPT must win")
	}
	sreq.SecurityGroups = nil
	if _, err := e.api.SetLoadBalancerSecurityGroups(sreq); err != nil {
		t.Fatal(err)
	}

	// Pass-to-target off: the instance's group now filters clients and the
	// CLB's health checks, which come from the VIP.
	mreq := clb.NewModifyLoadBalancerAttributesRequest()
	mreq.LoadBalancerId, mreq.LoadBalancerPassToTarget = common.StringPtr(lbID), common.BoolPtr(false)
	mresp, err := e.api.ModifyLoadBalancerAttributes(mreq)
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, *mresp.Response.RequestId)
	if e.describeLB(t, lbID).LoadBalancerPassToTarget == nil || *e.describeLB(t, lbID).LoadBalancerPassToTarget {
		t.Fatal("LoadBalancerPassToTarget still true")
	}
	eventually(t, "the target Dead: the instance's group drops the VIP's probes", dead)
	if flows(allowed) {
		t.Fatal("traffic through a Dead target")
	}
	port := fmt.Sprint(webPort)
	if err := addIngress(cl, nodeSG, nil, "", pol("TCP", port, vip, "ACCEPT"), pol("TCP", port, allowed, "ACCEPT")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the target Alive once the VIP is accepted", alive)
	if !flows(allowed) {
		t.Fatal("the client the instance's group accepts is refused")
	}
	if flows(denied) {
		t.Fatal("the instance's group must filter clients when pass-to-target is off")
	}
	st, _ := e.clb.DataPlane(lbID)
	if st.Listeners[0].Denied == 0 {
		t.Fatalf("data plane status counts no denied flow: %+v", st.Listeners[0])
	}

	// A group referencing the CLB's group stands for the CLB's VIP.
	vipSG := createSG(t, cl, "clb-members")
	sreq.SecurityGroups = common.StringPtrs([]string{vipSG})
	if _, err := e.api.SetLoadBalancerSecurityGroups(sreq); err != nil {
		t.Fatal(err)
	}
	if err := addIngress(cl, vipSG, nil, "", pol("ALL", "", "0.0.0.0/0", "ACCEPT")); err != nil {
		t.Fatal(err)
	}
	rep := vpc.NewReplaceSecurityGroupPoliciesRequest()
	rep.SecurityGroupId = common.StringPtr(nodeSG)
	byRef := &vpc.SecurityGroupPolicy{PolicyIndex: common.Int64Ptr(0), Protocol: common.StringPtr("TCP"), Port: common.StringPtr(port),
		SecurityGroupId: common.StringPtr(vipSG), Action: common.StringPtr("ACCEPT")}
	rep.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Ingress: []*vpc.SecurityGroupPolicy{byRef}}
	if _, err := cl.ReplaceSecurityGroupPolicies(rep); err != nil {
		t.Fatal(err)
	}
	// The probes still pass (the VIP is in vipSG), and so does the client
	// accepted by the second policy.
	time.Sleep(200 * time.Millisecond)
	if !alive() || !flows(allowed) {
		t.Fatal("a policy naming the CLB's security group must accept the CLB's VIP")
	}
}
