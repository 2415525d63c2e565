package tencent

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// testNode stands in for a Kubernetes node: a loopback address with an HTTP
// server on the "NodePort" that answers the node's name, a health server
// whose answer can be switched, and a UDP echo server.
type testNode struct {
	name, ip string
	web      *http.Server
	health   *http.Server
	udp      net.PacketConn
	ready    atomic.Bool
}

// startTestNodes starts one node per IP, all on the same ports (like a
// NodePort), and returns them with the ports.
func startTestNodes(t *testing.T, ips ...string) (nodes []*testNode, webPort, healthPort, udpPort int) {
	t.Helper()
	// listenAll binds the same port on every IP, retrying with another
	// port if one of them is taken.
	listenAll := func(network string) ([]io.Closer, int) {
		listen := func(addr string) (io.Closer, int, error) {
			if network == "udp" {
				pc, err := net.ListenPacket("udp", addr)
				if err != nil {
					return nil, 0, err
				}
				return pc, pc.LocalAddr().(*net.UDPAddr).Port, nil
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return nil, 0, err
			}
			return ln, ln.Addr().(*net.TCPAddr).Port, nil
		}
		for range 50 {
			first, port, err := listen(ips[0] + ":0")
			if err != nil {
				t.Fatal(err)
			}
			out := []io.Closer{first}
			for _, ip := range ips[1:] {
				c, _, err := listen(net.JoinHostPort(ip, strconv.Itoa(port)))
				if err != nil {
					break
				}
				out = append(out, c)
			}
			if len(out) == len(ips) {
				return out, port
			}
			for _, c := range out {
				c.Close()
			}
		}
		t.Fatal("no port is free on every node")
		return nil, 0
	}
	webLns, webPort := listenAll("tcp")
	healthLns, healthPort := listenAll("tcp")
	udpConns, udpPort := listenAll("udp")
	for i, ip := range ips {
		n := &testNode{name: fmt.Sprintf("node-%d", i+1), ip: ip}
		n.ready.Store(true)
		n.web = &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, n.name)
		})}
		n.health = &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !n.ready.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})}
		n.udp = udpConns[i].(net.PacketConn)
		go func() { _ = n.web.Serve(webLns[i].(net.Listener)) }()
		go func() { _ = n.health.Serve(healthLns[i].(net.Listener)) }()
		go func() {
			buf := make([]byte, 2048)
			for {
				k, from, err := n.udp.ReadFrom(buf)
				if err != nil {
					return
				}
				_, _ = n.udp.WriteTo(append([]byte(n.name+":"), buf[:k]...), from)
			}
		}()
		t.Cleanup(func() { n.web.Close(); n.health.Close(); n.udp.Close() })
		nodes = append(nodes, n)
	}
	return nodes, webPort, healthPort, udpPort
}

