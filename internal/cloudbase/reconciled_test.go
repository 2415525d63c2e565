package cloudbase

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestReconciled(t *testing.T) {
	var r Reconciled
	t0 := time.Unix(1000, 0)
	if got := r.NotBefore("a", time.Second); !got.IsZero() {
		t.Errorf("NotBefore of a Service never reconciled = %v, want zero", got)
	}
	r.Done("a", t0, time.Minute)
	if got, want := r.NotBefore("a", 2*time.Second), t0.Add(2*time.Second); !got.Equal(want) {
		t.Errorf("NotBefore = %v, want %v (the end plus the lag)", got, want)
	}
	// Past reconciledKept entries, the ones older than the horizon go.
	for i := range reconciledKept {
		r.Done(types.UID(fmt.Sprintf("u%d", i)), t0.Add(2*time.Minute), time.Minute)
	}
	if got := r.NotBefore("a", 0); !got.IsZero() {
		t.Errorf("an entry older than the horizon survived the prune: %v", got)
	}
	if got := r.NotBefore("u1", 0); got.IsZero() {
		t.Error("a recent entry was pruned")
	}
}
