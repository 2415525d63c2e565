package tencentcloud

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	v1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/tencent/config"
)

// fleet builds n running instances of our VPC with private IPs 10.1.x.y.
func fleet(n int) (*fakeCVM, []ins) {
	var specs []ins
	for k := range n {
		specs = append(specs, ins{id: fmt.Sprintf("ins-f%07d", k), private: []string{fmt.Sprintf("10.1.%d.%d", k/200, k%200)}})
	}
	return newFake(specs...), specs
}

func (f *fakeCVM) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeCVM) setRespond(r func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.respond = r
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
	fake, specs := fleet(n)
	i := newTestInstancesWith(fake, func(c *config.Config) { c.InstanceCacheTTL = 200 * time.Millisecond })

	var byIP []*v1.Node
	for _, s := range specs {
		byIP = append(byIP, testNode(s.private[0], "", internalIP(s.private[0])))
	}
	ids := metadataForAll(t, i, byIP)
	for k, s := range specs {
		if want := "tencentcloud:///ap-guangzhou-3/" + s.id; ids[k] != want {
			t.Fatalf("node %s: providerID %q, want %q", byIP[k].Name, ids[k], want)
		}
	}
	if c := fake.callCount(); c > budget {
		t.Errorf("initializing %d nodes by IP took %d calls, want <= %d", n, c, budget)
	}

	// The status sync, once the inventory is stale: nodes now have providerIDs.
	time.Sleep(300 * time.Millisecond)
	var byID []*v1.Node
	for k, s := range specs {
		byID = append(byID, testNode(byIP[k].Name, ids[k], internalIP(s.private[0])))
	}
	before := fake.callCount()
	metadataForAll(t, i, byID)
	if c := fake.callCount() - before; c < 1 || c > budget {
		t.Errorf("a status sync of %d nodes took %d calls, want 1..%d", n, c, budget)
	}
	for _, req := range fake.calls {
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
	throttled := func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
		return nil, sdkErr("RequestLimitExceeded")
	}
	gone := func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) { return answer(0), nil }
	running := func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
		return answer(1, ins{id: id, private: []string{"10.0.0.1"}}.build()), nil
	}

	tests := []struct {
		name       string
		state      string // of the instance when the inventory learned it
		then       func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
		wantExists bool
		wantErr    string
	}{
		{"remembered terminating, the re-check is throttled", "TERMINATING", throttled, true, "RequestLimitExceeded"},
		{"remembered terminating, the re-check says running", "TERMINATING", running, true, ""},
		{"remembered terminating, the re-check says gone", "TERMINATING", gone, false, ""},
		{"remembered running, gone since: memory says exists", "RUNNING", gone, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake(ins{id: id, state: tt.state, private: []string{"10.0.0.1"}})
			i := newTestInstances(fake)
			if _, err := i.InstanceMetadata(ctx, node); err != nil { // the inventory learns the instance
				t.Fatal(err)
			}
			fake.setRespond(tt.then)
			exists, err := i.InstanceExists(ctx, node)
			if exists != tt.wantExists || (err == nil) != (tt.wantErr == "") ||
				(err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("InstanceExists = %v, %v; want %v, %q", exists, err, tt.wantExists, tt.wantErr)
			}
		})
	}

	t.Run("a node found by IP in a listing, terminating: re-checked by id", func(t *testing.T) {
		fake := newFake(ins{id: id, state: "TERMINATING", private: []string{"10.0.0.1"}})
		i := newTestInstances(fake)
		byIP := testNode("10.0.0.1", "")
		_, _ = i.InstanceMetadata(ctx, testNode("10.0.0.1", "")) // a rent...
		_, _ = i.InstanceMetadata(ctx, testNode("10.0.0.1", "")) // ...then a listing
		fake.setRespond(throttled)
		if exists, err := i.InstanceExists(ctx, byIP); !exists || err == nil {
			t.Errorf("InstanceExists = %v, %v; want true with the re-check's error", exists, err)
		}
	})

	t.Run("remembered running, gone since: once the memory is too old, a fresh call says gone", func(t *testing.T) {
		fake := newFake(ins{id: id, private: []string{"10.0.0.1"}})
		i := newTestInstancesWith(fake, func(c *config.Config) { c.InstanceCacheTTL = 50 * time.Millisecond })
		if exists, err := i.InstanceExists(ctx, node); !exists || err != nil {
			t.Fatalf("InstanceExists = %v, %v", exists, err)
		}
		fake.setRespond(gone)
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
	fake := newFake(ins{id: id})
	i := newTestInstancesWith(fake, func(c *config.Config) { c.InstanceCacheTTL = time.Hour })
	if i.stateMaxAge != maxStateAge || i.metadataMaxAge != time.Hour {
		t.Fatalf("max ages %s, %s", i.stateMaxAge, i.metadataMaxAge)
	}
	ctx := context.Background()
	if _, err := i.InstanceMetadata(ctx, node); err != nil {
		t.Fatal(err)
	}
	if shut, err := i.InstanceShutdown(ctx, node); shut || err != nil || fake.callCount() != 1 {
		t.Errorf("InstanceShutdown = %v, %v after %d calls; want an answer from memory", shut, err, fake.callCount())
	}
	// TTL 0: nothing is remembered, but lookups are still batched.
	i = newTestInstancesWith(fake, func(c *config.Config) { c.InstanceCacheTTL = 0 })
	before := fake.callCount()
	_, _ = i.InstanceMetadata(ctx, node)
	_, _ = i.InstanceMetadata(ctx, node)
	if c := fake.callCount() - before; c != 2 {
		t.Errorf("%d calls with caching off, want 2", c)
	}
}
