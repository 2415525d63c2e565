package core

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestAddInstancesValidation(t *testing.T) {
	tests := []struct {
		name     string
		existing []Instance
		add      []Instance
		wantErr  string // substring; "" = success
	}{
		{"defaults", nil, []Instance{{}}, ""},
		{"malformed id", nil, []Instance{{ID: "ins-1"}}, "malformed"},
		{"upper-case id", nil, []Instance{{ID: "ins-ABCDEFGH"}}, "malformed"},
		{"duplicate id in batch", nil, []Instance{{ID: "ins-aaaaaaaa"}, {ID: "ins-aaaaaaaa"}}, "already exists"},
		{"duplicate id existing", []Instance{{ID: "ins-aaaaaaaa"}}, []Instance{{ID: "ins-aaaaaaaa"}}, "already exists"},
		{"duplicate private ip in vpc", []Instance{{PrivateIP: "10.0.0.5"}}, []Instance{{PrivateIP: "10.0.0.5"}}, "already used"},
		{"same private ip other vpc", []Instance{{PrivateIP: "10.0.0.5"}}, []Instance{{PrivateIP: "10.0.0.5", VpcID: "vpc-bbbbbbbb"}}, ""},
		{"duplicate public ip", []Instance{{PublicIP: "1.2.3.4"}}, []Instance{{PublicIP: "1.2.3.4"}}, "already used"},
		{"bad private ip", nil, []Instance{{PrivateIP: "10.0.0"}}, "not a valid IPv4"},
		{"ipv6 private ip", nil, []Instance{{PrivateIP: "fd00::1"}}, "not a valid IPv4"},
		{"bad public ip", nil, []Instance{{PublicIP: "x"}}, "not a valid IPv4"},
		{"bad vpc", nil, []Instance{{VpcID: "vpc-1"}}, "vpcID"},
		{"bad subnet", nil, []Instance{{SubnetID: "subnet-1"}}, "subnetID"},
		{"bad state", nil, []Instance{{State: "ASLEEP"}}, "unknown state"},
		{"lower-case state ok", nil, []Instance{{State: "stopped"}}, ""},
		{"empty tag key", nil, []Instance{{Tags: map[string]string{"": "x"}}}, "empty tag key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{})
			if _, err := c.AddInstances(tt.existing...); err != nil {
				t.Fatal(err)
			}
			before := len(c.Instances())
			out, err := c.AddInstances(tt.add...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if out != nil || len(c.Instances()) != before {
				t.Fatal("a failed batch must add nothing")
			}
		})
	}
}

func TestAddInstancesDefaults(t *testing.T) {
	c := New(Config{Region: "ap-shanghai"})
	out, err := c.AddInstances(Instance{}, Instance{State: "stopped"})
	if err != nil {
		t.Fatal(err)
	}
	a := out[0]
	if !ValidInstanceID(a.ID) || a.Name != a.ID || a.Type != DefaultInstanceType || a.Zone != "ap-shanghai-1" ||
		a.VpcID != DefaultVpcID || a.SubnetID != DefaultSubnetID || a.State != StateRunning || a.PrivateIP == "" {
		t.Fatalf("defaults: %+v", a)
	}
	if out[1].State != StateStopped || out[1].PrivateIP == a.PrivateIP {
		t.Fatalf("second: %+v", out[1])
	}
	// Returned and listed copies do not alias the stored tags.
	out, _ = c.AddInstances(Instance{Tags: map[string]string{"k": "v"}})
	out[0].Tags["k"] = "changed"
	for _, in := range c.Instances() {
		if in.Tags["k"] == "changed" {
			t.Fatal("tags alias")
		}
	}
}

