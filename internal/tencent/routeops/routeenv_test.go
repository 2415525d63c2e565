package routeops

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/internal/tencent/cvmlookup"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// routeEnv is the route table API the Manager is tested against: cloudsim
// in-process, over the real SDK and real HTTP (signed calls, the cloud's
// validation and error codes, rate limits and faults), with every call the
// backends make recorded and open to hooks, so that a test can interleave
// its own writes with a call in flight. The test's own reads and
// out-of-band changes go through cloudsim's Go API and are not recorded.
type routeEnv struct {
	t   *testing.T
	sim *cloudsim.Sim
	url string

	mu        sync.Mutex
	calls     []recordedCall
	onRequest func(action string) // before every call reaches cloudsim
	onAnswer  map[string]func()   // once, after cloudsim answered the action
	lose      map[string]int      // answers of the action to lose
}

// recordedCall is one API call: its action and request body.
type recordedCall struct {
	action string
	body   []byte
}

// envNodeIPs are the instances of simVPC every env starts with: the
// gateways of the routes the tests create (CreateClusterRoute checks that
// the gateway is an instance's private IP). The other gateways of the
// tests' tables belong to no instance unless the test adds one: a deleted
// node's routes (released gateways), or another tool's.
var envNodeIPs = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.10"}

// newRouteEnv starts cloudsim with the TKE cluster route table simTable
// (10.244.0.0/16 in simVPC) holding routes.
func newRouteEnv(t *testing.T, routes ...Route) *routeEnv {
	t.Helper()
	return newRouteEnvWith(t, func(o *cloudsim.Options) { o.Tencent.RouteTables = []tencent.RouteTable{envTable(routes...)} })
}

// newRouteEnvWith starts cloudsim with no route table, its options then
// changed by mod.
func newRouteEnvWith(t *testing.T, mod func(*cloudsim.Options)) *routeEnv {
	t.Helper()
	opts := cloudsim.Options{Latency: cloudsim.ZeroLatency, Region: simRegion,
		DisableDataPlane: true,
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{simID: simKey},
		},
	}
	if mod != nil {
		mod(&opts)
	}
	e := &routeEnv{t: t, sim: cloudsim.New(opts), onAnswer: map[string]func(){}, lose: map[string]int{}}
	url, err := e.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.sim.Close() })
	e.url = url
	e.addInstances(envNodeIPs...)
	return e
}

func envTable(routes ...Route) tencent.RouteTable {
	table := simTableWith()
	for _, r := range routes {
		table.Routes = append(table.Routes, clusterRoute(r))
	}
	return table
}

func clusterRoute(r Route) tencent.ClusterRoute {
	return tencent.ClusterRoute{DestinationCIDR: r.Destination.String(), GatewayIP: r.Gateway.String()}
}

// addInstances adds running instances of simVPC with these private IPs.
func (e *routeEnv) addInstances(ips ...string) []cloudsim.Instance {
	e.t.Helper()
	in := make([]cloudsim.Instance, 0, len(ips))
	for _, ip := range ips {
		in = append(in, cloudsim.Instance{PrivateIP: ip, VpcID: simVPC})
	}
	added, err := e.sim.AddInstances(in...)
	if err != nil {
		e.t.Fatal(err)
	}
	return added
}

// tke is the TKE backend for simTable, its calls recorded.
func (e *routeEnv) tke() *TKE {
	e.t.Helper()
	cl, err := tke.NewClient(common.NewCredential(simID, simKey), simRegion, simProfile(e.url))
	if err != nil {
		e.t.Fatal(err)
	}
	cl.WithHttpTransport(e)
	return NewTKE(cl, simTable, simVPC)
}

// vpcClient is a vpc client whose calls are recorded.
func (e *routeEnv) vpcClient() *vpc.Client {
	e.t.Helper()
	cl, err := vpc.NewClient(common.NewCredential(simID, simKey), simRegion, simProfile(e.url))
	if err != nil {
		e.t.Fatal(err)
	}
	cl.WithHttpTransport(e)
	return cl
}

