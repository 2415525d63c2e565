package lbops

import (
	"fmt"
	"time"
)

// Draining on OCI: a backend that leaves a backend set is first marked
// drain (LB: Backend.drain, "Whether the load balancer should drain this
// server. Servers marked \"drain\" receive no new incoming traffic."; NLB:
// Backend.isDrain, the same for the network load balancer; oci-go-sdk
// v65.129.0 loadbalancer and networkloadbalancer models) with the same
// UpdateBackendSet that applies the rest of the change, and removed once
// it has drained for the Service's drain period. The start of each drain
// is kept in memory (internal/lb/drain.Tracker); after a restart a backend
// found marked drain starts its period again.

// drainKey names a backend of a load balancer for the drain tracker.
func drainKey(lbID, set string, b backendModel) string {
	return fmt.Sprintf("%s/%s/%s:%d", lbID, set, b.IP, b.Port)
}

// withDrains adds to the desired backend sets the backends that are
// leaving but have not drained yet, marked drain, and returns when the
// next of them will have. Wanted backends are never marked drain; a
// backend wanted again ends its drain. start says whether to start the
// drain clock of backends not draining yet (reconcile) or only to read
// (drift).
func (o *Ops) withDrains(a *actual, bss []backendSetModel, period time.Duration, start bool) (next time.Time) {
	for i := range bss {
		bs := &bss[i]
		got, ok := a.BackendSets[bs.Name]
		if !ok {
			continue
		}
		wanted := map[backendModel]bool{}
		for _, b := range bs.Backends {
			wanted[b] = true
		}
		for _, b := range got.Backends {
			key := drainKey(a.ID, bs.Name, backendModel{IP: b.IP, Port: b.Port})
			if wanted[backendModel{IP: b.IP, Port: b.Port}] {
				o.drains.Forget(key)
				continue
			}
			if period <= 0 || (!start && !b.Drain) {
				continue // removed at once; drift: a difference
			}
			due, at := o.drains.Due(key, period)
			if due {
				continue // drained: removed by this update
			}
			if next.IsZero() || at.Before(next) {
				next = at
			}
			bs.Backends = append(bs.Backends, backendModel{IP: b.IP, Port: b.Port, Drain: true})
		}
		sortBackends(bs.Backends)
	}
	return next
}
