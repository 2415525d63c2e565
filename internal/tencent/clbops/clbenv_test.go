package clbops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// clbEnv is the CLB API the operations are tested against: cloudsim
// in-process, over the real SDK and real HTTP (signed calls, asynchronous
// tasks, busy CLBs, ClientToken replays, the documented limits and
// faults), with every call the operations make recorded. The test's own
// reads and out-of-band changes go through cloudsim's admin side and are
// not recorded.
type clbEnv struct {
	t   *testing.T
	sim *cloudsim.Sim
	api *clb.Client // recorded: the operations' client
	own *clb.Client // unrecorded: the test's own API calls
	url string      // cloudsim's API endpoint

	mu    sync.Mutex
	calls []recordedCall
}

// recordedCall is one API call: its action and request body.
type recordedCall struct {
	action string
	body   []byte
}

// The backends every test spec names exist as instances of testVPC.
var testInstances = []string{"ins-00000001", "ins-00000002", "ins-00000003", "ins-00000004"}

func newCLBEnv(t *testing.T) *clbEnv { return newCLBEnvWith(t, nil) }

// newCLBEnvWith is newCLBEnv with cloudsim's options changed by mod.
func newCLBEnvWith(t *testing.T, mod func(*cloudsim.Options)) *clbEnv {
	t.Helper()
	opts := cloudsim.Options{
		Latency:          cloudsim.ZeroLatency,
		DisableDataPlane: true,
		VIPRange:         "127.242.0.1-127.242.0.250",
		// The tests poll tasks every millisecond, faster than the
		// documented 20 calls/s.
		RateLimits: map[string]float64{"DescribeTaskStatus": 0, "DescribeLoadBalancers": 0, "DescribeListeners": 0, "DescribeTargets": 0,
			"CreateListener": 0, "BatchRegisterTargets": 0, "BatchDeregisterTargets": 0, "RegisterTargets": 0, "DeregisterTargets": 0,
			"ModifyListener": 0, "DeleteListener": 0, "CreateLoadBalancer": 0, "DeleteLoadBalancer": 0, "BatchModifyTargetWeight": 0},
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{simID: simKey},
			TaskLatency: 2 * time.Millisecond,
		},
	}
	if mod != nil {
		mod(&opts)
	}
	e := &clbEnv{t: t, sim: cloudsim.New(opts)}
	url, err := e.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.sim.Close() })
	e.url = url
	e.api, e.own = e.client(url, e), e.client(url, nil)
	e.addInstances(testInstances...)
	return e
}

func (e *clbEnv) client(url string, rec http.RoundTripper) *clb.Client {
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	c, err := clb.NewClient(common.NewCredential(simID, simKey), "ap-guangzhou", cpf)
	if err != nil {
		e.t.Fatal(err)
	}
	if rec != nil {
		c.WithHttpTransport(rec)
	}
	return c
}

// RoundTrip records the call and passes it on.
func (e *clbEnv) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	e.mu.Lock()
	e.calls = append(e.calls, recordedCall{action: r.Header.Get("X-TC-Action"), body: body})
	e.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (e *clbEnv) addInstances(ids ...string) {
	e.t.Helper()
	in := make([]cloudsim.Instance, 0, len(ids))
	for _, id := range ids {
		in = append(in, cloudsim.Instance{ID: id, VpcID: testVPC})
	}
	if _, err := e.sim.AddInstances(in...); err != nil {
		e.t.Fatal(err)
	}
}

// actions lists the recorded calls' actions, in order.
func (e *clbEnv) actions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.calls))
	for _, c := range e.calls {
		out = append(out, c.action)
	}
	return out
}

func (e *clbEnv) count(action string) int {
	n := 0
	for _, a := range e.actions() {
		if a == action {
			n++
		}
	}
	return n
}

// writes lists the recorded calls that are not reads.
func (e *clbEnv) writes() []string {
	var out []string
	for _, a := range e.actions() {
		if !strings.HasPrefix(a, "Describe") {
			out = append(out, a)
		}
	}
	return out
}

func (e *clbEnv) resetCalls() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = nil
}

