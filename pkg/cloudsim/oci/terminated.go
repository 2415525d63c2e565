package oci

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// DefaultTerminatedRetention is how long a terminated instance stays
// visible as TERMINATED, counted from its termination:
//
//	oci-go-sdk v65.129.0 core/core_compute_client.go, TerminateInstance:
//	"After the instance is deleted, the record remains visible in the list
//	of instances with the state TERMINATED for at least 12 hours"
//	(the same words in the `oci compute instance terminate` reference,
//	https://docs.cloud.oracle.com/tools/oci-cli/latest/oci_cli_docs/cmdref/compute/instance/terminate.html)
//
// "At least": cloudsim takes the minimum, 12 h; what happens after it (the
// record disappears, and GetInstance answers 404) is cloudsim's reading.
const DefaultTerminatedRetention = 12 * time.Hour

// terminated keeps the instances the shared fleet dropped after its
// (Tencent) linger, so that OCI still shows them TERMINATED until the
// retention ends. The fleet's linger plays TERMINATING (see ociState).
type terminated struct {
	retention time.Duration // <= 0: keep none

	mu     sync.Mutex
	byID   map[string]core.Record // by OCID
	purged map[string]bool        // OCIDs forced out through the admin API: 404 at once
}

func newTerminated(retention time.Duration) *terminated {
	if retention == 0 {
		retention = DefaultTerminatedRetention
	}
	return &terminated{retention: retention, byID: map[string]core.Record{}, purged: map[string]bool{}}
}

// keep is the fleet's OnInstanceGone hook. It runs under the core's lock,
// so it takes only its own.
func (t *terminated) keep(r core.Record) {
	if t.retention <= 0 || r.OCID == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.purged[r.OCID] {
		t.byID[r.OCID] = r
	}
}

// visible reports whether r is still retained at now.
func (t *terminated) visible(r core.Record, now time.Time) bool {
	return now.Sub(r.Terminated) < t.retention
}

// gcLocked forgets the records past the retention.
func (t *terminated) gcLocked(now time.Time) {
	for id, r := range t.byID {
		if !t.visible(r, now) {
			delete(t.byID, id)
		}
	}
}

// get returns a retained terminated instance by OCID.
func (t *terminated) get(ocid string, now time.Time) (core.Record, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gcLocked(now)
	r, ok := t.byID[ocid]
	return r, ok
}

// list returns the retained terminated instances in creation order.
func (t *terminated) list(now time.Time) []core.Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gcLocked(now)
	out := make([]core.Record, 0, len(t.byID))
	for _, r := range t.byID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// purge forgets a terminated instance at once, retained or still in the
// fleet's linger (the admin API's forced removal).
func (t *terminated) purge(ocid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byID, ocid)
	t.purged[ocid] = true
}

func (t *terminated) isPurged(ocid string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.purged[ocid]
}

// PurgeTerminated makes a terminated instance (id or OCID) disappear at
// once, as when its retention has passed: GetInstance answers 404. An
// instance that is not terminated is refused.
func (d *Dialect) PurgeTerminated(id string) error {
	r, err := d.core.InstanceRecord(id)
	if err != nil {
		kept, ok := d.gone.get(id, d.core.Now())
		if !ok {
			return fmt.Errorf("instance %q: %w", id, core.ErrNotFound)
		}
		r = kept
	}
	if r.State != core.StateTerminating {
		return fmt.Errorf("%w: instance %q is %s; only a terminated instance can be purged", core.ErrInvalid, id, r.State)
	}
	d.gone.purge(r.OCID)
	return nil
}

// instances is the fleet's visible instances followed by the retained
// terminated ones, in creation order: what OCI lists, as the read lag
// shows it (core/lag.go).
func (d *Dialect) instances() []core.Record {
	live := d.core.ReadSnapshot()
	gone := d.gone.list(d.core.Now())
	all := slices.DeleteFunc(append(live, gone...), func(r core.Record) bool { return d.gone.isPurged(r.OCID) })
	sort.SliceStable(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	return all
}
