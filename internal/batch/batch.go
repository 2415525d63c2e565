// Package batch gathers the keys that concurrent callers ask for into few
// cloud calls: when an API answers many keys per call (instances by id,
// routes to create), N callers arriving together then cost about
// N/MaxKeys calls instead of N. Every batched call of the CCM goes through
// it; each user is a Batcher configured with a window, a limit and a
// function that makes one call for a slice of keys.
package batch

import (
	"context"
	"sync"
	"time"
)

// Options configure a Batcher.
type Options[K comparable, V any] struct {
	// Window is how long the first key of a batch waits for others. The
	// callers of a burst (a controller's workers, the route controller's
	// goroutines) start within milliseconds of each other; a longer window
	// adds its length to every lookup's latency. 0 sends at once, with
	// whatever arrived meanwhile.
	Window time.Duration
	// MaxKeys is the most keys one call may carry: the API's limit, or a
	// choice that keeps one refused call small. A batch goes as soon as it
	// is full, without waiting for the window. A caller's keys are never
	// split, so that its answer comes from one call: a caller whose keys
	// would overflow the gathering batch sends it and opens the next.
	// 0 sets no limit.
	MaxKeys int
	// Call makes one cloud call for keys (distinct, in the order they
	// arrived) and returns each key's value: a key absent from the map was
	// not found, which is not an error. An error fails every key of the
	// call. ctx has the values of the context that opened the batch but
	// never its cancellation or deadline: the call serves every waiter, so
	// no single waiter may end it (the SDK's own timeout bounds it).
	Call func(ctx context.Context, keys []K) (map[K]V, error)
	// Sent, if set, runs under Lock as a batch leaves gathering, just
	// before its call starts: the owner's bookkeeping that must change
	// together with what is in flight (the inventory counts the calls it
	// makes to decide when a full listing is cheaper).
	Sent func(keys []K)
	// Lock, if set, guards the batcher instead of a mutex of its own. An
	// owner that decides under its own lock whether to batch at all (the
	// inventory: answer from what it holds, join a listing, or batch)
	// passes that lock, so that nothing changes between the decision and
	// the key's joining a batch; Add, InFlight and Pending must then be
	// called with it held. Call never runs with it held.
	Lock sync.Locker
}

// Batcher gathers keys into calls. It is safe for concurrent use.
type Batcher[K comparable, V any] struct {
	opts      Options[K, V]
	mu        sync.Locker
	own       bool              // mu is the batcher's own: its methods lock it
	gathering *Call[K, V]       // the batch still gathering keys, if any
	inflight  map[K]*Call[K, V] // for each key, the last call sent with it, while in flight
}

// Call is one batch: gathering keys, then in flight, then done.
type Call[K comparable, V any] struct {
	ctx    context.Context
	keys   []K
	set    map[K]bool
	timer  *time.Timer
	done   chan struct{}
	values map[K]V
	err    error
}

// New returns a batcher with nothing gathering.
func New[K comparable, V any](opts Options[K, V]) *Batcher[K, V] {
	b := &Batcher[K, V]{opts: opts, mu: opts.Lock, inflight: map[K]*Call[K, V]{}}
	if b.mu == nil {
		b.mu, b.own = &sync.Mutex{}, true
	}
	return b
}

// Add puts keys in the gathering batch, opening one (and starting its
// window) if there is none, and returns that batch; wait on it for the
// answer. The same key twice in a batch is asked once. ctx gives its
// values to the call if it opens the batch.
func (b *Batcher[K, V]) Add(ctx context.Context, keys ...K) *Call[K, V] {
	b.lockOwn()
	defer b.unlockOwn()
	c := b.gathering
	if c != nil && b.opts.MaxKeys > 0 && len(c.keys) > 0 && len(c.keys)+len(keys) > b.opts.MaxKeys {
		c.timer.Stop()
		b.send(c)
		c = nil
	}
	if c == nil {
		c = &Call[K, V]{ctx: context.WithoutCancel(ctx), set: map[K]bool{}, done: make(chan struct{})}
		b.gathering = c
		c.timer = time.AfterFunc(b.opts.Window, func() { b.flush(c) })
	}
	for _, k := range keys {
		if !c.set[k] {
			c.set[k] = true
			c.keys = append(c.keys, k)
		}
	}
	if b.opts.MaxKeys > 0 && len(c.keys) >= b.opts.MaxKeys {
		c.timer.Stop()
		b.send(c)
	}
	return c
}

// InFlight returns the last call sent with key, while it is in flight, or
// nil. Joining it answers from a call that began before the caller did.
func (b *Batcher[K, V]) InFlight(key K) *Call[K, V] {
	b.lockOwn()
	defer b.unlockOwn()
	return b.inflight[key]
}

// Pending reports whether key is in the gathering batch or in flight.
func (b *Batcher[K, V]) Pending(key K) bool {
	b.lockOwn()
	defer b.unlockOwn()
	return b.inflight[key] != nil || (b.gathering != nil && b.gathering.set[key])
}

// flush sends c when its window ends, unless it went out full before.
func (b *Batcher[K, V]) flush(c *Call[K, V]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gathering == c {
		b.send(c)
	}
}

// send takes c out of gathering and makes its call in the background.
// Call with mu held.
func (b *Batcher[K, V]) send(c *Call[K, V]) {
	b.gathering = nil
	for _, k := range c.keys {
		b.inflight[k] = c
	}
	if b.opts.Sent != nil {
		b.opts.Sent(c.keys)
	}
	go b.run(c)
}

// run makes c's call and hands its answer to the waiters.
func (b *Batcher[K, V]) run(c *Call[K, V]) {
	values, err := b.opts.Call(c.ctx, c.keys)
	b.mu.Lock()
	for _, k := range c.keys {
		if b.inflight[k] == c {
			delete(b.inflight, k)
		}
	}
	b.mu.Unlock()
	c.values, c.err = values, err
	close(c.done)
}

func (b *Batcher[K, V]) lockOwn() {
	if b.own {
		b.mu.Lock()
	}
}

func (b *Batcher[K, V]) unlockOwn() {
	if b.own {
		b.mu.Unlock()
	}
}

// Wait blocks until the call has answered, or returns ctx's error as soon
// as ctx ends; the call goes on for the other waiters.
func (c *Call[K, V]) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Err is the call's error, once Wait has returned nil.
func (c *Call[K, V]) Err() error { return c.err }

// Value is key's value, once Wait has returned nil; found is false when
// the call answered without it (or failed).
func (c *Call[K, V]) Value(key K) (v V, found bool) {
	v, found = c.values[key]
	return v, found
}

// Len is the number of distinct keys the call carried, once Wait has
// returned nil.
func (c *Call[K, V]) Len() int { return len(c.keys) }

// Result waits for the call and returns key's value: found is false when
// the call answered without it; err is the call's error, or ctx's if ctx
// ended first.
func (c *Call[K, V]) Result(ctx context.Context, key K) (v V, found bool, err error) {
	if err := c.Wait(ctx); err != nil {
		return v, false, err
	}
	if c.err != nil {
		return v, false, c.err
	}
	v, found = c.values[key]
	return v, found, nil
}
