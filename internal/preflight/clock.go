package preflight

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Both clouds refuse a request whose signed time is more than five minutes
// from theirs: Tencent with AuthFailure.SignatureExpire (X-TC-Timestamp),
// OCI with 401 NotAuthenticated (the signed Date header, "Date ... must be
// within 5 minutes", OCI "Request Signatures").
const (
	maxSkew  = 5 * time.Minute
	warnSkew = time.Minute // a clock this far off is drifting; fix it before it fails
)

// Clock is an http.RoundTripper that measures the local clock against the
// Date header of the API's answers, so that a refused signature can be told
// apart from a wrong key.
type Clock struct {
	next http.RoundTripper
	now  func() time.Time

	mu   sync.Mutex
	skew time.Duration // server minus local, from the latest answer
	seen bool
}

// NewClock wraps next; now is the local clock (time.Now if nil).
func NewClock(next http.RoundTripper, now func() time.Time) *Clock {
	if next == nil {
		next = http.DefaultTransport
	}
	if now == nil {
		now = time.Now
	}
	return &Clock{next: next, now: now}
}

// RoundTrip implements http.RoundTripper.
func (c *Clock) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if date, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
		// Date is truncated to the second: the server's clock read
		// somewhere in [date, date+1s), so the middle is the best guess.
		c.mu.Lock()
		c.skew, c.seen = date.Add(time.Second/2).Sub(c.now()), true
		c.mu.Unlock()
	}
	return resp, nil
}

// Skew returns how far the API's clock is ahead of the local one (negative:
// behind), and whether any answer carried a Date.
func (c *Clock) Skew() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.skew, c.seen
}

// Report adds the "clock" result, to the second (the Date header's
// resolution).
func (c *Clock) Report(rep *Report, api string) {
	const check = "clock"
	skew, ok := c.Skew()
	if !ok {
		rep.Skip(check, api+" answered without a Date header (or did not answer)")
		return
	}
	abs := skew.Abs().Round(time.Second)
	dir := "behind"
	if skew < 0 {
		dir = "ahead of"
	}
	detail := fmt.Sprintf("this machine's clock is %s %s %s's", abs, dir, api)
	if abs == 0 {
		detail = fmt.Sprintf("this machine's clock agrees with %s's to the second", api)
	}
	fix := "run NTP (chrony, systemd-timesyncd) on the node the CCM runs on"
	switch {
	case abs >= maxSkew:
		rep.Fail(check, detail+"; signatures more than 5m0s off are refused", fix)
	case abs >= warnSkew:
		rep.Warn(check, detail+"; at 5m0s every call will be refused", fix)
	default:
		rep.Pass(check, detail)
	}
}
