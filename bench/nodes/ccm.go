package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ccmkit/ccm/internal/provider/tencentcloud"
	"github.com/ccmkit/ccm/internal/testcluster"
)

// ccmFlags is the command line the benchmark adds to testcluster's: the
// recommended set, the node controllers only, upstream's 5 s lifecycle
// period, the status sync frequency, and any --ccm-flag.
func (b *bench) ccmFlags(statusSyncEvery time.Duration) []string {
	flags := append([]string{}, RecommendedFlags...)
	flags = append(flags,
		"--controllers=cloud-node,cloud-node-lifecycle",
		"--node-monitor-period=5s",
		"--node-status-update-frequency="+statusSyncEvery.String(),
	)
	return append(flags, b.cfg.CCMFlags...)
}

// startCCM runs the CCM as its own process, as the shipped ServiceAccount,
// with the inventory on or off. Ours syncs node status every
// StatusSyncEvery, so that the run can measure a sync; the baseline keeps
// upstream's 5 minutes, so that no sync adds calls to its initialization.
func (b *bench) startCCM(name string, inventory bool) (*testcluster.Process, error) {
	statusSyncEvery := b.cfg.StatusSyncEvery
	if !inventory {
		statusSyncEvery = 5 * time.Minute
	}
	cfg := fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\n",
		region, vpcID, secretID, secretKey, b.simURL)
	if b.cfg.CacheTTL != "" {
		cfg += fmt.Sprintf("instance_cache_ttl: %q\n", b.cfg.CacheTTL)
	}
	path := filepath.Join(b.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	var env []string
	if !inventory {
		env = append(env, tencentcloud.EnvBenchInventoryOff+"=1")
	}
	p, _, err := testcluster.CCM{
		Binary:      b.cfg.CCMBinary,
		Provider:    "tencentcloud",
		CloudConfig: path,
		Kubeconfig:  b.kubeconfig,
		Dir:         b.dir,
		Name:        name,
		ExtraArgs:   b.ccmFlags(statusSyncEvery),
		Env:         env,
	}.Start()
	return p, err
}

// syncLine is what upstream's node controller logs (at -v=2) after each
// periodic status sync.
var syncLine = regexp.MustCompile(`(?m)Update (\d+) nodes status took (\S+)\.$`)

// statusSync is one periodic node status sync seen in the CCM's log.
type statusSync struct {
	nodes    int
	duration time.Duration
}

// syncs returns the status syncs logged so far.
func syncs(p *testcluster.Process) []statusSync {
	var out []statusSync
	for _, m := range syncLine.FindAllStringSubmatch(p.Output(), -1) {
		n, _ := strconv.Atoi(m[1])
		d, err := time.ParseDuration(strings.TrimSpace(m[2]))
		if err != nil {
			continue
		}
		out = append(out, statusSync{nodes: n, duration: d})
	}
	return out
}

// waitSync waits for the status sync after the first `after` ones, and
// returns it.
func (b *bench) waitSync(ctx context.Context, p *testcluster.Process, after int) (statusSync, int, error) {
	timeout := b.cfg.StatusSyncEvery + b.cfg.PhaseTimeout
	deadline := time.Now().Add(timeout)
	for {
		if s := syncs(p); len(s) > after {
			return s[after], len(s), nil
		}
		if exited, code := p.Exited(); exited {
			return statusSync{}, 0, fmt.Errorf("the CCM exited with code %d", code)
		}
		if time.Now().After(deadline) {
			return statusSync{}, 0, fmt.Errorf("no node status sync logged within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return statusSync{}, 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// usage is a process's resource use, from /proc.
type usage struct {
	peakRSSMiB float64 // VmHWM
	cpuSeconds float64 // user + system
}

// procUsage reads VmHWM from /proc/<pid>/status and utime+stime from
// /proc/<pid>/stat (clock ticks of 1/100 s on Linux).
func procUsage(pid int) (usage, error) {
	var u usage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return u, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			u.peakRSSMiB = kb / 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name (field 2) may hold spaces; fields after ")" are plain.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, _ := strconv.ParseFloat(fields[11], 64) // field 14
	stime, _ := strconv.ParseFloat(fields[12], 64) // field 15
	u.cpuSeconds = (utime + stime) / 100
	return u, nil
}

// PeakRSSMiB is a running process's peak resident set (VmHWM), for the
// other sections that report the CCM's memory.
func PeakRSSMiB(pid int) (float64, error) {
	u, err := procUsage(pid)
	return u.peakRSSMiB, err
}
