package cloudsim

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// AddFlags defines cmd/cloudsim's flags for o on fs: the shared options
// here, then each registered dialect's own. Call the returned function
// once fs is parsed; it checks the values and completes o.
func (o *Options) AddFlags(fs *flag.FlagSet) core.FinishFlags {
	fs.StringVar(&o.Region, "region", "ap-guangzhou", "default region")
	fs.DurationVar(&o.TerminatedLinger, "terminated-linger", 2*time.Second, "how long a TERMINATING instance stays visible (negative: forever)")
	limits := RateLimitFlag{}
	fs.Var(limits, "rate-limit", "per-action rate limit override, Action=QPS (repeatable; QPS <= 0 disables)")
	latency := fs.String("latency", "default", "how long each API call takes to answer: default (realistic, per cloud: see docs/cloudsim.md#latency), zero, or read=<median>/<p99>,write=<median>/<p99> (e.g. read=40ms/200ms,write=80ms/400ms)")
	fs.StringVar(&o.VIPRange, "vip-range", dataplane.DefaultVIPRange, "pool of load balancer VIPs, A-B or a CIDR prefix; must be bindable (Linux routes 127/8 to lo)")
	fs.DurationVar(&o.HealthCheckInterval, "health-check-interval", 0, "if > 0, replaces every listener's health check interval (for tests)")
	fs.BoolVar(&o.DisableDataPlane, "no-dataplane", false, "allocate VIPs but open no listener sockets")
	fs.DurationVar(&o.ReadLag, "read-lag", 0, "delay the visibility of new and changed resources in List/Describe answers by up to this long (eventual consistency; 0: off; at most 10m)")
	finish := make([]core.FinishFlags, len(registry))
	for i, reg := range registry {
		finish[i] = reg.flags(o, fs)
	}
	return func(getenv func(string) string) error {
		o.RateLimits = limits
		if o.TerminatedLinger == 0 {
			return errors.New("--terminated-linger must not be 0 (use a negative value to keep TERMINATING instances forever)")
		}
		if o.ReadLag < 0 || o.ReadLag > core.MaxReadLag {
			return fmt.Errorf("--read-lag %v must be between 0 and %v", o.ReadLag, core.MaxReadLag)
		}
		if err := CheckVIPRange(o.VIPRange); err != nil {
			return fmt.Errorf("--vip-range: %w", err)
		}
		var err error
		if o.Latency, err = ParseLatency(*latency); err != nil {
			return fmt.Errorf("--latency: %w", err)
		}
		for _, f := range finish {
			if err := f(getenv); err != nil {
				return err
			}
		}
		return nil
	}
}

// RateLimitFlag is a repeatable --rate-limit Action=QPS flag.
type RateLimitFlag map[string]float64

func (r RateLimitFlag) String() string {
	keys := slices.Sorted(maps.Keys(r))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, r[k])
	}
	return strings.Join(parts, ",")
}

// Set adds one Action=QPS.
func (r RateLimitFlag) Set(s string) error {
	action, qps, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(action) == "" {
		return fmt.Errorf("want Action=QPS, got %q", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(qps), 64)
	if err != nil || v != v {
		return fmt.Errorf("QPS in %q is not a number", s)
	}
	r[strings.TrimSpace(action)] = v
	return nil
}
