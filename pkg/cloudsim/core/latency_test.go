package core

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseLatency(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		in      string
		want    *Latency // nil: the dialects' defaults
		wantErr string
	}{
		{in: "default"},
		{in: ""},
		{in: "zero", want: &Latency{}},
		{in: "0", want: &Latency{}},
		{in: "read=40ms/200ms,write=80ms/400ms", want: &Latency{Read: Dist{40 * ms, 200 * ms}, Write: Dist{80 * ms, 400 * ms}}},
		{in: "write=10ms", want: &Latency{Write: Dist{10 * ms, 10 * ms}}},
		{in: " read=1s , write=2s/3s", want: &Latency{Read: Dist{time.Second, time.Second}, Write: Dist{2 * time.Second, 3 * time.Second}}},
		{in: "fast", wantErr: `"fast" is not kind=median/p99`},
		{in: "reads=40ms", wantErr: `unknown kind "reads"`},
		{in: "read=forty", wantErr: `median "forty" is not a non-negative duration`},
		{in: "read=-5ms", wantErr: `median "-5ms"`},
		{in: "read=40ms/20ms", wantErr: `p99 "20ms" is not a duration at least the median 40ms`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLatency(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseLatency(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLatency(%q): %v", tt.in, err)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("ParseLatency(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if got != nil {
				again, err := ParseLatency(got.String())
				if err != nil || *again != *got {
					t.Fatalf("String() %q does not parse back: %v, %v", got.String(), again, err)
				}
			}
		})
	}
}

func TestDistSample(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		d    Dist
	}{
		{"tencent read", Dist{40 * ms, 200 * ms}},
		{"oci write", Dist{120 * ms, 600 * ms}},
		{"fixed", Dist{10 * ms, 10 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 7))
			const n = 20000
			s := make([]time.Duration, n)
			for i := range s {
				s[i] = tt.d.Sample(r)
				if s[i] < tt.d.Median/4 || s[i] > 2*tt.d.P99 {
					t.Fatalf("sample %v outside [%v, %v]", s[i], tt.d.Median/4, 2*tt.d.P99)
				}
			}
			slices.Sort(s)
			// The empirical median and 99th percentile are within 10% of
			// the distribution's.
			near := func(got, want time.Duration) bool {
				return float64(got) >= 0.9*float64(want) && float64(got) <= 1.1*float64(want)
			}
			if med := s[n/2]; !near(med, tt.d.Median) {
				t.Errorf("median %v, want about %v", med, tt.d.Median)
			}
			if p99 := s[n*99/100]; !near(p99, tt.d.P99) {
				t.Errorf("p99 %v, want about %v", p99, tt.d.P99)
			}
		})
	}
	if got := (Dist{}).Sample(rand.New(rand.NewPCG(1, 1))); got != 0 {
		t.Errorf("zero Dist sampled %v", got)
	}
}

func TestDelay(t *testing.T) {
	fixed := Latency{Read: Dist{30 * time.Millisecond, 30 * time.Millisecond}, Write: Dist{60 * time.Millisecond, 60 * time.Millisecond}}

	c := New(Config{})
	c.SetDefaultLatency("sim", fixed)
	if got := c.LatencyFor("sim"); got != fixed {
		t.Fatalf("LatencyFor = %v, want the dialect's default %v", got, fixed)
	}
	for _, tt := range []struct {
		kind CallKind
		min  time.Duration
	}{{Read, 30 * time.Millisecond}, {Write, 60 * time.Millisecond}} {
		start := time.Now()
		c.Delay(context.Background(), "sim", tt.kind)
		if el := time.Since(start); el < tt.min {
			t.Errorf("Delay(kind %d) took %v, want at least %v", tt.kind, el, tt.min)
		}
	}

	// A canceled request stops waiting.
	slow := New(Config{Latency: &Latency{Write: Dist{time.Hour, time.Hour}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { slow.Delay(ctx, "sim", Write); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Delay ignored the canceled context")
	}

	// Config.Latency overrides the dialect's default; ZeroLatency answers at once.
	z := New(Config{Latency: ZeroLatency})
	z.SetDefaultLatency("sim", fixed)
	if got := z.LatencyFor("sim"); !got.IsZero() {
		t.Fatalf("LatencyFor with ZeroLatency = %v", got)
	}
}