func TestStatesAndLinger(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	c := New(Config{Clock: clk.Now, TerminatedLinger: 3 * time.Second})
	if _, err := c.AddInstances(Instance{ID: "ins-00000001"}, Instance{ID: "ins-00000002"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		id, state string
		wantErr   error
	}{
		{"ins-00000001", "stopping", nil},
		{"ins-00000001", "STOPPED", nil},
		{"ins-00000001", "bogus", ErrInvalid},
		{"ins-ffffffff", "RUNNING", ErrNotFound},
		{"ins-00000001", "TERMINATING", nil},
		{"ins-00000001", "TERMINATING", nil},
		{"ins-00000001", "RUNNING", ErrInvalid},
	}
	for _, s := range steps {
		_, err := c.SetInstanceState(s.id, s.state)
		if (s.wantErr == nil) != (err == nil) || (s.wantErr != nil && !errors.Is(err, s.wantErr)) {
			t.Fatalf("SetInstanceState(%s, %s) = %v, want %v", s.id, s.state, err, s.wantErr)
		}
	}
	clk.Advance(2 * time.Second)
	if n := len(c.Instances()); n != 2 {
		t.Fatalf("during linger: %d instances", n)
	}
	clk.Advance(time.Second)
	if got := c.Instances(); len(got) != 1 || got[0].ID != "ins-00000002" {
		t.Fatalf("after linger: %v", got)
	}
	if _, err := c.SetInstanceState("ins-00000001", "RUNNING"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("gone instance: %v", err)
	}

	forever := New(Config{Clock: clk.Now, TerminatedLinger: -1})
	_, _ = forever.AddInstances(Instance{ID: "ins-00000001", State: "TERMINATING"})
	clk.Advance(time.Hour)
	if len(forever.Instances()) != 1 {
		t.Fatal("negative linger must keep TERMINATING instances")
	}
}

func TestRegionFromZone(t *testing.T) {
	tests := []struct{ zone, want string }{
		{"ap-guangzhou-3", "ap-guangzhou"},
		{"ap-shanghai-fsi-1", "ap-shanghai-fsi"},
		{"na-siliconvalley-12", "na-siliconvalley"},
		{"zone-a", "default"},
		{"", "default"},
	}
	for _, tt := range tests {
		if got := (Record{Instance: Instance{Zone: tt.zone}}).Region("default"); got != tt.want {
			t.Errorf("Region(%q) = %q, want %q", tt.zone, got, tt.want)
		}
	}
}

func TestAllow(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	c := New(Config{Clock: clk.Now, RateLimits: map[string]float64{"A": 2, "Off": 0}})
	c.SetDefaultRateLimit("Off", 1) // overridden by Config: stays disabled
	c.SetDefaultRateLimit("B", 1)
	pass := func(action string, n int) (ok int) {
		for range n {
			if allowed, _ := c.Allow(action); allowed {
				ok++
			}
		}
		return ok
	}
	if got := pass("A", 5); got != 2 {
		t.Fatalf("A: %d", got)
	}
	if got := pass("B", 5); got != 1 {
		t.Fatalf("B: %d", got)
	}
	if got := pass("Off", 5); got != 5 {
		t.Fatalf("Off: %d", got)
	}
	if got := pass("Unlimited", 100); got != 100 {
		t.Fatalf("Unlimited: %d", got)
	}
	clk.Advance(time.Second)
	if got := pass("A", 5); got != 2 {
		t.Fatalf("A after 1s: %d", got)
	}
	if _, limit := c.Allow("A"); limit != 2 {
		t.Fatalf("limit %v", limit)
	}
	if rl := c.RateLimits(); rl["A"] != 2 || rl["B"] != 1 || len(rl) != 2 {
		t.Fatalf("RateLimits %v", rl)
	}
}

func TestFaultJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    Fault
		wantErr bool
	}{
		{`{"action":"A","errorRate":1,"errorCode":"X","latency":"1.5s"}`, Fault{Action: "A", ErrorRate: 1, ErrorCode: "X", Latency: 1500 * time.Millisecond}, false},
		{`{"action":"A","latency":2000000000}`, Fault{Action: "A", Latency: 2 * time.Second}, false},
		{`{"action":"A","httpStatus":503}`, Fault{Action: "A", HTTPStatus: 503}, false},
		{`{"action":"A","errorRate":1,"times":2}`, Fault{Action: "A", ErrorRate: 1, Times: 2}, false},
		{`{"action":"A","latency":"soon"}`, Fault{}, true},
		{`{"action":"A","latency":true}`, Fault{}, true},
		{`{"action":"A","errorRat":1}`, Fault{}, true},
	}
	for _, tt := range tests {
		var f Fault
		err := json.Unmarshal([]byte(tt.in), &f)
		if (err != nil) != tt.wantErr || (!tt.wantErr && f != tt.want) {
			t.Errorf("%s: got %+v, %v", tt.in, f, err)
		}
	}
	b, _ := json.Marshal(Fault{Action: "A", Latency: time.Second})
	var back Fault
	if err := json.Unmarshal(b, &back); err != nil || back.Latency != time.Second || !strings.Contains(string(b), `"1s"`) {
		t.Fatalf("round trip %s: %+v %v", b, back, err)
	}
}

