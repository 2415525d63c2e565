package oci

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// TestLBListenerProxyProtocolValidation: backendTcpProxyProtocolVersion is
// 1 or 2, and the PPv2 options need version 2; a refused change is refused
// at once (400) and leaves the listener as it was.
func TestLBListenerProxyProtocolValidation(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbDetails("pp", "10.0.0.5")})
	if err != nil {
		t.Fatal(err)
	}
	lbID := waitLBWorkRequest(t, c, *created.OpcWorkRequestId).LoadBalancerId
	authority := []loadbalancer.ConnectionConfigurationBackendTcpProxyProtocolOptionsEnum{"PP2_TYPE_AUTHORITY"}
	tests := []struct {
		name    string
		version *int
		options []loadbalancer.ConnectionConfigurationBackendTcpProxyProtocolOptionsEnum
		want    int // the version stored; -1: refused
	}{
		{"version 1", common.Int(1), nil, 1},
		{"version 2 with the authority", common.Int(2), authority, 2},
		{"no version", nil, nil, 0},
		{"version 0", common.Int(0), nil, -1},
		{"version 3", common.Int(3), nil, -1},
		{"authority with version 1", common.Int(1), authority, -1},
		{"unknown option", common.Int(2), []loadbalancer.ConnectionConfigurationBackendTcpProxyProtocolOptionsEnum{"PP2_TYPE_SSL"}, -1},
	}
	stored := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.UpdateListener(ctx(t), loadbalancer.UpdateListenerRequest{LoadBalancerId: lbID, ListenerName: common.String("TCP-80"),
				UpdateListenerDetails: loadbalancer.UpdateListenerDetails{DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80),
					Protocol: common.String("TCP"), ConnectionConfiguration: &loadbalancer.ConnectionConfiguration{IdleTimeout: common.Int64(300),
						BackendTcpProxyProtocolVersion: tt.version, BackendTcpProxyProtocolOptions: tt.options}}})
			if tt.want < 0 {
				wantErr(t, err, 400, CodeInvalidParameter)
			} else {
				if err != nil {
					t.Fatal(err)
				}
				waitLBWorkRequest(t, c, *resp.OpcWorkRequestId)
				stored = tt.want
			}
			got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: lbID})
			if err != nil {
				t.Fatal(err)
			}
			if v := lbProxyProtocol(got.Listeners["TCP-80"]); v != stored {
				t.Errorf("stored version %d, want %d", v, stored)
			}
		})
	}
}

