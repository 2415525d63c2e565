package routes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

const (
	modePeriodic = "periodic"
	modeWatch    = "watch"

	benchID     = "AKIDccmkitROUTEBENCH000000000000000"
	benchKey    = "ccmkit-route-bench-key"
	benchRegion = "ap-guangzhou"
	benchVPC    = "vpc-bench001"
	benchTable  = "cls-bench001"
	// A /12 holds 4096 /24 pod CIDRs, and overlaps neither the instances'
	// 10.0.0.0/8 addresses nor the test apiserver's 10.96.0.0/16 services.
	benchClusterCIDR = "172.16.0.0/12"

	watchGate = "CloudControllerManagerWatchBasedRoutesReconciliation"

	// createRoutesPerSecond is cloudsim's (TKE's documented) limit on
	// CreateClusterRoute.
	createRoutesPerSecond = 20.0
)

// ModeResult is one mode's numbers. Durations are in seconds in the JSON.
type ModeResult struct {
	Mode  string `json:"mode"`
	Nodes int    `json:"nodes"`
	// Until every route is in the table, from the CCM's start.
	AllRoutesSeconds float64        `json:"allRoutesSeconds"`
	CallsToRoutes    map[string]int `json:"callsUntilAllRoutes"` // action -> calls (any result)
	Throttled        map[string]int `json:"throttled"`           // action -> RequestLimitExceeded answers, whole run
	// Until every node's NetworkUnavailable is False (RouteCreated).
	AllConditionsSeconds float64 `json:"allConditionsSeconds"`
	// Converged and idle: route list reads per minute.
	IdleDescribePerMinute float64 `json:"idleDescribeClusterRoutesPerMinute"` // of DescribeAction
	IdleSeconds           float64 `json:"idleSeconds"`
	// 10% of the nodes deleted: until their routes are gone.
	ChurnNodes   int            `json:"churnNodes"`
	ChurnSeconds float64        `json:"churnSeconds"`
	ChurnCalls   map[string]int `json:"churnCalls"`
	CCMFlags     []string       `json:"ccmFlags"`
	// The backend's route actions, and what its create limit forces.
	CreateAction   string  `json:"createAction"`
	DescribeAction string  `json:"describeAction"`
	DeleteAction   string  `json:"deleteAction"`
	FloorSeconds   float64 `json:"floorSeconds"`
	LogDir         string  `json:"logDir"`
}

// controlPlane is the apiserver and etcd every mode runs on, and the CCM's
// kubeconfig.
type controlPlane struct {
	cluster    *testcluster.Cluster
	kubeconfig string
}

func startControlPlane(ctx context.Context, dir string, log io.Writer) (*controlPlane, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "[%s routes] starting etcd and kube-apiserver %s\n", time.Now().Format("15:04:05"), testcluster.K8sVersion)
	cluster, err := testcluster.Start(dir)
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{cluster: cluster}
	if err = cluster.ApplyFile(ctx, filepath.Join("deploy", "rbac.yaml")); err == nil {
		cp.kubeconfig, err = cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	}
	if err != nil {
		_ = cluster.Stop()
		return nil, err
	}
	return cp, nil
}

// reset deletes the Nodes and Events a mode left (its CCM has stopped), so
// that the next mode starts as on a fresh control plane.
func (cp *controlPlane) reset(ctx context.Context, log io.Writer) error {
	start := time.Now()
	nodes := cp.cluster.Client.CoreV1().Nodes()
	list, err := nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("reset: list nodes: %w", err)
	}
	if err := forEach(ctx, len(list.Items), 32, func(i int) error {
		err := nodes.Delete(ctx, list.Items[i].Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reset: delete node %s: %w", list.Items[i].Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := poll(ctx, time.Minute, 100*time.Millisecond, func() (bool, error) {
		left, err := nodes.List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(left.Items) == 0, nil //nolint:nilerr // keep polling
	}); err != nil {
		return fmt.Errorf("reset: waiting for %d nodes to go: %w", len(list.Items), err)
	}
	if err := cp.cluster.Client.CoreV1().Events(metav1.NamespaceDefault).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("reset: delete events: %w", err)
	}
	fmt.Fprintf(log, "[%s routes] deleted the last mode's %d nodes and its events in %.1fs\n", time.Now().Format("15:04:05"),
		len(list.Items), time.Since(start).Seconds())
	return nil
}

