package tencentcloud

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup/cvmlookuptest"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// A by-id DescribeInstances that does not show the instance says "gone"
// only for a Node older than read_lag_window: a young Node's instance
// existed when its kubelet registered, and the answer may lag (cloudsim's
// read lag plays it). Positive evidence (TERMINATING) needs no wait.
func TestInstanceExistsYoungNode(t *testing.T) {
	const id = "ins-aaaa0001"
	for _, tc := range []struct {
		name       string
		in         []cloudsim.Instance
		age        time.Duration
		wantExists bool
		wantYoung  bool
	}{
		{name: "absent, young node", age: 10 * time.Second, wantExists: true, wantYoung: true},
		{name: "absent, old node", age: 2 * time.Minute},
		{name: "terminating, young node", in: []cloudsim.Instance{{ID: id, PrivateIP: "10.0.0.1", State: "TERMINATING"}}, age: time.Second},
		{name: "running, young node", in: []cloudsim.Instance{{ID: id, PrivateIP: "10.0.0.1"}}, age: time.Second, wantExists: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := startNodes(t, tc.in...)
			i := newTestInstancesWith(env, func(c *config.Config) { c.ReadLagWindow = time.Minute })
			node := testNode("w", "tencentcloud:///ap-guangzhou-3/"+id)
			node.CreationTimestamp = metav1.NewTime(time.Now().Add(-tc.age))
			exists, err := i.InstanceExists(context.Background(), node)
			var young *cloudbase.YoungNodeError
			if exists != tc.wantExists || errors.As(err, &young) != tc.wantYoung || (err != nil && !tc.wantYoung) {
				t.Errorf("exists = %v, err = %v; want %v, young %v", exists, err, tc.wantExists, tc.wantYoung)
			}
		})
	}

	// Against cloudsim's read lag: an instance created just before its
	// node registered is never "gone" while it is invisible.
	env := startNodes(t)
	if err := env.Sim.SetReadLag(time.Second); err != nil {
		t.Fatal(err)
	}
	env.Add(t, cloudsim.Instance{ID: id, PrivateIP: "10.0.0.1"})
	i := newTestInstancesWith(env, func(c *config.Config) { c.ReadLagWindow = 5 * time.Second })
	node := testNode("w", "tencentcloud:///ap-guangzhou-3/"+id)
	node.CreationTimestamp = metav1.Now()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if exists, err := i.InstanceExists(context.Background(), node); !exists {
			t.Fatalf("a lagging instance was called gone (err %v)", err)
		}
	}
}

// An instance an earlier answer showed and a later one does not is gone at
// once, whatever its Node's age: reads that lag hide what is new, never
// what they showed (cloudsim's TerminatedLinger drops a terminated one).
func TestInstanceExistsSeenThenGone(t *testing.T) {
	const id = "ins-aaaa0002"
	env := cvmlookuptest.Start(t, func(o *cloudsim.Options) { o.TerminatedLinger = time.Millisecond })
	env.Add(t, cloudsim.Instance{ID: id, PrivateIP: "10.0.0.2"})
	i := newTestInstancesWith(env, func(c *config.Config) { c.ReadLagWindow = time.Minute; c.InstanceCacheTTL = 0 })
	node := testNode("w2", "tencentcloud:///ap-guangzhou-3/"+id)
	node.CreationTimestamp = metav1.Now()
	if exists, err := i.InstanceExists(context.Background(), node); !exists || err != nil {
		t.Fatalf("running: exists %v, err %v", exists, err)
	}
	if err := env.Sim.SetInstanceState(id, "TERMINATING"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // past the linger: DescribeInstances no longer shows it
	if exists, err := i.InstanceExists(context.Background(), node); exists || err != nil {
		t.Fatalf("removed after it was seen, young node: exists %v, err %v; want false", exists, err)
	}
}
