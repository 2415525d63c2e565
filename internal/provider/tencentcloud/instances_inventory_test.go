package tencentcloud

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup/cvmlookuptest"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// fleet runs cloudsim with n running instances of our VPC with private
// IPs 10.1.x.y.
func fleet(t *testing.T, n int) (*cvmlookuptest.Env, []cloudsim.Instance) {
	var in []cloudsim.Instance
	for k := range n {
		in = append(in, cloudsim.Instance{ID: fmt.Sprintf("ins-f%07d", k), PrivateIP: fmt.Sprintf("10.1.%d.%d", k/200, 1+k%200)})
	}
	return startNodes(t, in...), in
}

// metadataForAll asks for every node's metadata concurrently, as the node
// controller's workers do, and returns the providerIDs.
func metadataForAll(t *testing.T, i *instances, nodes []*v1.Node) []string {
	t.Helper()
	out := make([]string, len(nodes))
	var wg sync.WaitGroup
	for k, n := range nodes {
		wg.Go(func() {
			md, err := i.InstanceMetadata(context.Background(), n)
			if err != nil {
				t.Errorf("node %s: %v", n.Name, err)
				return
			}
			out[k] = md.ProviderID
		})
	}
	wg.Wait()
	return out
}

// Initializing and then re-syncing 250 nodes costs about 250/100 calls each
// time, not 250.
func TestManyNodesCostFewCalls(t *testing.T) {
	const n = 250
	budget := 2 * ((n + 99) / 100)
	env, specs := fleet(t, n)
	// The TTL is long enough for a listing (three paced pages) to be fresh
	// when it ends on a loaded machine, and short enough to wait out below.
	i := newTestInstancesWith(env, func(c *config.Config) { c.InstanceCacheTTL = 2 * time.Second })

	var byIP []*v1.Node
	for _, s := range specs {
		byIP = append(byIP, testNode(s.PrivateIP, "", internalIP(s.PrivateIP)))
	}
	ids := metadataForAll(t, i, byIP)
	for k, s := range specs {
		if want := "tencentcloud:///ap-guangzhou-3/" + s.ID; ids[k] != want {
			t.Fatalf("node %s: providerID %q, want %q", byIP[k].Name, ids[k], want)
		}
	}
	if c := len(env.API.Calls()); c > budget {
		t.Errorf("initializing %d nodes by IP took %d calls, want <= %d", n, c, budget)
	}

	// The status sync, once the inventory is stale: nodes now have providerIDs.
	time.Sleep(2500 * time.Millisecond)
	var byID []*v1.Node
	for k, s := range specs {
		byID = append(byID, testNode(byIP[k].Name, ids[k], internalIP(s.PrivateIP)))
	}
	before := len(env.API.Calls())
	metadataForAll(t, i, byID)
	// The ski rental's bound, plus the batches that part-filled windows
	// send before and while the rent reaches a listing's price: on a
	// starved machine the 20 ms window goes out with a few dozen ids (7
	// calls seen: 4 batches, then the 3-page listing; 8 in a clean-clone
	// CI: 5 batches and the listing). A sync that lost the batching
	// altogether would cost one call per node, 250.
	if c := len(env.API.Calls()) - before; c < 1 || c > budget+2 {
		t.Errorf("a status sync of %d nodes took %d calls, want 1..%d", n, c, budget+2)
	}
	for _, req := range env.API.Calls() {
		if len(req.InstanceIds) > 100 {
			t.Errorf("a call asked for %d ids", len(req.InstanceIds))
		}
	}
}