func runMode(ctx context.Context, cfg Config, mode string, cp *controlPlane, log io.Writer) (ModeResult, error) {
	be := backendOf(mode)
	cfg.Nodes = be.nodes(cfg.Nodes)
	res := ModeResult{Mode: mode, Nodes: cfg.Nodes, Throttled: map[string]int{}, FloorSeconds: be.floorSeconds(cfg.Nodes),
		CreateAction: be.create, DescribeAction: be.describe, DeleteAction: be.remove}
	dir := filepath.Join(cfg.WorkDir, mode)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	res.LogDir = dir
	step := func(format string, args ...any) {
		fmt.Fprintf(log, "[%s routes %s] %s\n", time.Now().Format("15:04:05"), mode, fmt.Sprintf(format, args...))
	}
	cluster, kubeconfig := cp.cluster, cp.kubeconfig
	var err error

	// cloudsim with its built-in (documented) rate limits.
	sim := cloudsim.New(cloudsim.Options{
		Region: benchRegion,
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{benchID: benchKey},
			RouteTables: be.tkeTables,
		},
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return res, err
	}
	defer sim.Close()
	if err := be.setup(sim); err != nil {
		return res, err
	}
	instances := make([]cloudsim.Instance, cfg.Nodes)
	for i := range instances {
		instances[i] = cloudsim.Instance{Name: fmt.Sprintf("bench-%d", i), Zone: benchRegion + "-3", VpcID: benchVPC}
	}
	if instances, err = sim.AddInstances(instances...); err != nil {
		return res, err
	}

	step("registering %d nodes with pod CIDRs and NetworkUnavailable=True", cfg.Nodes)
	want := map[tencent.ClusterRoute]bool{}
	err = forEach(ctx, len(instances), 32, func(i int) error {
		in := instances[i]
		return registerNode(ctx, cluster, in.PrivateIP, in.PrivateIP, podCIDR(i))
	})
	if err != nil {
		return res, err
	}
	for i, in := range instances {
		want[tencent.ClusterRoute{DestinationCIDR: podCIDR(i), GatewayIP: in.PrivateIP}] = true
	}

	cloudConfig := filepath.Join(dir, "cloud.yaml")
	cc := fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\ncluster_cidr: %s\n%s",
		benchRegion, benchVPC, benchID, benchKey, simURL, benchClusterCIDR, be.config)
	if err := os.WriteFile(cloudConfig, []byte(cc), 0o600); err != nil {
		return res, err
	}
	args := []string{"--configure-cloud-routes=true", "--cluster-cidr=" + benchClusterCIDR}
	if mode == modeWatch {
		args = append(args, "--feature-gates="+watchGate+"=true")
	}
	args = append(args, cfg.CCMFlags...)
	res.CCMFlags = args

	sim.ResetCalls()
	step("starting the CCM %v (log: %s)", args, filepath.Join(dir, "ccm.log"))
	ccm, _, err := testcluster.CCM{Binary: cfg.CCMBinary, Provider: "tencentcloud", CloudConfig: cloudConfig,
		Kubeconfig: kubeconfig, Dir: dir, ExtraArgs: args}.Start()
	if err != nil {
		return res, err
	}
	defer ccm.Stop()
	start := time.Now()

	// Phase 1: every route in the table.
	if err := poll(ctx, cfg.Timeout, 100*time.Millisecond, func() (bool, error) {
		if exited, code := ccm.Exited(); exited {
			return false, fmt.Errorf("the CCM exited with code %d; see %s", code, filepath.Join(dir, "ccm.log"))
		}
		routes, err := be.routes(sim)
		if err != nil {
			return false, err
		}
		n := 0
		for _, r := range routes {
			if want[r] {
				n++
			}
		}
		return n == len(want), nil
	}); err != nil {
		return res, fmt.Errorf("waiting for %d routes: %w", len(want), err)
	}
	res.AllRoutesSeconds = time.Since(start).Seconds()
	res.CallsToRoutes = be.totals(sim.Calls())
	step("all %d routes exist after %.1fs; calls: %v", len(want), res.AllRoutesSeconds, res.CallsToRoutes)

	// Phase 2: every node's NetworkUnavailable condition cleared.
	if err := poll(ctx, cfg.Timeout, time.Second, func() (bool, error) {
		nodes, err := cluster.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // keep polling
		}
		for i := range nodes.Items {
			if !routeCreated(&nodes.Items[i]) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return res, fmt.Errorf("waiting for NetworkUnavailable=False: %w", err)
	}
	res.AllConditionsSeconds = time.Since(start).Seconds()
	step("every NetworkUnavailable is False after %.1fs", res.AllConditionsSeconds)

	// Phase 3: idle cost.
	addThrottled(res.Throttled, sim.Calls())
	sim.ResetCalls()
	step("idle for %s", cfg.Idle)
	select {
	case <-time.After(cfg.Idle):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	idle := sim.Calls()
	res.IdleSeconds = cfg.Idle.Seconds()
	res.IdleDescribePerMinute = float64(sum(idle[be.describe])) / cfg.Idle.Minutes()
	addThrottled(res.Throttled, idle)

	// Phase 4: churn: delete 10% of the nodes; their routes must go.
	sim.ResetCalls()
	res.ChurnNodes = max(1, cfg.Nodes/10)
	gone := map[string]bool{}
	for _, in := range instances[:res.ChurnNodes] {
		gone[in.PrivateIP] = true
	}
	churnStart := time.Now()
	if err := forEach(ctx, res.ChurnNodes, 32, func(i int) error {
		return cluster.Client.CoreV1().Nodes().Delete(ctx, instances[i].PrivateIP, metav1.DeleteOptions{})
	}); err != nil {
		return res, err
	}
	if err := poll(ctx, cfg.Timeout, 100*time.Millisecond, func() (bool, error) {
		routes, err := be.routes(sim)
		if err != nil {
			return false, err
		}
		for _, r := range routes {
			if gone[r.GatewayIP] {
				return false, nil
			}
		}
		return len(routes) == cfg.Nodes-res.ChurnNodes, nil
	}); err != nil {
		return res, fmt.Errorf("waiting for the deleted nodes' routes to go: %w", err)
	}
	res.ChurnSeconds = time.Since(churnStart).Seconds()
	res.ChurnCalls = be.totals(sim.Calls())
	addThrottled(res.Throttled, sim.Calls())
	step("the %d deleted nodes' routes are gone after %.1fs; calls: %v", res.ChurnNodes, res.ChurnSeconds, res.ChurnCalls)
	return res, nil
}

// registerNode creates a node as a kubelet with --cloud-provider=external
// and a CNI that waits for its route would: uninitialized taint, the host's
// InternalIP, Ready, NetworkUnavailable=True, and a pod CIDR (set by the
// node IPAM, which does not run here).
func registerNode(ctx context.Context, c *testcluster.Cluster, name, ip, podCIDR string) error {
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{
			PodCIDR: podCIDR, PodCIDRs: []string{podCIDR},
			Taints: []corev1.Taint{{Key: cloudapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now},
				{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionTrue, Reason: "NoRouteCreated", LastTransitionTime: now},
			},
		},
	}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register node %s: %w", name, err)
	}
	return nil
}

// podCIDR is node i's /24 of the cluster CIDR (up to 4096 nodes).
func podCIDR(i int) string { return fmt.Sprintf("172.%d.%d.0/24", 16+i/256, i%256) }

func routeCreated(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeNetworkUnavailable {
			return c.Status == corev1.ConditionFalse
		}
	}
	return false
}

// forEach runs f(0..n-1) on workers goroutines and returns the first error.
func forEach(ctx context.Context, n, workers int, f func(i int) error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

func poll(ctx context.Context, timeout, every time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-time.After(every):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// totals keeps the backend's route actions' call counts, any result.
func (b backend) totals(calls map[string]map[string]int) map[string]int {
	out := map[string]int{}
	for _, a := range []string{b.describe, "DescribeClusterRouteTables", b.create, b.remove} {
		out[a] = sum(calls[a])
	}
	return out
}

func addThrottled(into map[string]int, calls map[string]map[string]int) {
	for action, codes := range calls {
		if n := codes["RequestLimitExceeded"]; n > 0 {
			into[action] += n
		}
	}
}
