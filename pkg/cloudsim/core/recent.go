package core

import (
	"sync"
	"time"
)

// RecentCallsKept is how many finished calls RecentCalls keeps, the newest
// last: enough for a screen of the console (cloudsim's choice).
const RecentCallsKept = 200

// RecentCall is one finished API call as the admin API and the console
// show it: no signature, no secret, only the caller's key id.
type RecentCall struct {
	Time       time.Time `json:"time"`
	Dialect    string    `json:"dialect"`
	Service    string    `json:"service,omitempty"`
	Action     string    `json:"action"`
	Region     string    `json:"region,omitempty"`
	Principal  string    `json:"principal,omitempty"`
	RequestID  string    `json:"requestId,omitempty"`
	Code       string    `json:"code"`
	Message    string    `json:"message,omitempty"`
	DurationMS float64   `json:"durationMs"`
}

// recentCalls is a ring of the last RecentCallsKept calls.
type recentCalls struct {
	mu   sync.Mutex
	ring []RecentCall
	next int // where the next call goes once the ring is full
}

func (r *recentCalls) add(ci CallInfo) {
	rc := RecentCall{Time: ci.Time, Dialect: ci.Dialect, Service: ci.Service, Action: ci.Action, Region: ci.Region,
		Principal: ci.Principal, RequestID: ci.RequestID, Code: ci.Code, Message: ci.Message,
		DurationMS: float64(ci.Duration.Microseconds()) / 1000}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) < RecentCallsKept {
		r.ring = append(r.ring, rc)
		return
	}
	r.ring[r.next] = rc
	r.next = (r.next + 1) % RecentCallsKept
}

func (r *recentCalls) list() []RecentCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RecentCall, 0, len(r.ring))
	out = append(out, r.ring[r.next:]...)
	return append(out, r.ring[:r.next]...)
}

func (r *recentCalls) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring, r.next = nil, 0
}

// RecentCalls returns the last RecentCallsKept finished API calls, oldest
// first (GET /admin/calls/recent; DELETE /admin/calls clears them with the
// counts).
func (c *Core) RecentCalls() []RecentCall { return c.recent.list() }