func httpGet(url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// targetHealth returns instance -> HealthStatusDetail for a listener.
func (e *clbEnv) targetHealth(t *testing.T, lbID, lisID string) map[string]string {
	t.Helper()
	req := clb.NewDescribeTargetHealthRequest()
	req.LoadBalancerIds = common.StringPtrs([]string{lbID})
	req.ListenerIds = common.StringPtrs([]string{lisID})
	resp, err := e.api.DescribeTargetHealth(req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, lb := range resp.Response.LoadBalancers {
		for _, l := range lb.Listeners {
			for _, r := range l.Rules {
				for _, th := range r.Targets {
					out[*th.TargetId] = *th.HealthStatusDetail
				}
			}
		}
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func TestCLBDataPlane(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{TaskLatency: 50 * time.Millisecond}, dataplane.Config{HealthCheckInterval: 40 * time.Millisecond})
	nodes, webPort, healthPort, udpPort := startTestNodes(t, "127.0.42.1", "127.0.42.2", "127.0.42.3")
	var ids []string
	for i, n := range nodes {
		id := fmt.Sprintf("ins-dpnode%02d", i+1)
		e.mustAdd(t, core.Instance{ID: id, Name: n.name, PrivateIP: n.ip, VpcID: clbTestVPC})
		ids = append(ids, id)
	}
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType, req.VpcId = common.StringPtr("OPEN"), common.StringPtr(clbTestVPC)
	cresp, err := e.api.CreateLoadBalancer(req)
	if err != nil {
		t.Fatal(err)
	}
	lbID := *cresp.Response.LoadBalancerIds[0]
	if st, _ := e.waitTask(t, *cresp.Response.RequestId); st != 0 {
		t.Fatal("create failed")
	}
	vip := *e.describeLB(t, lbID).LoadBalancerVips[0]

	// Listeners: TCP with the default TCP health check (thresholds 2), and
	// UDP with the default PING check.
	const tcpPort, udpLisPort = 18080, 18053
	lreq := clb.NewCreateListenerRequest()
	lreq.LoadBalancerId, lreq.Protocol, lreq.Ports = common.StringPtr(lbID), common.StringPtr("TCP"), []*int64{common.Int64Ptr(tcpPort)}
	lreq.HealthCheck = &clb.HealthCheck{HealthNum: common.Int64Ptr(2), UnHealthNum: common.Int64Ptr(2)}
	lresp, err := e.api.CreateListener(lreq)
	if err != nil {
		t.Fatal(err)
	}
	tcpLis := *lresp.Response.ListenerIds[0]
	e.waitTask(t, *lresp.Response.RequestId)
	lreq.Protocol, lreq.Ports, lreq.HealthCheck = common.StringPtr("UDP"), []*int64{common.Int64Ptr(udpLisPort)}, nil
	lresp, err = e.api.CreateListener(lreq)
	if err != nil {
		t.Fatal(err)
	}
	udpLis := *lresp.Response.ListenerIds[0]
	e.waitTask(t, *lresp.Response.RequestId)

	// The listener is bound but has no targets: connections are refused.
	url := fmt.Sprintf("http://%s:%d/", vip, tcpPort)
	if _, err := httpGet(url); err == nil {
		t.Fatal("a listener without targets must refuse connections")
	}

	breq := clb.NewBatchRegisterTargetsRequest()
	breq.LoadBalancerId = common.StringPtr(lbID)
	for _, id := range ids {
		breq.Targets = append(breq.Targets,
			&clb.BatchTarget{ListenerId: common.StringPtr(tcpLis), InstanceId: common.StringPtr(id), Port: common.Int64Ptr(int64(webPort))},
			&clb.BatchTarget{ListenerId: common.StringPtr(udpLis), InstanceId: common.StringPtr(id), Port: common.Int64Ptr(int64(udpPort))})
	}
	bresp, err := e.api.BatchRegisterTargets(breq)
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, *bresp.Response.RequestId)
	eventually(t, "3 healthy TCP targets", func() bool {
		h := e.targetHealth(t, lbID, tcpLis)
		return h[ids[0]] == "Alive" && h[ids[1]] == "Alive" && h[ids[2]] == "Alive"
	})

	// Round-robin over the three nodes.
	seen := map[string]int{}
	for range 6 {
		body, err := httpGet(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		seen[body]++
	}
	if seen["node-1"] != 2 || seen["node-2"] != 2 || seen["node-3"] != 2 {
		t.Fatalf("6 requests over 3 nodes: %v", seen)
	}

	// UDP echo through the VIP.
	c, err := net.Dial("udp", net.JoinHostPort(vip, strconv.Itoa(udpLisPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	n, err := c.Read(buf)
	if err != nil || !strings.HasSuffix(string(buf[:n]), ":hello") || !strings.HasPrefix(string(buf[:n]), "node-") {
		t.Fatalf("UDP echo through the VIP: %q %v", buf[:n], err)
	}

	// A stopped node is skipped once the health check marks it down.
	nodes[1].web.Close()
	nodes[1].health.Close()
	eventually(t, "node-2 marked Dead", func() bool { return e.targetHealth(t, lbID, tcpLis)[ids[1]] == "Dead" })
	for range 6 {
		body, err := httpGet(url)
		if err != nil {
			t.Fatalf("GET after node-2 stopped: %v", err)
		}
		if body == "node-2" {
			t.Fatal("traffic reached the stopped node")
		}
	}

	// externalTrafficPolicy Local: an HTTP check on the health port that
	// accepts 2xx only sends traffic to nodes that answer 200.
	nodes[2].ready.Store(false)
	mreq := clb.NewModifyListenerRequest()
	mreq.LoadBalancerId, mreq.ListenerId = common.StringPtr(lbID), common.StringPtr(tcpLis)
	mreq.HealthCheck = &clb.HealthCheck{
		CheckType: common.StringPtr("HTTP"), CheckPort: common.Int64Ptr(int64(healthPort)), HttpCheckPath: common.StringPtr("/healthz"),
		HttpCode: common.Int64Ptr(2), HttpVersion: common.StringPtr("HTTP/1.1"), HttpCheckDomain: common.StringPtr("node.local"),
		HttpCheckMethod: common.StringPtr("GET"),
	}
	mresp, err := e.api.ModifyListener(mreq)
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, *mresp.Response.RequestId)
	eventually(t, "node-3 Dead by its health port", func() bool {
		h := e.targetHealth(t, lbID, tcpLis)
		return h[ids[0]] == "Alive" && h[ids[2]] == "Dead"
	})
	for range 4 {
		if body, err := httpGet(url); err != nil || body != "node-1" {
			st, _ := e.clb.DataPlane(lbID)
			t.Fatalf("only node-1 is ready: got %q %v\n%s", body, err, mustJSON(st))
		}
	}

	// The admin view of the data plane.
	st, err := e.clb.DataPlane(lbID)
	if err != nil || st.VIP != vip || len(st.Listeners) != 2 || !st.Listeners[1].Listening || st.Listeners[0].HealthyTargets != 3 || st.Listeners[1].HealthyTargets != 1 {
		t.Fatalf("DataPlane: %+v %v", st, err)
	}

	// Deleting the listener closes its port.
	dreq := clb.NewDeleteListenerRequest()
	dreq.LoadBalancerId, dreq.ListenerId = common.StringPtr(lbID), common.StringPtr(tcpLis)
	dresp, err := e.api.DeleteListener(dreq)
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, *dresp.Response.RequestId)
	if _, err := httpGet(url); err == nil {
		t.Fatal("the deleted listener still answers")
	}
}