// TestProxyProtocolThroughVIP: with proxy protocol on, the backend reads
// the header first and finds the client's own address in it (the client is
// bound to 127.0.24.9), then the client's bytes: Load Balancer version 1
// and 2, Network Load Balancer isPpv2Enabled (version 2); turning it off
// sends the bytes alone.
func TestProxyProtocolThroughVIP(t *testing.T) {
	e := trafficEnv(t)
	be := proxyEchoBackend(t, "127.0.24.1")
	client := netip.MustParseAddr("127.0.24.9")

	t.Run("lb", func(t *testing.T) {
		c := e.lb()
		d := lbDetails("pp-traffic")
		d.BackendSets["TCP-80"] = loadbalancer.BackendSetDetails{
			Policy:        common.String("ROUND_ROBIN"),
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(int(be.Port()))},
			Backends:      []loadbalancer.BackendDetails{{IpAddress: common.String(be.Addr().String()), Port: common.Int(int(be.Port()))}},
		}
		d.Listeners["TCP-80"] = loadbalancer.ListenerDetails{DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: common.String("TCP"),
			ConnectionConfiguration: &loadbalancer.ConnectionConfiguration{IdleTimeout: common.Int64(300), BackendTcpProxyProtocolVersion: common.Int(1)}}
		created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
		if err != nil {
			t.Fatal(err)
		}
		lbID := waitLBWorkRequest(t, c, *created.OpcWorkRequestId).LoadBalancerId
		got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: lbID})
		if err != nil {
			t.Fatal(err)
		}
		vip := netip.AddrPortFrom(netip.MustParseAddr(*got.IpAddresses[0].IpAddress), 80)
		for _, v := range []int{1, 2, 0} {
			if v != 1 {
				cc := &loadbalancer.ConnectionConfiguration{IdleTimeout: common.Int64(300)}
				if v != 0 {
					cc.BackendTcpProxyProtocolVersion = common.Int(v)
				}
				resp, err := c.UpdateListener(ctx(t), loadbalancer.UpdateListenerRequest{LoadBalancerId: lbID, ListenerName: common.String("TCP-80"),
					UpdateListenerDetails: loadbalancer.UpdateListenerDetails{DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80),
						Protocol: common.String("TCP"), ConnectionConfiguration: cc}})
				if err != nil {
					t.Fatal(err)
				}
				waitLBWorkRequest(t, c, *resp.OpcWorkRequestId)
			}
			expectProxied(t, client, vip, v)
		}
	})

	t.Run("nlb", func(t *testing.T) {
		c := e.nlb()
		d := nlbDetails("pp-traffic", nlb.Backend{IpAddress: common.String(be.Addr().String()), Port: common.Int(int(be.Port()))})
		d.BackendSets["TCP-80"] = nlb.BackendSetDetails{Policy: nlb.NetworkLoadBalancingPolicyFiveTuple,
			HealthChecker: &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsTcp}, Backends: d.BackendSets["TCP-80"].Backends}
		l := d.Listeners["TCP-80"]
		l.IsPpv2Enabled = common.Bool(true)
		d.Listeners["TCP-80"] = l
		created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: d})
		if err != nil {
			t.Fatal(err)
		}
		waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
		got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: created.Id})
		if err != nil {
			t.Fatal(err)
		}
		if l := got.Listeners["TCP-80"]; l.IsPpv2Enabled == nil || !*l.IsPpv2Enabled {
			t.Fatalf("listener %+v: isPpv2Enabled not stored", l)
		}
		vip := netip.AddrPortFrom(netip.MustParseAddr(nlbPublicIP(t, got.IpAddresses)), 80)
		expectProxied(t, client, vip, 2)

		// An update that leaves isPpv2Enabled out keeps it; false turns it off.
		for _, step := range []struct {
			ppv2 *bool
			want int
		}{{nil, 2}, {common.Bool(false), 0}} {
			resp, err := c.UpdateListener(ctx(t), nlb.UpdateListenerRequest{NetworkLoadBalancerId: created.Id, ListenerName: common.String("TCP-80"),
				UpdateListenerDetails: nlb.UpdateListenerDetails{IsPpv2Enabled: step.ppv2, TcpIdleTimeout: common.Int(300)}})
			if err != nil {
				t.Fatal(err)
			}
			waitNLBWorkRequest(t, c, *resp.OpcWorkRequestId)
			expectProxied(t, client, vip, step.want)
		}
	})
}

// expectProxied waits until a connection from client to vip reaches the
// backend with a PROXY header of version v naming the client (v 0: no
// header), and the payload after it.
func expectProxied(t *testing.T, client netip.Addr, vip netip.AddrPort, v int) {
	t.Helper()
	eventually(t, 5*time.Second, func() error {
		got, from, err := sendFrom(client, vip, "hello")
		if err != nil {
			return err
		}
		want := fmt.Sprintf("v%d %s -> %s: hello", v, from, vip)
		if v == 0 {
			want = "no header: hello"
		}
		if got != want {
			return errorf("backend saw %q, want %q", got, want)
		}
		return nil
	})
}

// proxyEchoBackend is a stand-in node that reads a PROXY header, if one
// comes, and answers what it read and the first line after it. A health
// check's bare connect gets no answer, which is fine for a TCP check.
func proxyEchoBackend(t *testing.T, ip string) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s (loopback aliases unavailable): %v", ip, err)
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
				head := "no header"
				if b, err := r.Peek(1); err == nil && (b[0] == 'P' || b[0] == '\r') {
					v, src, dst, err := dataplane.ReadProxyHeader(r)
					head = fmt.Sprintf("v%d %s -> %s", v, src, dst)
					if err != nil {
						head = "bad header: " + err.Error()
					}
				}
				line, err := r.ReadString('\n')
				if err != nil {
					return // a health check's connect
				}
				fmt.Fprintf(c, "%s: %s", head, strings.TrimSpace(line))
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

// sendFrom connects from src to dst, sends msg and a newline, and returns
// the answer and the client's own address.
func sendFrom(src netip.Addr, dst netip.AddrPort, msg string) (string, netip.AddrPort, error) {
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))}
	c, err := d.Dial("tcp", dst.String())
	if err != nil {
		return "", netip.AddrPort{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\n", msg); err != nil {
		return "", netip.AddrPort{}, err
	}
	b, err := io.ReadAll(c)
	return string(b), netip.MustParseAddrPort(c.LocalAddr().String()), err
}
