package lb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// fanoutCloud is what one cloud brings to a fan-out run (the per-cloud
// hook, like e2e's cloudEnv and lb-scale's scaleFixture): its cloudsim, its
// machines and their Nodes, the CCM's config, how its load balancers are
// read, and the floor it computes once the Services converged.
type fanoutCloud struct {
	provider string // --cloud-provider
	sim      *cloudsim.Sim
	config   string                               // the CCM's cloud config, with no drift check during the run
	machine  func(k int) cloudsim.Instance        // machine k, not yet added
	node     func(cloudsim.Instance) *corev1.Node // the initialized Node of an added machine
	nodeName func(cloudsim.Instance) string       // the Node name the cloud's CCM maps to a machine
	member   func(cloudsim.Instance) string       // what a load balancer lists a machine as
	// before runs before the nodes are registered (Tencent: the TLS Secret).
	before    func(ctx context.Context, cluster *testcluster.Cluster) error
	createSvc func(ctx context.Context, cluster *testcluster.Cluster, n int) (map[string]time.Time, error)
	waitDone  func(ctx context.Context, n int, want []string, timeout time.Duration) (time.Time, error)
	// quietBefore is the action waitQuiet watches before the burst ("":
	// every action); quietIgnore an action the CCM polls even when quiet.
	quietBefore, quietIgnore string
	split                    func(map[string]map[string]int) (writes, reads map[string]int)
	refusals                 func(calls map[string]map[string]int, throttled, busy map[string]int)
	// converged sets the result's floor from the converged load balancers
	// and says what converged; done says what the burst took.
	converged func() string
	done      func(FanoutRun) string
}

// runFanoutOn is one fan-out run on a fresh control plane and the cloud
// newCloud starts (after the control plane; the run closes its cloudsim):
// Services on the initial nodes, then the burst (measureBurst).
func runFanoutOn(ctx context.Context, cfg FanoutConfig, section, dir string, step func(string, ...any), newCloud func() (*fanoutCloud, error)) (FanoutRun, error) {
	run := FanoutRun{Throttled: map[string]int{}, Busy: map[string]int{}, LogDir: dir}
	cluster, kubeconfig, err := startFanoutCluster(ctx, dir, step)
	if err != nil {
		return run, fmt.Errorf("%s: %w", section, err)
	}
	defer func() { _ = cluster.Stop() }() // at exit: nothing is left to do about a failed stop
	c, err := newCloud()
	if err != nil {
		return run, err
	}
	defer c.sim.Close()
	if c.before != nil {
		if err := c.before(ctx, cluster); err != nil {
			return run, err
		}
	}

	step("registering %d initialized nodes", cfg.InitialNodes)
	initial := make([]string, cfg.InitialNodes)
	for k := range cfg.InitialNodes {
		added, err := c.sim.AddInstances(c.machine(k))
		if err != nil {
			return run, err
		}
		initial[k] = c.member(added[0])
		node := c.node(added[0])
		if _, err := cluster.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return run, fmt.Errorf("%s: create node %s: %w", section, node.Name, err)
		}
	}

	cloudConfig := filepath.Join(dir, "cloud.yaml")
	if err := os.WriteFile(cloudConfig, []byte(c.config), 0o600); err != nil {
		return run, err
	}
	args := append(slices.Clone(nodes.RecommendedFlags), "--controllers=service,cloud-node",
		fmt.Sprintf("--concurrent-service-syncs=%d", cfg.Syncs), "--v=2")
	step("starting the %s CCM (service and node controllers, --concurrent-service-syncs=%d)", c.provider, cfg.Syncs)
	ccm, _, err := testcluster.CCM{
		Binary: cfg.CCMBinary, Provider: c.provider, CloudConfig: cloudConfig, Kubeconfig: kubeconfig, Dir: dir, Name: "ccm",
		ExtraArgs: args,
	}.Start()
	if err != nil {
		return run, err
	}
	defer ccm.Stop()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = ccm.WaitForOutput(wctx, "Starting service controller")
	cancel()
	if err != nil {
		return run, err
	}

	step("creating %d LoadBalancer Services on %d nodes", cfg.Services, cfg.InitialNodes)
	created, err := c.createSvc(ctx, cluster, cfg.Services)
	if err != nil {
		return run, err
	}
	if _, err := waitIngress(ctx, cluster, created, cfg.Timeout); err != nil {
		return run, err
	}
	if _, err := c.waitDone(ctx, cfg.Services, initial, cfg.Timeout); err != nil {
		return run, fmt.Errorf("%s: before the burst: %w", section, err)
	}
	if err := waitQuiet(ctx, c.sim, c.quietBefore, 0, cfg.Timeout); err != nil {
		return run, err
	}
	step("%s", c.converged())

	burst := make([]cloudsim.Instance, cfg.BurstNodes)
	want := slices.Clone(initial)
	for i := range burst {
		burst[i] = c.machine(cfg.InitialNodes + i)
		want = append(want, c.member(burst[i]))
	}
	err = measureBurst(ctx, cluster, c.sim, ccm, &run, step, burstProbe{
		machines: burst, nodeName: c.nodeName, timeout: cfg.Timeout,
		waitDone: func() (time.Time, error) { return c.waitDone(ctx, cfg.Services, want, cfg.Timeout) },
		split:    c.split, refusals: c.refusals, quietIgnore: c.quietIgnore,
		converged: func(run FanoutRun) { step("%s", c.done(run)) },
	})
	if err != nil {
		return run, fmt.Errorf("%s: %w", section, err)
	}
	return run, nil
}