// creates returns the recorded CreateLoadBalancer requests.
func (e *clbEnv) creates() []*clb.CreateLoadBalancerRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*clb.CreateLoadBalancerRequest
	for _, c := range e.calls {
		if c.action != "CreateLoadBalancer" {
			continue
		}
		req := clb.NewCreateLoadBalancerRequest()
		if err := json.Unmarshal(c.body, req); err != nil {
			e.t.Fatalf("CreateLoadBalancer body %s: %v", c.body, err)
		}
		out = append(out, req)
	}
	return out
}

// fail makes the next times calls of action answer code.
func (e *clbEnv) fail(action, code string, times int) {
	e.sim.SetFault(cloudsim.Fault{Action: action, ErrorRate: 1, ErrorCode: code, Times: times})
}

// failTask makes the task of the next call of action fail with code.
func (e *clbEnv) failTask(action, code string) {
	e.sim.SetFault(cloudsim.Fault{Action: action, ErrorRate: 1, ErrorCode: code, FailTask: true, Times: 1})
}

// addLB creates a CLB out of band (a user's, or a previous CCM's).
func (e *clbEnv) addLB(vpc string, tags map[string]string) string {
	e.t.Helper()
	lb, err := e.sim.Tencent().CLB().CreateLoadBalancer(tencent.CLBSpec{VpcID: vpc, Tags: tags})
	if err != nil {
		e.t.Fatal(err)
	}
	return lb.ID
}

// addListener adds a listener out of band and returns its id.
func (e *clbEnv) addListener(lbID, name, protocol string, port int) string {
	e.t.Helper()
	l, err := e.sim.Tencent().CLB().AddListener(lbID, tencent.CLBListenerSpec{Name: name, Protocol: protocol, Port: port})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.ID
}

func (e *clbEnv) lb(id string) tencent.CLBLoadBalancer {
	e.t.Helper()
	lb, err := e.sim.Tencent().CLB().LoadBalancer(id)
	if err != nil {
		e.t.Fatal(err)
	}
	return lb
}

func (e *clbEnv) lbIDs() []string {
	var ids []string
	for _, lb := range e.sim.Tencent().CLB().LoadBalancers() {
		ids = append(ids, lb.ID)
	}
	slices.Sort(ids)
	return ids
}

// listenerNames lists "name:PROTOCOL/port", sorted.
func (e *clbEnv) listenerNames(lbID string) []string {
	var out []string
	for _, l := range e.lb(lbID).Listeners {
		out = append(out, fmt.Sprintf("%s:%s/%d", l.Name, l.Protocol, l.Port))
	}
	slices.Sort(out)
	return out
}

// targetsOf lists a listener's targets as "instance:port", sorted.
func (e *clbEnv) targetsOf(lbID, listenerName string) []string {
	var out []string
	for _, l := range e.lb(lbID).Listeners {
		if l.Name != listenerName {
			continue
		}
		for _, tg := range l.Targets {
			out = append(out, fmt.Sprintf("%s:%d", tg.InstanceID, tg.Port))
		}
	}
	slices.Sort(out)
	return out
}

// weightsOf lists a listener's targets as "instance:port/weight", sorted.
func (e *clbEnv) weightsOf(lbID, listenerName string) []string {
	var out []string
	for _, l := range e.lb(lbID).Listeners {
		if l.Name != listenerName {
			continue
		}
		for _, tg := range l.Targets {
			out = append(out, fmt.Sprintf("%s:%d/%d", tg.InstanceID, tg.Port, *tg.Weight))
		}
	}
	slices.Sort(out)
	return out
}

// listener reads a listener as the API answers it (nil if none has name).
func (e *clbEnv) listener(lbID, name string) *clb.Listener {
	e.t.Helper()
	req := clb.NewDescribeListenersRequest()
	req.LoadBalancerId = &lbID
	resp, err := e.own.DescribeListenersWithContext(context.Background(), req)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, l := range resp.Response.Listeners {
		if deref(l.ListenerName) == name {
			return l
		}
	}
	return nil
}
