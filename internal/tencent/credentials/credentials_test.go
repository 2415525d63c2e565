package credentials

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// fakeSource answers from a script; it fails while fail is set.
type fakeSource struct {
	mu      sync.Mutex
	life    time.Duration
	n       int
	fail    bool
	fetches atomic.Int32
}

func (f *fakeSource) Name() string     { return ccmmetrics.SourceCVMRole }
func (f *fakeSource) Describe() string { return "fake" }
func (f *fakeSource) Fetch(context.Context) (Value, error) {
	f.fetches.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return Value{}, errors.New("metadata service down")
	}
	f.n++
	id := string(rune('A' + f.n))
	return Value{SecretID: "id" + id, SecretKey: "key" + id, Token: "token" + id, Expiry: time.Now().Add(f.life)}, nil
}

func (f *fakeSource) setFail(v bool) {
	f.mu.Lock()
	f.fail = v
	f.mu.Unlock()
}

var runs atomic.Int32

// provider is a metrics label of this test run alone (the registry is
// global, and -count runs a test again).
func provider(name string) string { return fmt.Sprintf("credtest-%s-%d", name, runs.Add(1)) }

func metric(t *testing.T, provider, result string) float64 {
	t.Helper()
	v, err := ccmmetrics.Sum("ccmkit_credentials_refreshes_total", map[string]string{"provider": provider, "result": result})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRefreshBeforeExpiry: temporary credentials are replaced at half
// their lifetime, every refresh is counted, and the three parts always
// come from one value.
func TestRefreshBeforeExpiry(t *testing.T) {
	prov := provider("TestRefreshBeforeExpiry")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &fakeSource{life: 2 * time.Second}
	c, err := Start(ctx, prov, src, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	first := c.Value()
	waitFor(t, 5*time.Second, "two refreshes", func() bool { return metric(t, prov, "ok") >= 3 })
	now := c.Value()
	if now == first || now.Expiry.Before(time.Now()) {
		t.Fatalf("value %+v not replaced by a live one", now)
	}
	id, key, token := c.GetCredential()
	if id[2:] != key[3:] || key[3:] != token[5:] {
		t.Fatalf("parts of different values: %s %s %s", id, key, token)
	}
}

// TestFailedRefreshKeepsCredentials: while the source fails, the current
// credentials stay, every failure is counted, and retries back off; once it
// answers again the credentials are replaced.
func TestFailedRefreshKeepsCredentials(t *testing.T) {
	prov := provider("TestFailedRefreshKeepsCredentials")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &fakeSource{life: 2 * time.Second}
	c, err := Start(ctx, prov, src, Policy{RetryBase: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first := c.Value()
	src.setFail(true)
	waitFor(t, 5*time.Second, "three failed refreshes", func() bool { return metric(t, prov, "error") >= 3 })
	if c.Value() != first {
		t.Fatal("a failed refresh replaced the credentials")
	}
	src.setFail(false)
	waitFor(t, 5*time.Second, "a refresh after the failures", func() bool { return c.Value() != first })
}

// TestStartFails: a source that never answers fails Start after a few
// tries, naming it.
func TestStartFails(t *testing.T) {
	prov := provider("TestStartFails")
	src := &fakeSource{fail: true}
	_, err := Start(context.Background(), prov, src, Policy{RetryBase: time.Millisecond, StartAttempts: 3})
	if err == nil || err.Error() != "credentials from fake: metadata service down" {
		t.Fatalf("error %v", err)
	}
	if src.fetches.Load() != 3 {
		t.Fatalf("%d fetches, want 3", src.fetches.Load())
	}
}

// TestRefreshIn: half the remaining lifetime, never less than a second.
func TestRefreshIn(t *testing.T) {
	tests := []struct {
		left, want time.Duration
	}{
		{2 * time.Hour, time.Hour},
		{20 * time.Second, 10 * time.Second},
		{time.Second, time.Second},
		{-time.Minute, time.Second},
	}
	now := time.Unix(1_000_000, 0)
	for _, tt := range tests {
		c := &Credential{now: func() time.Time { return now }, policy: Policy{}.withDefaults()}
		c.value.Store(&Value{Expiry: now.Add(tt.left)})
		if got := c.refreshIn(); got != tt.want {
			t.Errorf("%s left: refresh in %s, want %s", tt.left, got, tt.want)
		}
	}
}