func TestFaultApply(t *testing.T) {
	c := New(Config{})
	if c.Fault(context.Background(), "A") != nil {
		t.Fatal("no fault configured")
	}
	c.SetFault(Fault{Action: "A", ErrorRate: 7}) // clamped to 1, code defaulted
	f := c.Fault(context.Background(), "A")
	if f == nil || f.ErrorCode != DefaultFaultCode || f.Code() != DefaultFaultCode {
		t.Fatalf("fault %+v", f)
	}
	c.SetFault(Fault{Action: "A", ErrorRate: 1, HTTPStatus: 502})
	if f := c.Fault(context.Background(), "A"); f == nil || f.Code() != "HTTP502" {
		t.Fatalf("fault %+v", f)
	}
	c.SetFault(Fault{Action: "A", Latency: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if c.Fault(ctx, "A") != nil || time.Since(start) > 10*time.Second {
		t.Fatal("latency must end with the context")
	}
	c.ClearFaults()
	if len(c.Faults()) != 0 {
		t.Fatal("ClearFaults")
	}
}

// A fault with Times fails exactly that many calls, even when they race,
// and then clears itself; a FailTask fault with Times counts tasks.
func TestFaultTimes(t *testing.T) {
	c := New(Config{})
	c.SetFault(Fault{Action: "A", ErrorRate: 1, Times: 3})
	var failed atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if c.Fault(context.Background(), "A") != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 3 || len(c.Faults()) != 0 {
		t.Fatalf("%d calls failed, faults left %v; want 3 and none", failed.Load(), c.Faults())
	}
	c.SetFault(Fault{Action: "B", ErrorRate: 1, FailTask: true, Times: 1})
	if c.Fault(context.Background(), "B") != nil {
		t.Fatal("a FailTask fault must not fail the call")
	}
	if _, ok := c.TaskFault("B"); !ok {
		t.Fatal("the first task must fail")
	}
	if _, ok := c.TaskFault("B"); ok {
		t.Fatal("the second task must not fail")
	}
	if err := (Fault{Action: "A", Times: -1}).Validate(); err == nil {
		t.Error("negative times must be refused")
	}
}

func TestCallsAndHook(t *testing.T) {
	var mu sync.Mutex
	var seen []CallInfo
	c := New(Config{OnCall: func(ci CallInfo) { mu.Lock(); seen = append(seen, ci); mu.Unlock() }})
	c.Record(CallInfo{Action: "A"})
	c.Record(CallInfo{Action: "A", Code: "X"})
	c.Record(CallInfo{Action: "A", Code: "X"})
	got := c.Calls()
	if got["A"]["OK"] != 1 || got["A"]["X"] != 2 || len(seen) != 3 {
		t.Fatalf("calls %v, hook %d", got, len(seen))
	}
	got["A"]["OK"] = 99 // a copy
	if c.Calls()["A"]["OK"] != 1 {
		t.Fatal("Calls must return a copy")
	}
	c.ResetCalls()
	if len(c.Calls()) != 0 {
		t.Fatal("ResetCalls")
	}
}

func TestAdminBadInput(t *testing.T) {
	c := New(Config{})
	_, _ = c.AddInstances(Instance{ID: "ins-00000001"})
	srv := httptest.NewServer(c.AdminHandler())
	defer srv.Close()
	tests := []struct {
		method, path, body string
		wantStatus         int
		wantMsg            string
	}{
		{"POST", "/admin/instances", `not json`, 400, "want an array"},
		{"POST", "/admin/instances", `{"instances":[}`, 400, "malformed JSON"},
		{"POST", "/admin/instances", ``, 400, "empty body"},
		{"POST", "/admin/instances", `[{"id":"ins-1"}]`, 400, "malformed"},
		{"POST", "/admin/instances", `[{"ip":"10.0.0.1"}]`, 400, "unknown field"},
		{"POST", "/admin/instances", `{"instances":[{"id":"ins-00000001"}]}`, 400, "already exists"},
		{"POST", "/admin/instances", `42`, 400, "want an array"},
		{"POST", "/admin/instances/ins-00000001/state", `{"state":"NAPPING"}`, 400, "unknown state"},
		{"POST", "/admin/instances/ins-00000001/state", `{}`, 400, "body must be"},
		{"POST", "/admin/instances/ins-ffffffff/state", `{"state":"STOPPED"}`, 404, "not found"},
		{"POST", "/admin/instances/ins-00000001/explode", ``, 404, "unknown instance operation"},
		{"PUT", "/admin/faults", `{"errorRate":1}`, 400, "action is required"},
		{"PUT", "/admin/faults", `{"action":"A","errorRate":2}`, 400, "between 0 and 1"},
		{"PUT", "/admin/faults", `{"action":"A","httpStatus":200}`, 400, "httpStatus"},
		{"PUT", "/admin/faults", `{"action":"A","latency":"-1s"}`, 400, "negative"},
		{"PUT", "/admin/faults", `{"action":"A","latency":"forever"}`, 400, "latency"},
		{"PUT", "/admin/ratelimits", `{"qps":1}`, 400, "body must be"},
		{"GET", "/admin/nothing", ``, 404, "no admin endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.body, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&eb)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(eb.Error, tt.wantMsg) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, eb.Error, tt.wantStatus, tt.wantMsg)
			}
		})
	}
}

