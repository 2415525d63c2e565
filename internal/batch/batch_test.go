package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fake is a cloud answering the keys it holds, recording each call's keys.
type fake struct {
	mu    sync.Mutex
	calls [][]string
	held  map[string]bool
	err   error
	gate  chan struct{} // when set, a call waits for it
}

func (f *fake) call(ctx context.Context, keys []string) (map[string]string, error) {
	if f.gate != nil {
		<-f.gate
	}
	if err := ctx.Err(); err != nil {
		return nil, err // a waiter's context reached the call
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, slices.Clone(keys))
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]string{}
	for _, k := range keys {
		if f.held[k] {
			out[k] = "v-" + k
		}
	}
	return out, nil
}

func (f *fake) recorded() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func keys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// Callers adding in turn: what goes out in which call.
func TestBatcherCalls(t *testing.T) {
	tests := []struct {
		name    string
		maxKeys int
		callers [][]string // each caller's keys, added in this order
		want    [][]string // the calls, in order
	}{
		{name: "keys merge into one call", maxKeys: 10,
			callers: [][]string{{"a"}, {"b"}, {"c", "d"}}, want: [][]string{{"a", "b", "c", "d"}}},
		{name: "the same key is asked once", maxKeys: 10,
			callers: [][]string{{"a"}, {"a"}, {"b", "a"}}, want: [][]string{{"a", "b"}}},
		{name: "split at the maximum", maxKeys: 3,
			callers: [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}},
			want:    [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g"}}},
		{name: "a caller's keys never split", maxKeys: 4,
			callers: [][]string{{"a", "b", "c"}, {"d", "e"}, {"f", "g", "h", "i", "j"}},
			want:    [][]string{{"a", "b", "c"}, {"d", "e"}, {"f", "g", "h", "i", "j"}}},
		{name: "no maximum", maxKeys: 0,
			callers: [][]string{keys("k", 150)}, want: [][]string{keys("k", 150)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{held: map[string]bool{}}
			// A window far longer than the Adds take, even on a starved
			// machine, so that what merges is decided by the keys alone.
			b := New(Options[string, string]{Window: 500 * time.Millisecond, MaxKeys: tt.maxKeys, Call: f.call})
			var calls []*Call[string, string]
			for _, ks := range tt.callers {
				calls = append(calls, b.Add(context.Background(), ks...))
			}
			for _, c := range calls {
				if err := c.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			got := f.recorded()
			slices.SortFunc(got, func(a, b []string) int { return slices.Compare(a, b) })
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("calls %v, want %v", got, tt.want)
			}
		})
	}
}

// A batch that is not full goes when its window ends, not before; a full
// one goes at once.
func TestBatcherWindow(t *testing.T) {
	tests := []struct {
		name     string
		window   time.Duration
		keys     int
		min, max time.Duration
	}{
		{name: "partial batch waits for the window", window: 100 * time.Millisecond, keys: 2, min: 100 * time.Millisecond, max: 5 * time.Second},
		// The window is long, so that "at once" holds with room for a
		// starved scheduler: anything well under it did not wait for it.
		{name: "full batch goes at once", window: 30 * time.Second, keys: 5, max: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{held: map[string]bool{}}
			b := New(Options[string, string]{Window: tt.window, MaxKeys: 5, Call: f.call})
			start := time.Now()
			c := b.Add(context.Background(), keys("k", tt.keys)...)
			if err := c.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < tt.min || took > tt.max {
				t.Errorf("answered after %v, want between %v and %v", took, tt.min, tt.max)
			}
			if n := len(f.recorded()); n != 1 {
				t.Errorf("%d calls, want 1", n)
			}
		})
	}
}

