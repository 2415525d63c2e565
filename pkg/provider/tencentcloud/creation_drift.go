package tencentcloud

import (
	"fmt"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
)

// CreationDriftReason is the reason of the Warning Event on a Service whose
// creation-time annotations ask for something its CLB was not created
// with: the CLB is left as it is.
const CreationDriftReason = "CreationOnlySettingChanged"

// creationDrift tells each Service once per change how its CLB differs
// from its creation-time settings (clbops.Config.OnCreationDrift), so that
// a resync does not repeat the Event.
type creationDrift struct {
	mu      sync.Mutex
	pending map[types.UID]string // from the call in progress
	told    map[types.UID]string // the last message recorded
}

func newCreationDrift() *creationDrift {
	return &creationDrift{pending: map[types.UID]string{}, told: map[types.UID]string{}}
}

// found is clbops.Config.OnCreationDrift.
func (d *creationDrift) found(uid types.UID, lbID string, drift []string) {
	msg := ""
	if len(drift) > 0 {
		msg = fmt.Sprintf("CLB %s was created with other settings than the Service's annotations now ask for, and CLB applies them only at creation: %s. "+
			"It was left as it is; delete and re-create the Service to apply them", lbID, strings.Join(drift, "; "))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending[uid] = msg
}

// take returns the message to record for uid now ("" for none).
func (d *creationDrift) take(uid types.UID) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	msg, ok := d.pending[uid]
	if !ok {
		return ""
	}
	delete(d.pending, uid)
	if msg == d.told[uid] {
		return ""
	}
	if msg == "" {
		delete(d.told, uid)
	} else {
		d.told[uid] = msg
	}
	return msg
}

func (d *creationDrift) forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pending, uid)
	delete(d.told, uid)
}

// reportDrift records what the call just found out about svc's CLB.
func (l *clbLoadBalancers) reportDrift(svc *v1.Service) {
	if msg := l.drift.take(svc.UID); msg != "" {
		l.Warn(svc, lbkit.Warning{Reason: CreationDriftReason, Message: msg})
	}
}
