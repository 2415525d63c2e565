package oci

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// backend is a stand-in node: an HTTP server on a 127.0.x.y address that
// answers its name, and /healthz for the health check.
func backend(t *testing.T, ip, name string) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s (loopback aliases unavailable): %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, name)
	}))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return netip.MustParseAddrPort(ln.Addr().String())
}

func trafficEnv(t *testing.T) *testEnv {
	plane, err := dataplane.New(dataplane.Config{HealthCheckInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plane.Close)
	// The default security list admits SSH only: open it, as a user would
	// for a load balancer and its backends in the default subnet.
	return newPlaneEnv(t, plane, Options{WorkRequestLatency: 20 * time.Millisecond,
		Network: NetworkSeed{SecurityLists: []SecurityList{openList(DefaultSecurityListID, DefaultVCNID)}}}, core.Config{})
}

// openList is a security list that admits everything, both ways.
func openList(id, vcn string) SecurityList {
	return SecurityList{ID: id, VCNID: vcn,
		IngressSecurityRules: []ocicore.IngressSecurityRule{{Protocol: common.String("all"), Source: common.String("0.0.0.0/0")}},
		EgressSecurityRules:  []ocicore.EgressSecurityRule{{Protocol: common.String("all"), Destination: common.String("0.0.0.0/0")}}}
}

func get(url string) (string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestTrafficThroughLoadBalancerVIP(t *testing.T) {
	e := trafficEnv(t)
	be := backend(t, "127.0.3.1", "node-a")
	d := lbDetails("traffic")
	d.BackendSets["TCP-80"] = loadbalancer.BackendSetDetails{
		Policy:        common.String("ROUND_ROBIN"),
		HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("HTTP"), UrlPath: common.String("/healthz"), ReturnCode: common.Int(200)},
		Backends:      []loadbalancer.BackendDetails{{IpAddress: common.String(be.Addr().String()), Port: common.Int(int(be.Port()))}},
	}
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	wr := waitLBWorkRequest(t, c, *created.OpcWorkRequestId)
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: wr.LoadBalancerId})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:80/", *got.IpAddresses[0].IpAddress)
	eventually(t, 5*time.Second, func() error {
		body, err := get(url)
		if err == nil && body != "node-a" {
			return errorf("answer %q", body)
		}
		return err
	})
	eventually(t, 5*time.Second, func() error {
		h, err := c.GetBackendSetHealth(ctx(t), loadbalancer.GetBackendSetHealthRequest{LoadBalancerId: wr.LoadBalancerId, BackendSetName: common.String("TCP-80")})
		if err != nil {
			return err
		}
		if h.Status != loadbalancer.BackendSetHealthStatusOk {
			return errorf("health %s", h.Status)
		}
		return nil
	})

	// Deleting the load balancer stops its traffic.
	del, err := c.DeleteLoadBalancer(ctx(t), loadbalancer.DeleteLoadBalancerRequest{LoadBalancerId: wr.LoadBalancerId})
	if err != nil {
		t.Fatal(err)
	}
	waitLBWorkRequest(t, c, *del.OpcWorkRequestId)
	if _, err := get(url); err == nil {
		t.Fatal("the VIP still answers after the delete")
	}
}

func TestTrafficThroughNLBToTargetInstance(t *testing.T) {
	e := trafficEnv(t)
	be := backend(t, "127.0.3.2", "node-b")
	node := e.addInstances(core.Instance{Name: "node-b", PrivateIP: be.Addr().String()})[0]
	d := nlbDetails("traffic", nlb.Backend{TargetId: common.String(node.OCID), Port: common.Int(int(be.Port()))})
	d.BackendSets["TCP-80"] = nlb.BackendSetDetails{
		Policy:        nlb.NetworkLoadBalancingPolicyFiveTuple,
		HealthChecker: &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsTcp},
		Backends:      d.BackendSets["TCP-80"].Backends,
	}
	c := e.nlb()
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
	got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: created.Id})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:80/", nlbPublicIP(t, got.IpAddresses))
	eventually(t, 5*time.Second, func() error {
		body, err := get(url)
		if err == nil && body != "node-b" {
			return errorf("answer %q", body)
		}
		return err
	})
	st, err := e.d.DataPlane(*created.Id)
	if err != nil || len(st.Listeners) != 1 || st.Listeners[0].HealthyTargets != 1 {
		t.Fatalf("data plane: %+v %v", st, err)
	}
}

func TestUDPThroughNLB(t *testing.T) {
	e := trafficEnv(t)
	pc, err := net.ListenPacket("udp", "127.0.3.3:0")
	if err != nil {
		t.Skipf("no loopback alias: %v", err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(append([]byte("echo:"), buf[:n]...), from)
		}
	}()
	be := netip.MustParseAddrPort(pc.LocalAddr().String())
	d := nlbDetails("udp")
	d.BackendSets = map[string]nlb.BackendSetDetails{"UDP-53": {
		Policy:        nlb.NetworkLoadBalancingPolicyTwoTuple,
		HealthChecker: &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsUdp, RequestData: []byte("ping"), ResponseData: []byte("echo:ping")},
		Backends:      []nlb.Backend{{IpAddress: common.String(be.Addr().String()), Port: common.Int(int(be.Port()))}},
	}}
	d.Listeners = map[string]nlb.ListenerDetails{"UDP-53": {
		Name: common.String("UDP-53"), DefaultBackendSetName: common.String("UDP-53"), Port: common.Int(53), Protocol: nlb.ListenerProtocolsUdp,
	}}
	c := e.nlb()
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
	got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: created.Id})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		conn, err := net.Dial("udp", net.JoinHostPort(nlbPublicIP(t, got.IpAddresses), "53"))
		if err != nil {
			return err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := conn.Write([]byte("hi")); err != nil {
			return err
		}
		buf := make([]byte, 64)
		n, err := conn.Read(buf)
		if err != nil {
			return err
		}
		if string(buf[:n]) != "echo:hi" {
			return errorf("answer %q", buf[:n])
		}
		return nil
	})
}