func TestAdminAcceptsAllBodyShapes(t *testing.T) {
	for _, body := range []string{
		`[{"privateIP":"10.0.0.1"}]`,
		`{"instances":[{"privateIP":"10.0.0.1"}]}`,
		`{"privateIP":"10.0.0.1"}`,
	} {
		in, err := DecodeInstances([]byte(body))
		if err != nil || len(in) != 1 || in[0].PrivateIP != "10.0.0.1" {
			t.Errorf("%s: %v %v", body, in, err)
		}
	}
}

func TestLoadSeed(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"seed.yaml": "instances:\n- id: ins-00000001\n  name: a\n  privateIP: 10.0.0.1\n  tags:\n    k: v\n- privateIP: 10.0.0.2\n",
		"seed.json": `{"instances":[{"id":"ins-00000001","name":"a","privateIP":"10.0.0.1","tags":{"k":"v"}},{"privateIP":"10.0.0.2"}]}`,
		"list.yaml": "- id: ins-00000001\n  name: a\n  privateIP: 10.0.0.1\n  tags: {k: v}\n- privateIP: 10.0.0.2\n",
		"bad.yaml":  "instances:\n- id: ins-00000001\n  ip: 10.0.0.1\n",
		"junk.yaml": "instances: [\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"seed.yaml", "seed.json", "list.yaml"} {
		in, err := LoadSeed(filepath.Join(dir, name))
		if err != nil || len(in) != 2 || in[0].ID != "ins-00000001" || in[0].Tags["k"] != "v" || in[1].PrivateIP != "10.0.0.2" {
			t.Errorf("%s: %+v %v", name, in, err)
		}
	}
	for _, name := range []string{"bad.yaml", "junk.yaml", "missing.yaml"} {
		if _, err := LoadSeed(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}
