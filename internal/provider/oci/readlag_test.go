package oci

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/cloudbase"
)

// An instance that GetInstance and the listing do not show is gone only
// for a Node older than readLagWindow (cloudbase.CheckAbsence); cloudsim's
// read lag plays an instance created just before its node registered.
func TestInstanceExistsYoungNode(t *testing.T) {
	s := newNodeSim(t)
	s.i.readLagWindow = 5 * time.Second
	if err := s.sim.SetReadLag(time.Second); err != nil {
		t.Fatal(err)
	}
	a := s.add("node-a", "127.0.60.1", nil)
	n := node("n1", providerID("oci://"+a.OCID))
	n.CreationTimestamp = metav1.Now()
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if exists, err := s.i.InstanceExists(context.Background(), n); !exists {
			t.Fatalf("a lagging instance was called gone (err %v)", err)
		}
	}
	if exists, err := s.i.InstanceExists(context.Background(), n); !exists || err != nil {
		t.Fatalf("after the lag: exists %v, err %v", exists, err)
	}

	// Really gone, after a read showed it: gone at once (reads hide what
	// is new, never what they showed).
	s.remove(a)
	if exists, err := s.i.InstanceExists(context.Background(), n); exists || err != nil {
		t.Fatalf("gone after it was seen, young node: exists %v, err %v; want false", exists, err)
	}
	// Never seen by this process (e.g. after a restart): an error while
	// the node is young, "gone" once it is not.
	s.i.seen = cloudbase.SeenIDs{}
	var young *cloudbase.YoungNodeError
	if exists, err := s.i.InstanceExists(context.Background(), n); !exists || !errors.As(err, &young) {
		t.Fatalf("gone, never seen, young node: exists %v, err %v; want true and a YoungNodeError", exists, err)
	}
	n.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Minute))
	if exists, err := s.i.InstanceExists(context.Background(), n); exists || err != nil {
		t.Fatalf("gone, old node: exists %v, err %v; want false", exists, err)
	}
}
