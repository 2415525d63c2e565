package tencent

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// BatchRegisterTargets can fail for some listeners and bind the targets of
// the others: the answer's FailListenerIdSet lists "绑定失败的监听器ID，如为空表示
// 全部绑定成功" (the listeners whose binding failed; empty means all bound)
// and Message "绑定失败错误原因信息" (why), BatchRegisterTargetsResponseParams
// in clb@v1.3.105 models.go. The SDK does not say when that happens, so
// cloudsim does it only when told to, with a BindFailure.

// BindFailure makes BatchRegisterTargets fail for one listener: the targets
// of that listener in the next Times calls that name it are not bound, the
// call lists the listener in FailListenerIdSet with Message, and the
// targets of the other listeners are bound by the call's task as usual.
type BindFailure struct {
	ListenerID string `json:"listenerID"`
	// Message is the answer's Message (default: a generic reason).
	Message string `json:"message,omitempty"`
	// Times is how many calls fail for the listener (0: 1; negative: until
	// cleared).
	Times int `json:"times,omitempty"`
}

// DefaultBindFailureMessage is the Message of a BindFailure without one.
const DefaultBindFailureMessage = "cloudsim: injected failure binding targets to this listener"

// FailBindings arms a BindFailure (replacing one for the same listener).
func (l *CLB) FailBindings(f BindFailure) error {
	if f.ListenerID == "" {
		return fmt.Errorf("%w: bind failure: listenerID is required", core.ErrInvalid)
	}
	if f.Times == 0 {
		f.Times = 1
	}
	if f.Message == "" {
		f.Message = DefaultBindFailureMessage
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bindFails[f.ListenerID] = &f
	return nil
}

// BindFailures returns the armed bind failures, by listener id.
func (l *CLB) BindFailures() []BindFailure {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]BindFailure, 0, len(l.bindFails))
	for _, f := range l.bindFails {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b BindFailure) int {
		switch {
		case a.ListenerID < b.ListenerID:
			return -1
		case a.ListenerID > b.ListenerID:
			return 1
		}
		return 0
	})
	return out
}

// ClearBindFailures disarms every bind failure.
func (l *CLB) ClearBindFailures() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.bindFails)
}

// splitBindFailuresLocked separates the targets of listeners with an armed
// failure from the others. It consumes nothing: consumeBindFailuresLocked
// does once the call is accepted. Callers hold l.mu.
func (l *CLB) splitBindFailuresLocked(in []targetInput) (ok []targetInput, failed []string, msg string) {
	for _, t := range in {
		f := l.bindFails[t.listenerID]
		if f == nil {
			ok = append(ok, t)
			continue
		}
		if !slices.Contains(failed, t.listenerID) {
			failed = append(failed, t.listenerID)
			if msg != "" {
				msg += "; "
			}
			msg += fmt.Sprintf("%s: %s", t.listenerID, f.Message)
		}
	}
	return ok, failed, msg
}

// consumeBindFailuresLocked counts one failed call for each listener.
// Callers hold l.mu.
func (l *CLB) consumeBindFailuresLocked(listeners []string) {
	for _, id := range listeners {
		f := l.bindFails[id]
		if f == nil || f.Times < 0 {
			continue
		}
		if f.Times--; f.Times == 0 {
			delete(l.bindFails, id)
		}
	}
}

// registerBindFailureAdmin adds:
//
//	GET    /admin/tencent/clb/bindfailures   the armed bind failures
//	POST   /admin/tencent/clb/bindfailures   arm one (BindFailure)
//	DELETE /admin/tencent/clb/bindfailures   disarm all
func (l *CLB) registerBindFailureAdmin() {
	const base = "/admin/tencent/clb/bindfailures"
	h := l.core.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, l.BindFailures(), nil })
	h("POST "+base, func(r *http.Request) (int, any, error) {
		var in BindFailure
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		if err := l.FailBindings(in); err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, l.BindFailures(), nil
	})
	h("DELETE "+base, func(*http.Request) (int, any, error) {
		l.ClearBindFailures()
		return http.StatusNoContent, nil, nil
	})
}
