package nodes

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
)

// Result is one run's numbers; its JSON is compared across commits, so keys
// are only ever added.
type Result struct {
	Nodes                     int     `json:"nodes"`
	InitSeconds               float64 `json:"init_seconds"`
	FloorSeconds              float64 `json:"floor_seconds"`
	BaselineInitSeconds       float64 `json:"baseline_init_seconds"`
	DescribeCallsInit         int64   `json:"describe_instances_calls_init"`
	BaselineDescribeCallsInit int64   `json:"baseline_describe_instances_calls_init"`
	SyncCalls                 int64   `json:"sync_calls"`
	SyncSeconds               float64 `json:"sync_seconds"`
	SyncNodes                 int     `json:"sync_nodes"`
	LifecycleCalls            int64   `json:"lifecycle_calls"`
	LifecycleNotReady         int     `json:"lifecycle_notready_nodes"`
	LifecycleSeconds          float64 `json:"lifecycle_seconds"`
	ThrottledResponses        int64   `json:"throttled_responses"`
	PeakRSSMiB                float64 `json:"peak_rss_mib"`
	CCMCPUSeconds             float64 `json:"ccm_cpu_seconds"`

	InitVsFloor         float64         `json:"init_vs_floor"`
	CallBudget          int64           `json:"call_budget"` // 2*ceil(N/100)
	Target              string          `json:"target"`
	Targets             map[string]bool `json:"targets"`
	Met                 bool            `json:"met"` // every target
	CloudsimDescribeQPS float64         `json:"cloudsim_describe_instances_qps"`
	CCMFlags            []string        `json:"ccm_flags"`
	CPUs                int             `json:"cpus"`
	Started             string          `json:"started"`
	WorkDir             string          `json:"work_dir"`
}

// evaluate fills the ratios and checks the targets.
func (r *Result) evaluate() {
	r.CPUs = runtime.NumCPU()
	r.CallBudget = int64(2 * ((r.Nodes + 99) / 100))
	if r.FloorSeconds > 0 {
		r.InitVsFloor = r.InitSeconds / r.FloorSeconds
	}
	r.Targets = map[string]bool{
		"init_within_1.5x_floor":        r.InitVsFloor <= 1.5,
		"init_calls_within_budget":      r.DescribeCallsInit <= r.CallBudget,
		"sync_calls_within_budget":      r.SyncCalls <= r.CallBudget,
		"no_request_limit_exceeded":     r.ThrottledResponses == 0,
		"peak_rss_under_300mib":         r.PeakRSSMiB < 300,
		"every_sync_saw_all_nodes":      r.SyncNodes == r.Nodes,
		"lifecycle_deleted_no_node_too": true, // run fails otherwise
	}
	r.Target = fmt.Sprintf("init <= 1.5x floor, DescribeInstances for init and a full sync <= %d, 0 throttled, RSS < 300 MiB", r.CallBudget)
	r.Met = true
	for _, ok := range r.Targets {
		r.Met = r.Met && ok
	}
}

// Print writes the table.
func (r *Result) Print(out io.Writer) {
	fmt.Fprintf(out, "\nNode benchmark: %d nodes, %d CPUs, cloudsim DescribeInstances limit %.0f/s\n\n",
		r.Nodes, r.CPUs, r.CloudsimDescribeQPS)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "measure\tours\tbaseline (no batching/cache)\tfloor (bare PATCH)\ttarget\tmet")
	baseline := func(v string) string {
		if r.BaselineInitSeconds == 0 {
			return "skipped"
		}
		return v
	}
	mark := func(key string) string {
		if r.Targets[key] {
			return "yes"
		}
		return "NO"
	}
	fmt.Fprintf(w, "initialize all nodes (s)\t%.1f\t%s\t%.1f\t<= 1.5x floor (%.2fx)\t%s\n", r.InitSeconds,
		baseline(fmt.Sprintf("%.1f", r.BaselineInitSeconds)), r.FloorSeconds, r.InitVsFloor, mark("init_within_1.5x_floor"))
	fmt.Fprintf(w, "DescribeInstances calls, init\t%d\t%s\t-\t<= %d\t%s\n", r.DescribeCallsInit,
		baseline(fmt.Sprint(r.BaselineDescribeCallsInit)), r.CallBudget, mark("init_calls_within_budget"))
	fmt.Fprintf(w, "full status sync: calls\t%d\t(~%d)\t-\t<= %d\t%s\n", r.SyncCalls, r.Nodes, r.CallBudget, mark("sync_calls_within_budget"))
	fmt.Fprintf(w, "full status sync: duration (s)\t%.2f\t\t\t\t\n", r.SyncSeconds)
	fmt.Fprintf(w, "%d NotReady for %.0fs: calls\t%d\t(~%d)\t-\t\t\n", r.LifecycleNotReady, r.LifecycleSeconds,
		r.LifecycleCalls, int(r.LifecycleSeconds/5)*r.LifecycleNotReady*2)
	fmt.Fprintf(w, "RequestLimitExceeded (whole run)\t%d\t\t\t0\t%s\n", r.ThrottledResponses, mark("no_request_limit_exceeded"))
	fmt.Fprintf(w, "CCM peak RSS (MiB)\t%.0f\t\t\t< 300\t%s\n", r.PeakRSSMiB, mark("peak_rss_under_300mib"))
	fmt.Fprintf(w, "CCM CPU (s, init+sync+lifecycle)\t%.1f\t\t\t\t\n", r.CCMCPUSeconds)
	_ = w.Flush()
	fmt.Fprintln(out, "\n(baseline figures in parentheses are upstream's one call per node, not measured)")
}