// gateways is the provider's Gateways (CVM DescribeInstances of simVPC),
// its calls recorded.
func (e *routeEnv) gateways() Gateways {
	e.t.Helper()
	cl, err := cvm.NewClient(common.NewCredential(simID, simKey), simRegion, simProfile(e.url))
	if err != nil {
		e.t.Fatal(err)
	}
	cl.WithHttpTransport(e)
	return cvmlookup.New(cl, simVPC)
}

// errAnswerLost is the transport error of a call whose answer was lost.
var errAnswerLost = errors.New("routeenv: connection reset after the request was sent")

// RoundTrip records the call, runs the hooks and passes it on.
func (e *routeEnv) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	action := r.Header.Get("X-TC-Action")
	e.mu.Lock()
	e.calls = append(e.calls, recordedCall{action: action, body: body})
	before := e.onRequest
	e.mu.Unlock()
	if before != nil {
		before(action)
	}

	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	// Read the whole answer: what cloudsim said is settled before a hook
	// runs, whatever the hook then changes.
	answer, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))

	e.mu.Lock()
	after := e.onAnswer[action]
	delete(e.onAnswer, action)
	lost := e.lose[action] > 0
	if lost {
		e.lose[action]--
	}
	e.mu.Unlock()
	if after != nil {
		after()
	}
	if lost {
		return nil, errAnswerLost
	}
	return resp, nil
}

// beforeEach makes f run before each call reaches cloudsim (nil: none).
func (e *routeEnv) beforeEach(f func(action string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onRequest = f
}

// afterNext makes f run once cloudsim has answered the next call of action,
// before the answer reaches the caller: the call is in flight meanwhile.
func (e *routeEnv) afterNext(action string, f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onAnswer[action] = f
}

// loseNextAnswer makes the next call of action reach cloudsim, which
// carries it out, and its answer never reach the caller.
func (e *routeEnv) loseNextAnswer(action string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lose[action]++
}

// fail makes the next times calls of action answer code (0: every call).
func (e *routeEnv) fail(action, code string, times int) {
	e.sim.SetFault(cloudsim.Fault{Action: action, ErrorRate: 1, ErrorCode: code, Times: times})
}

// count is the number of recorded calls of action.
func (e *routeEnv) count(action string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, c := range e.calls {
		if c.action == action {
			n++
		}
	}
	return n
}

// counts is action -> recorded calls, for failure messages.
func (e *routeEnv) counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for _, c := range e.calls {
		out[c.action]++
	}
	return out
}

// requests returns the recorded request bodies of action, in order.
func (e *routeEnv) requests(action string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, c := range e.calls {
		if c.action == action {
			out = append(out, string(c.body))
		}
	}
	return out
}

// routes is simTable's routes as cloudsim holds them, "dst -> gw" in
// creation order.
func (e *routeEnv) routes() []string {
	e.t.Helper()
	table, err := e.sim.Tencent().TKE().RouteTable(simTable)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, 0, len(table.Routes))
	for _, r := range table.Routes {
		out = append(out, r.DestinationCIDR+" -> "+r.GatewayIP)
	}
	return out
}

// has reports whether simTable holds r.
func (e *routeEnv) has(r Route) bool { return slices.Contains(e.routes(), r.String()) }

// addRoute adds r to simTable out of band (another tool, or an earlier
// CCM), with the cloud's checks except that the gateway is an instance.
func (e *routeEnv) addRoute(r Route) {
	e.t.Helper()
	if err := e.sim.Tencent().TKE().AddRoute(simTable, clusterRoute(r)); err != nil {
		e.t.Fatal(err)
	}
}

// removeRoute deletes r from simTable out of band.
func (e *routeEnv) removeRoute(r Route) {
	e.t.Helper()
	if err := e.sim.Tencent().TKE().DeleteRoute(simTable, clusterRoute(r)); err != nil {
		e.t.Fatal(err)
	}
}

// deleteTable deletes simTable and its routes out of band.
func (e *routeEnv) deleteTable() {
	e.t.Helper()
	if err := e.sim.Tencent().TKE().DeleteRouteTable(simTable); err != nil {
		e.t.Fatal(err)
	}
}