// Each key gets its own value or "not found"; a call's error goes to every
// key of that call, and only to that call's.
func TestBatcherResults(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		err       error
		key       string
		wantValue string
		wantFound bool
		wantErr   error
	}{
		{name: "found", key: "a", wantValue: "v-a", wantFound: true},
		{name: "not found is not an error", key: "zz"},
		{name: "a call's error is every key's", err: boom, key: "a", wantErr: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{held: map[string]bool{"a": true, "b": true}, err: tt.err}
			b := New(Options[string, string]{Window: 200 * time.Millisecond, MaxKeys: 10, Call: f.call})
			c := b.Add(context.Background(), tt.key)
			other := b.Add(context.Background(), "b")
			v, found, err := c.Result(context.Background(), tt.key)
			if v != tt.wantValue || found != tt.wantFound || !errors.Is(err, tt.wantErr) {
				t.Errorf("Result = %q, %v, %v; want %q, %v, %v", v, found, err, tt.wantValue, tt.wantFound, tt.wantErr)
			}
			if _, _, err := other.Result(context.Background(), "b"); !errors.Is(err, tt.wantErr) {
				t.Errorf("the other key of the call: %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// A call's error stays with that call: the next batch is asked afresh.
func TestBatcherErrorStaysWithItsCall(t *testing.T) {
	f := &fake{held: map[string]bool{"a": true}, err: errors.New("boom")}
	b := New(Options[string, string]{Window: 5 * time.Millisecond, MaxKeys: 10, Call: f.call})
	if _, _, err := b.Add(context.Background(), "a").Result(context.Background(), "a"); err == nil {
		t.Fatal("the failing call answered without error")
	}
	f.mu.Lock()
	f.err = nil
	f.mu.Unlock()
	if v, found, err := b.Add(context.Background(), "a").Result(context.Background(), "a"); err != nil || !found || v != "v-a" {
		t.Errorf("the next call: %q, %v, %v", v, found, err)
	}
}

// A waiter whose context ends stops waiting; the call goes on and answers
// the others, and is made once.
func TestBatcherCancellation(t *testing.T) {
	f := &fake{held: map[string]bool{"a": true, "b": true}, gate: make(chan struct{})}
	b := New(Options[string, string]{Window: 200 * time.Millisecond, MaxKeys: 10, Call: f.call})
	// (a window the two Adds fit in even on a starved machine: one call)
	ctx, cancel := context.WithCancel(context.Background())
	quitter := b.Add(ctx, "a") // it opens the batch: its ctx's end must not end the call
	stayer := b.Add(context.Background(), "b")
	cancel()
	if _, _, err := quitter.Result(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("the canceled waiter: %v, want %v", err, context.Canceled)
	}
	close(f.gate)
	if v, found, err := stayer.Result(context.Background(), "b"); err != nil || !found || v != "v-b" {
		t.Errorf("the other waiter: %q, %v, %v", v, found, err)
	}
	if n := len(f.recorded()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// InFlight and Pending follow a key from gathering to the call's end, and
// Sent runs under the owner's lock as the batch leaves gathering.
func TestBatcherInFlight(t *testing.T) {
	var mu sync.Mutex
	f := &fake{held: map[string]bool{"a": true}, gate: make(chan struct{})}
	var sent atomic.Int32
	b := New(Options[string, string]{Window: 5 * time.Millisecond, MaxKeys: 10, Call: f.call, Lock: &mu,
		Sent: func(keys []string) {
			if mu.TryLock() {
				mu.Unlock()
				t.Error("Sent ran without the lock")
			}
			sent.Add(int32(len(keys)))
		}})
	state := func() (pending bool, inflight *Call[string, string]) {
		mu.Lock()
		defer mu.Unlock()
		return b.Pending("a"), b.InFlight("a")
	}
	mu.Lock()
	c := b.Add(context.Background(), "a")
	mu.Unlock()
	if pending, inflight := state(); !pending || inflight != nil {
		t.Errorf("gathering: pending %v, in flight %v; want pending, not in flight", pending, inflight)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, inflight := state(); inflight == c {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch never went")
		}
	}
	if sent.Load() != 1 {
		t.Errorf("Sent saw %d keys, want 1", sent.Load())
	}
	close(f.gate)
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pending, inflight := state(); pending || inflight != nil {
		t.Errorf("done: pending %v, in flight %v; want neither", pending, inflight)
	}
	if c.Len() != 1 {
		t.Errorf("Len = %d, want 1", c.Len())
	}
}

// Many concurrent callers (run with -race): every key answered, in about
// keys/MaxKeys calls, none larger than MaxKeys.
func TestBatcherConcurrent(t *testing.T) {
	const n, maxKeys = 500, 50
	f := &fake{held: map[string]bool{}}
	for _, k := range keys("k", n) {
		f.held[k] = true
	}
	// The window outlasts the goroutines' start even on a starved machine.
	b := New(Options[string, string]{Window: 500 * time.Millisecond, MaxKeys: maxKeys, Call: f.call})
	var wg sync.WaitGroup
	for _, k := range keys("k", n) {
		wg.Go(func() {
			if v, found, err := b.Add(context.Background(), k).Result(context.Background(), k); err != nil || !found || v != "v-"+k {
				t.Errorf("%s: %q, %v, %v", k, v, found, err)
			}
		})
	}
	wg.Wait()
	calls := f.recorded()
	for _, c := range calls {
		if len(c) > maxKeys {
			t.Errorf("a call of %d keys, want at most %d", len(c), maxKeys)
		}
	}
	if len(calls) > n/maxKeys+2 {
		t.Errorf("%d calls, want about %d", len(calls), n/maxKeys)
	}
}
