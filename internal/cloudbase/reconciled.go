package cloudbase

import (
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Reconciled remembers when each Service's last reconcile (Ensure, Update
// or Delete) ended, in this process. A listing of load balancers shared by
// many Services' lookups (issue 33: Tencent's clbops/lookup.go, OCI's
// lbops/gather.go) answers a Service's lookup only when it began later,
// so that it holds whatever that reconcile wrote. The upstream service
// controller never reconciles one Service twice at once, so no write of
// the Service is under way while it looks its load balancer up. The zero
// value is ready; it is safe for concurrent use.
type Reconciled struct {
	mu      sync.Mutex
	at      map[types.UID]time.Time
	pruneAt int
}

// reconciledKept is how many entries Reconciled keeps before it prunes the
// ones older than the caller's horizon.
const reconciledKept = 1024

// Done records that a reconcile of uid ended at now. Entries older than
// horizon (the longest a listing may answer for, with the read lag) no
// longer narrow anything and are dropped now and then.
func (r *Reconciled) Done(uid types.UID, now time.Time, horizon time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at, r.pruneAt = map[types.UID]time.Time{}, reconciledKept
	}
	r.at[uid] = now
	if len(r.at) >= r.pruneAt {
		maps.DeleteFunc(r.at, func(_ types.UID, at time.Time) bool { return now.Sub(at) > horizon })
		r.pruneAt = max(reconciledKept, 2*len(r.at))
	}
}

// NotBefore is the earliest a listing may have begun to answer uid's
// lookup: lag after its last reconcile ended (zero when there was none).
func (r *Reconciled) NotBefore(uid types.UID, lag time.Duration) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.at[uid]
	if !ok {
		return time.Time{}
	}
	return at.Add(lag)
}