// The inventory may say "exists" from memory, but never "gone": a node is
// deleted only on a fresh by-id answer.
func TestInventoryNeverDeletesFromMemory(t *testing.T) {
	const id = "ins-aaaa0001"
	node := testNode("10.0.0.1", "tencentcloud:///ap-guangzhou-3/"+id)
	ctx := context.Background()
	// What the re-check answers. A TERMINATING instance never runs again on
	// a real cloud, nor in cloudsim, so "running" is answered directly.
	running := cvmlookuptest.Instance(id)
	throttled := func(env *cvmlookuptest.Env) { env.Fail("RequestLimitExceeded", 0) }
	gone := func(env *cvmlookuptest.Env) { env.API.AnswerWith(reply(cvmlookuptest.Answer(0), nil)) }
	runs := func(env *cvmlookuptest.Env) { env.API.AnswerWith(reply(cvmlookuptest.Answer(1, running), nil)) }

	tests := []struct {
		name       string
		state      string // of the instance when the inventory learned it
		then       func(*cvmlookuptest.Env)
		wantExists bool
		wantErr    string
	}{
		{"remembered terminating, the re-check is throttled", "TERMINATING", throttled, true, "RequestLimitExceeded"},
		{"remembered terminating, the re-check says running", "TERMINATING", runs, true, ""},
		{"remembered terminating, the re-check says gone", "TERMINATING", gone, false, ""},
		{"remembered running, gone since: memory says exists", "RUNNING", gone, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := startNodes(t, cloudsim.Instance{ID: id, State: tt.state, PrivateIP: "10.0.0.1"})
			i := newTestInstances(env)
			if _, err := i.InstanceMetadata(ctx, node); err != nil { // the inventory learns the instance
				t.Fatal(err)
			}
			tt.then(env)
			exists, err := i.InstanceExists(ctx, node)
			if exists != tt.wantExists || (err == nil) != (tt.wantErr == "") ||
				(err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("InstanceExists = %v, %v; want %v, %q", exists, err, tt.wantExists, tt.wantErr)
			}
		})
	}

	t.Run("a node found by IP in a listing, terminating: re-checked by id", func(t *testing.T) {
		env := startNodes(t, cloudsim.Instance{ID: id, State: "TERMINATING", PrivateIP: "10.0.0.1"})
		i := newTestInstances(env)
		byIP := testNode("10.0.0.1", "")
		_, _ = i.InstanceMetadata(ctx, testNode("10.0.0.1", "")) // a rent...
		_, _ = i.InstanceMetadata(ctx, testNode("10.0.0.1", "")) // ...then a listing
		throttled(env)
		if exists, err := i.InstanceExists(ctx, byIP); !exists || err == nil {
			t.Errorf("InstanceExists = %v, %v; want true with the re-check's error", exists, err)
		}
	})

	t.Run("remembered running, gone since: once the memory is too old, a fresh call says gone", func(t *testing.T) {
		// The instance terminates and, after the linger, is gone from cloudsim.
		env := cvmlookuptest.Start(t, func(o *cloudsim.Options) { o.TerminatedLinger = time.Millisecond })
		env.Add(t, cloudsim.Instance{ID: id, PrivateIP: "10.0.0.1"})
		i := newTestInstancesWith(env, func(c *config.Config) { c.InstanceCacheTTL = 50 * time.Millisecond })
		if exists, err := i.InstanceExists(ctx, node); !exists || err != nil {
			t.Fatalf("InstanceExists = %v, %v", exists, err)
		}
		if err := env.Sim.SetInstanceState(id, "TERMINATING"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(80 * time.Millisecond)
		if exists, err := i.InstanceExists(ctx, node); exists || err != nil {
			t.Errorf("InstanceExists = %v, %v; want false, nil", exists, err)
		}
	})
}

// The lifecycle checks accept only young answers; metadata accepts the TTL.
func TestLifecycleChecksWantYoungAnswers(t *testing.T) {
	const id = "ins-aaaa0001"
	node := testNode("w", "tencentcloud:///ap-guangzhou-3/"+id)
	env := startNodes(t, cloudsim.Instance{ID: id})
	i := newTestInstancesWith(env, func(c *config.Config) { c.InstanceCacheTTL = time.Hour })
	if i.stateMaxAge != maxStateAge || i.metadataMaxAge != time.Hour {
		t.Fatalf("max ages %s, %s", i.stateMaxAge, i.metadataMaxAge)
	}
	ctx := context.Background()
	if _, err := i.InstanceMetadata(ctx, node); err != nil {
		t.Fatal(err)
	}
	if shut, err := i.InstanceShutdown(ctx, node); shut || err != nil || len(env.API.Calls()) != 1 {
		t.Errorf("InstanceShutdown = %v, %v after %d calls; want an answer from memory", shut, err, len(env.API.Calls()))
	}
	// TTL 0: nothing is remembered, but lookups are still batched.
	i = newTestInstancesWith(env, func(c *config.Config) { c.InstanceCacheTTL = 0 })
	before := len(env.API.Calls())
	_, _ = i.InstanceMetadata(ctx, node)
	_, _ = i.InstanceMetadata(ctx, node)
	if c := len(env.API.Calls()) - before; c != 2 {
		t.Errorf("%d calls with caching off, want 2", c)
	}
}

// Nodes without a providerID that join together are looked up together:
// five private IPs per DescribeInstances (the filter's documented limit),
// not one call per node.
func TestJoiningNodesByIPShareCalls(t *testing.T) {
	const n = 40
	env, specs := fleet(t, n)
	// TTL 0: no listing, so every lookup needs the cloud, as for instances
	// newer than any listing (an autoscaler's burst).
	i := newTestInstancesWith(env, func(c *config.Config) { c.InstanceCacheTTL = 0 })
	var nodes []*v1.Node
	for _, s := range specs {
		nodes = append(nodes, testNode(s.PrivateIP, "", internalIP(s.PrivateIP)))
	}
	ids := metadataForAll(t, i, nodes)
	for k, s := range specs {
		if want := "tencentcloud:///ap-guangzhou-3/" + s.ID; ids[k] != want {
			t.Errorf("node %s: providerID %q, want %q", nodes[k].Name, ids[k], want)
		}
	}
	calls := env.API.Calls()
	// n/5 when every node asks within one gather window; a loaded machine
	// may split the batch once or twice.
	if min, max := n/5, n/5+4; len(calls) < min || len(calls) > max {
		t.Errorf("%d nodes by IP took %d DescribeInstances calls, want %d..%d", n, len(calls), min, max)
	}
	for _, req := range calls {
		for _, f := range req.Filters {
			if len(f.Values) > 5 {
				t.Errorf("a call's %s filter has %d values, more than the documented 5", *f.Name, len(f.Values))
			}
		}
	}
}
