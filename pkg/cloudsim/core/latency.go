package core

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Latency is how long cloudsim takes to answer a call, per kind of call.
// Real cloud APIs answer in tens to hundreds of milliseconds, not the
// ~0.1 ms of an in-memory map; published timings and client-side rate
// limiters only mean something against a realistic answer time.
//
// The zero Latency answers at once: unit tests ask for it explicitly
// (ZeroLatency); the demo, the e2e suite and the benchmarks run with the
// dialects' defaults.
type Latency struct {
	Read  Dist // Describe*/Get*/List*: answered from the control plane's read path
	Write Dist // everything else: validated, persisted, often starting async work
}

// ZeroLatency is the explicit "answer at once" latency, for unit tests.
var ZeroLatency = &Latency{}

// IsZero reports whether l answers every call at once.
func (l Latency) IsZero() bool { return l.Read.IsZero() && l.Write.IsZero() }

// String formats l in the syntax ParseLatency reads.
func (l Latency) String() string {
	if l.IsZero() {
		return "zero"
	}
	return "read=" + l.Read.String() + ",write=" + l.Write.String()
}

// Dist is a log-normal answer-time distribution given by its median and
// its 99th percentile, the two figures latency reports quote. Samples are
// clamped to [Median/4, 2*P99] so that one unlucky draw cannot stall a
// test. The zero Dist is always 0.
type Dist struct {
	Median time.Duration
	P99    time.Duration
}

// IsZero reports whether d always samples 0.
func (d Dist) IsZero() bool { return d.Median <= 0 }

// String formats d as "median/p99", e.g. "40ms/200ms".
func (d Dist) String() string { return d.Median.String() + "/" + d.P99.String() }

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263

// Sample draws one answer time from d using r.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	if d.IsZero() {
		return 0
	}
	p99 := max(d.P99, d.Median)
	sigma := math.Log(float64(p99)/float64(d.Median)) / z99
	v := time.Duration(float64(d.Median) * math.Exp(sigma*r.NormFloat64()))
	return min(max(v, d.Median/4), 2*p99)
}

// CallKind tells reads from writes for Latency.
type CallKind int

const (
	Read CallKind = iota
	Write
)

// ParseLatency reads a --latency value: "default" (nil: each dialect's
// default), "zero" (answer at once), or per-kind distributions
// "read=<median>/<p99>,write=<median>/<p99>" (a kind left out answers at
// once; a bare duration is a fixed time, median = p99).
func ParseLatency(s string) (*Latency, error) {
	switch strings.TrimSpace(s) {
	case "", "default":
		return nil, nil
	case "zero", "0":
		return &Latency{}, nil
	}
	var l Latency
	for _, part := range strings.Split(s, ",") {
		kind, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("latency %q: %q is not kind=median/p99 (kinds: read, write)", s, part)
		}
		d, err := parseDist(val)
		if err != nil {
			return nil, fmt.Errorf("latency %q: %s: %w", s, kind, err)
		}
		switch kind {
		case "read":
			l.Read = d
		case "write":
			l.Write = d
		default:
			return nil, fmt.Errorf("latency %q: unknown kind %q (kinds: read, write)", s, kind)
		}
	}
	return &l, nil
}

func parseDist(s string) (Dist, error) {
	med, p99, hasP99 := strings.Cut(s, "/")
	m, err := time.ParseDuration(med)
	if err != nil || m < 0 {
		return Dist{}, fmt.Errorf("median %q is not a non-negative duration such as 40ms", med)
	}
	d := Dist{Median: m, P99: m}
	if hasP99 {
		p, err := time.ParseDuration(p99)
		if err != nil || p < m {
			return Dist{}, fmt.Errorf("p99 %q is not a duration at least the median %s", p99, m)
		}
		d.P99 = p
	}
	return d, nil
}

// SetDefaultLatency registers a dialect's default latency, used unless
// Config.Latency overrides it.
func (c *Core) SetDefaultLatency(dialect string, l Latency) {
	c.latMu.Lock()
	defer c.latMu.Unlock()
	c.latDefaults[dialect] = l
}

// LatencyFor is the latency a dialect's calls get.
func (c *Core) LatencyFor(dialect string) Latency {
	if c.latency != nil {
		return *c.latency
	}
	c.latMu.Lock()
	defer c.latMu.Unlock()
	return c.latDefaults[dialect]
}

// Delay waits the answer time of one call of the given dialect and kind,
// returning early if ctx ends (the client gave up: nothing to answer).
func (c *Core) Delay(ctx context.Context, dialect string, k CallKind) {
	l := c.LatencyFor(dialect)
	d := l.Read
	if k == Write {
		d = l.Write
	}
	if d.IsZero() {
		return
	}
	c.latMu.Lock()
	wait := d.Sample(c.latRand)
	c.latMu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
