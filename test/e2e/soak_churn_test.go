//go:build e2e && soak

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/kubeproxy"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
)

// The soak's client load: lighter than the e2e default, as two clouds and
// their transient Services share a loaded machine for half an hour.
const (
	soakRate          = 20 // short requests a second per load
	soakTransientRate = 10
)

// run is the cloud's churn until end (soak_test.go), then its inventory
// and teardown. A failed step ends the churn but not the inventory.
func (c *soakCloud) run(t *testing.T, end time.Time) {
	c.counts.Cloud = c.name
	c.inventory.Cloud = c.name
	sel := "soak-" + c.name
	// Every node serves every NodePort: the persistent Services', and two
	// for the transient Services, used in turn (a deleted Service's
	// NodePort is free again one iteration later).
	transientPorts := [2]int32{nextNodePort(), nextNodePort()}
	var nps []int32
	for _, s := range c.persistent {
		for _, p := range s.Spec.Ports {
			nps = append(nps, p.NodePort)
		}
	}
	nps = append(nps, transientPorts[:]...)
	seq := 0
	newNode := func() upgradeNode {
		seq++
		ip := nextIP()
		var stops []func()
		for _, np := range nps {
			stops = append(stops, serveStoppable(t, ip, np, ip))
		}
		in := c.cloud.instance(t, fmt.Sprintf("%s-%d", sel, seq), ip)
		return upgradeNode{in: in, node: c.cloud.node(in, sel), stop: func() {
			for _, s := range stops {
				s()
			}
		}}
	}
	r := &soakRun{c: c, up: &upgradeRun{t: t, c: c.cloud}}
	var nodes []upgradeNode
	defer func() { c.teardown(t, nodes) }()
	for range 3 {
		n := newNode()
		if err := r.register(n); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	var addrs []string
	for _, spec := range c.persistent {
		svc, addr, err := r.serve(spec, nodes)
		if err != nil {
			t.Fatal(err)
		}
		r.up.svcs = append(r.up.svcs, svc)
		addrs = append(addrs, addr...)
	}
	c.counts.PersistentVIPs = len(addrs)
	load := traffic.Start(traffic.Options{Addrs: addrs, Rate: soakRate})
	var transient traffic.Counts
	for i := 0; time.Now().Before(end); i++ {
		next := newNode()
		if err := r.replace(nodes[0], next); err != nil {
			t.Errorf("iteration %d: replace node %s: %v", i, nodes[0].ip(), err)
			break
		}
		nodes = append(nodes[1:], next)
		c.counts.NodesReplaced++
		got, err := r.transient(sel, i, transientPorts[i%2], nodes)
		transient.Requests += got.Requests
		transient.RequestsFailed += got.RequestsFailed
		transient.ConnectionsReset += got.ConnectionsReset
		if got.LastError != "" {
			transient.LastError = got.LastError
		}
		if err != nil {
			t.Errorf("iteration %d: transient Service: %v", i, err)
			break
		}
		c.counts.Iterations++
	}
	c.traffic = load.Stop()
	c.counts.TransientRequests = transient.Requests
	c.traffic.Requests += transient.Requests
	c.traffic.RequestsFailed += transient.RequestsFailed
	c.traffic.ConnectionsReset += transient.ConnectionsReset
	if transient.LastError != "" {
		c.traffic.LastError = transient.LastError
	}
	t.Logf("%s: %s", c.name, c.traffic)
}

// soakRun is one cloud's churn under way; up holds the persistent
// Services, for upgradeRun's listener checks.
type soakRun struct {
	c  *soakCloud
	up *upgradeRun
}

func (r *soakRun) client() kubernetes.Interface { return r.c.client }

func (r *soakRun) register(n upgradeNode) error {
	if _, err := r.client().CoreV1().Nodes().Create(context.Background(), n.node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register node %s: %w", n.node.Name, err)
	}
	return nil
}

// serve creates spec, waits for its VIP and for an answer from every node
// on every port, and returns the Service and its VIP:port addresses.
func (r *soakRun) serve(spec *corev1.Service, nodes []upgradeNode) (*corev1.Service, []string, error) {
	svc, err := r.create(spec)
	if err != nil {
		return nil, nil, err
	}
	r.c.counts.ServicesCreated++
	var vip string
	if err := until("Service "+svc.Name+" has an ingress IP", 2*time.Minute, func() bool {
		s, err := r.client().CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{})
		if err == nil && len(s.Status.LoadBalancer.Ingress) > 0 {
			svc, vip = s, s.Status.LoadBalancer.Ingress[0].IP
		}
		return vip != ""
	}); err != nil {
		return svc, nil, err
	}
	var want []string
	for _, n := range nodes {
		want = append(want, n.ip())
	}
	var addrs []string
	for _, p := range svc.Spec.Ports {
		addr := fmt.Sprintf("%s:%d", vip, p.Port)
		seen := map[string]bool{}
		if err := until("every node answers on "+addr, 2*time.Minute, func() bool {
			if body, err := httpGet("http://" + addr + "/"); err == nil && slices.Contains(want, body) {
				seen[body] = true
			}
			return len(seen) == len(want)
		}); err != nil {
			return svc, nil, fmt.Errorf("%w (answered: %v)", err, seen)
		}
		addrs = append(addrs, addr)
	}
	return svc, addrs, nil
}

// create creates spec, again while its NodePort is still held by the
// Service deleted before it (the apiserver frees it as the object goes).
func (r *soakRun) create(spec *corev1.Service) (*corev1.Service, error) {
	var created *corev1.Service
	var err error
	_ = until("create Service "+spec.Name, time.Minute, func() bool {
		created, err = r.client().CoreV1().Services(spec.Namespace).Create(context.Background(), spec, metav1.CreateOptions{})
		return err == nil || !strings.Contains(err.Error(), "already allocated")
	})
	if err != nil {
		return nil, fmt.Errorf("create Service %s: %w", spec.Name, err)
	}
	return created, nil
}

// replace replaces old with repl on every persistent load balancer, as
// upgradeRun.replace does (the autoscaler's order), on the cloud's own
// cluster, and waits for the cloud's other state (routes) to follow.
func (r *soakRun) replace(old, repl upgradeNode) error {
	if err := r.register(repl); err != nil {
		return err
	}
	u := r.up
	if err := until(repl.ip()+" in service", 2*time.Minute, func() bool {
		return u.everyListener(func(tg map[string]bool) bool { return tg[repl.ip()] })
	}); err != nil {
		return err
	}
	if err := r.taint(old.ip()); err != nil {
		return err
	}
	if err := until(old.ip()+" out of service after the taint", 2*time.Minute, func() bool {
		return u.everyListener(func(tg map[string]bool) bool { return !tg[old.ip()] })
	}); err != nil {
		return err
	}
	if err := r.c.cloud.terminate(old.in); err != nil {
		return err
	}
	if err := r.client().CoreV1().Nodes().Delete(context.Background(), old.ip(), metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := until(old.ip()+" deregistered", 2*time.Minute, func() bool {
		return u.everyListener(func(tg map[string]bool) bool { _, present := tg[old.ip()]; return !present })
	}); err != nil {
		return err
	}
	old.stop()
	if r.c.cloud.converged != nil {
		last := ""
		// The current nodes are unknown here; the route check needs only
		// the one that joined and the one that went.
		if err := until("routes follow", 2*time.Minute, func() bool {
			last = r.c.cloud.converged([]upgradeNode{repl}, []upgradeNode{old})
			return last == ""
		}); err != nil {
			return fmt.Errorf("%w: %s", err, last)
		}
	}
	return nil
}

// taint puts the cluster autoscaler's deletion taint on the node.
func (r *soakRun) taint(name string) error {
	var err error
	for range 5 {
		var n *corev1.Node
		if n, err = r.client().CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: kubeproxy.TaintToBeDeleted, Value: fmt.Sprint(time.Now().Unix()), Effect: corev1.TaintEffectNoSchedule})
		if _, err = r.client().CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("taint node %s: %w", name, err)
}

// transient is iteration i's Service: created, answering from every node,
// a load of its own through its VIP, changed until the cloud shows the
// change (the load still running), then deleted with its load balancer.
func (r *soakRun) transient(sel string, i int, nodePort int32, nodes []upgradeNode) (traffic.Counts, error) {
	var counts traffic.Counts
	spec, key, value := r.c.transient(sel, i)
	spec.Spec.Ports[0].NodePort = nodePort
	svc, addrs, err := r.serve(spec, nodes)
	if err != nil {
		return counts, err
	}
	load := traffic.Start(traffic.Options{Addrs: addrs, Rate: soakTransientRate, LongLived: 1})
	stopped := false
	stop := func() {
		if !stopped {
			counts, stopped = load.Stop(), true
		}
	}
	defer stop()
	lbs := r.c.cloud.lbs(svc.UID)
	if len(lbs) != 1 {
		return counts, fmt.Errorf("Service %s has %d load balancers, want 1: %v", svc.Name, len(lbs), lbs)
	}
	before := lbs[0]
	if err := r.annotate(svc, key, value); err != nil {
		return counts, err
	}
	if err := until(fmt.Sprintf("load balancer %s shows %s=%s", before.id, key, value), 2*time.Minute, func() bool {
		now := r.c.cloud.lbs(svc.UID)
		return len(now) == 1 && now[0].id == before.id && now[0].settings != before.settings
	}); err != nil {
		return counts, err
	}
	r.c.counts.ServicesChanged++
	// Traffic through the changed load balancer, then it goes.
	from := load.Counts().Requests
	if err := until("requests through the changed "+before.id, time.Minute, func() bool {
		return load.Counts().Requests >= from+2*soakTransientRate
	}); err != nil {
		return counts, err
	}
	stop()
	if err := r.client().CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
		return counts, fmt.Errorf("delete Service %s: %w", svc.Name, err)
	}
	if err := until("Service "+svc.Name+" released (finalizer removed)", 2*time.Minute, func() bool {
		_, err := r.client().CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}); err != nil {
		return counts, err
	}
	if left := r.c.cloud.lbs(svc.UID); len(left) != 0 {
		return counts, fmt.Errorf("Service %s deleted, its load balancers left: %v", svc.Name, left)
	}
	r.c.counts.ServicesDeleted++
	return counts, nil
}

func (r *soakRun) annotate(svc *corev1.Service, key, value string) error {
	var err error
	for range 5 {
		var s *corev1.Service
		if s, err = r.client().CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{}); err != nil {
			return err
		}
		s.Annotations[key] = value
		if _, err = r.client().CoreV1().Services(s.Namespace).Update(context.Background(), s, metav1.UpdateOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("annotate Service %s: %w", svc.Name, err)
}

// teardown takes the inventory with every Service and Node in place, then
// deletes them and finds what the CCM left.
func (c *soakCloud) teardown(t *testing.T, nodes []upgradeNode) {
	ctx := context.Background()
	svcs, err := c.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("inventory: list Services: %v", err)
		return
	}
	nodeList, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("inventory: list Nodes: %v", err)
		return
	}
	var lbSvcs []corev1.Service
	for _, s := range svcs.Items {
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
			lbSvcs = append(lbSvcs, s)
		}
	}
	c.inventory.Checked = map[string]int{"services": len(lbSvcs), "nodes": len(nodeList.Items)}
	c.inventory.Problems = c.inventoryOf(lbSvcs, nodeList.Items, c.inventory.Checked)

	for _, s := range lbSvcs {
		if err := c.client.CoreV1().Services(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("teardown: delete Service %s: %v", s.Name, err)
		}
	}
	for _, s := range lbSvcs {
		if err := until("Service "+s.Name+" released", 2*time.Minute, func() bool {
			_, err := c.client.CoreV1().Services(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}); err != nil {
			t.Errorf("teardown: %v", err)
		}
	}
	for _, n := range nodes {
		if err := c.cloud.terminate(n.in); err != nil {
			t.Errorf("teardown: terminate %s: %v", n.in.ID, err)
		}
		if err := c.client.CoreV1().Nodes().Delete(ctx, n.ip(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("teardown: delete Node %s: %v", n.ip(), err)
		}
	}
	// Routes go at the route controller's next pass: wait for the cloud to
	// be empty, then record what is left.
	_ = until("the cloud is empty of what the CCM made", 2*time.Minute, func() bool { return len(c.leftovers()) == 0 })
	c.inventory.AfterTeardown = c.leftovers()
}

// byIP is the cluster's Nodes by InternalIP.
func byIP(nodes []corev1.Node) map[string]corev1.Node {
	out := map[string]corev1.Node{}
	for _, n := range nodes {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				out[a.Address] = n
			}
		}
	}
	return out
}

func servicePorts(s corev1.Service) map[int]bool {
	out := map[int]bool{}
	for _, p := range s.Spec.Ports {
		out[int(p.Port)] = true
	}
	return out
}

// sameSet compares a load balancer's target addresses with the nodes.
func sameSet(targets map[string]bool, nodes map[string]corev1.Node) bool {
	if len(targets) != len(nodes) {
		return false
	}
	for ip := range nodes {
		if !targets[ip] {
			return false
		}
	}
	return true
}

// soakTencent is Tencent Cloud under the soak: the suite's cluster, its
// CCM paused and one of the soak's own running every controller (routes
// included) under the shipped CAM policy.
func soakTencent(t *testing.T) *soakCloud {
	pauseMainCCM(t)
	up := tencentUpgrade()
	p, _, err := testcluster.CCM{Binary: suite.ccmBinary, Provider: "tencentcloud", CloudConfig: writeRoutesCloudConfig(suite.dir, "cloud-soak-tencentcloud.yaml"),
		Kubeconfig: suite.kubeconfig, Dir: suite.dir, Name: "ccm-soak-tencentcloud", ExtraArgs: append(routeArgs(), soakMetricsArgs...)}.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	if err := waitHealthy(p, time.Minute); err != nil {
		t.Fatalf("the soak's Tencent CCM: %v\n%s", err, tail(p.Output(), 20))
	}
	sel := "soak-tencentcloud"
	return &soakCloud{
		name: "tencentcloud", client: suite.cluster.Client, ccm: p, cloud: up,
		persistent: upgradeSpecs(sel, []int32{8120, 8121}),
		transient: func(sel string, i int) (*corev1.Service, string, string) {
			// churnServiceSpec's interval is 3s; the change makes it 4s.
			return upgradeSpecs(sel, []int32{8122})[0], annotations.HealthCheckInterval.String(), "4s"
		},
		inventoryOf: tencentInventory,
		leftovers: func() []string {
			var out []string
			for _, lb := range suite.sim.Tencent().CLB().LoadBalancers() {
				out = append(out, "CLB "+lb.ID)
			}
			if rt, err := suite.sim.Tencent().TKE().RouteTable(routeTable); err != nil {
				out = append(out, err.Error())
			} else {
				for _, r := range rt.Routes {
					out = append(out, fmt.Sprintf("route %s via %s", r.DestinationCIDR, r.GatewayIP))
				}
			}
			return out
		},
	}
}

// tencentInventory: every CLB belongs to a Service, every listener to one
// of its ports, every target (and only those) is a Node, no security group
// is bound (none was asked for), every route belongs to a Node and every
// Node with a pod CIDR has its route; every Service has one CLB with a
// listener per port.
func tencentInventory(svcs []corev1.Service, nodes []corev1.Node, checked map[string]int) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	byUID := map[string]corev1.Service{}
	for _, s := range svcs {
		byUID[string(s.UID)] = s
	}
	ips := byIP(nodes)
	perSvc := map[string]int{}
	for _, lb := range suite.sim.Tencent().CLB().LoadBalancers() {
		checked["clbs"]++
		svc, ok := byUID[lb.Tags[clbops.TagServiceUID]]
		if !ok {
			bad("CLB %s (tags %v) belongs to no Service", lb.ID, lb.Tags)
			continue
		}
		perSvc[string(svc.UID)]++
		if len(lb.SecurityGroups) > 0 {
			bad("CLB %s of Service %s: security groups %v bound, none asked for", lb.ID, svc.Name, lb.SecurityGroups)
		}
		ports, seen := servicePorts(svc), map[int]bool{}
		for _, l := range lb.Listeners {
			checked["listeners"]++
			if !ports[l.Port] {
				bad("CLB %s listener %s (port %d) belongs to no port of Service %s", lb.ID, l.ID, l.Port, svc.Name)
			}
			seen[l.Port] = true
			targets := map[string]bool{}
			for _, tg := range l.Targets {
				checked["targets"]++
				ip := tg.IP
				if ip == "" {
					ip = tg.EniIP
				}
				if _, ok := ips[ip]; !ok {
					bad("CLB %s listener %d: target %s (%s) is no Node", lb.ID, l.Port, ip, tg.InstanceID)
				}
				targets[ip] = true
			}
			if !sameSet(targets, ips) {
				bad("CLB %s listener %d: targets %v, want every Node %v", lb.ID, l.Port, targets, keys(ips))
			}
		}
		for p := range ports {
			if !seen[p] {
				bad("CLB %s of Service %s: no listener for port %d", lb.ID, svc.Name, p)
			}
		}
	}
	for _, s := range svcs {
		if perSvc[string(s.UID)] != 1 {
			bad("Service %s has %d CLBs, want 1", s.Name, perSvc[string(s.UID)])
		}
	}
	rt, err := suite.sim.Tencent().TKE().RouteTable(routeTable)
	if err != nil {
		return append(problems, err.Error())
	}
	routed := map[string]bool{}
	for _, r := range rt.Routes {
		checked["routes"]++
		n, ok := ips[r.GatewayIP]
		if !ok || n.Spec.PodCIDR != r.DestinationCIDR {
			bad("route %s via %s belongs to no Node", r.DestinationCIDR, r.GatewayIP)
		}
		routed[r.GatewayIP] = true
	}
	for ip, n := range ips {
		if n.Spec.PodCIDR != "" && !routed[ip] {
			bad("Node %s (pod CIDR %s) has no route", n.Name, n.Spec.PodCIDR)
		}
	}
	return problems
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// soakOCI is OCI under the soak: a control plane of its own (so that the
// Tencent CCM does not claim its Services), with the shipped RBAC and a
// kube-proxy stand-in, and an OCI CCM under the shipped policy (the suite's
// CCM user).
func soakOCI(t *testing.T) *soakCloud {
	e := theOCIEnv
	e.prepare(t)
	e.pause(t)
	dir := filepath.Join(suite.dir, "soak-oci-cluster")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cl, err := testcluster.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := kubeproxy.New().Watch(ctx, cl.Client, func(err error) { t.Logf("kube-proxy stand-in (OCI cluster): %v", err) }); err != nil {
		t.Fatal(err)
	}
	if err := cl.ApplyFile(ctx, filepath.Join(repoRoot(), "deploy", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cl.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := testcluster.CCM{Binary: suite.ccmBinary, Provider: "oci", CloudConfig: e.writeConfig("cloud-soak-oci.yaml", ""),
		Kubeconfig: kubeconfig, Dir: suite.dir, Name: "ccm-soak-oci", ExtraArgs: soakMetricsArgs}.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	if err := waitHealthy(p, time.Minute); err != nil {
		t.Fatalf("the soak's OCI CCM: %v\n%s", err, tail(p.Output(), 20))
	}
	network := ociRules()
	sel := "soak-oci"
	// kind's health check annotations (milliseconds) win over the neutral
	// ones; the change doubles the interval.
	kind := func(k string) (map[string]string, string) {
		key := annotations.OCILBHealthCheckInterval.Name
		anns := map[string]string{annotations.OCILoadBalancerType.String(): k}
		if k == "nlb" {
			key = annotations.OCINLBHealthCheckInterval.Name
			anns[annotations.OCINLBHealthCheckTimeout.String()] = "500"
			anns[annotations.OCINLBHealthCheckRetries.String()] = "2"
		} else {
			anns[annotations.OCILBHealthCheckTimeout.String()] = "500"
			anns[annotations.OCILBHealthCheckRetries.String()] = "2"
		}
		anns[string(key)] = "1000"
		return anns, string(key)
	}
	lb, _ := kind("lb")
	nlb, _ := kind("nlb")
	return &soakCloud{
		name: "oci", client: cl.Client, ccm: p, cloud: ociUpgrade(),
		persistent: upgradeSpecs(sel, []int32{8112, 8113}, lb, nlb),
		transient: func(sel string, i int) (*corev1.Service, string, string) {
			anns, key := kind([]string{"lb", "nlb"}[i%2])
			return upgradeSpecs(sel, []int32{8114}, anns)[0], key, "2000"
		},
		inventoryOf: func(svcs []corev1.Service, nodes []corev1.Node, checked map[string]int) []string {
			problems := ociInventory(svcs, nodes, checked)
			if now := ociRules(); now != network {
				problems = append(problems, "the security lists or NSGs changed (mode None: the CCM manages no rule):\nbefore: "+network+"\nafter:  "+now)
			}
			return problems
		},
		leftovers: func() []string {
			var out []string
			for _, lb := range suite.sim.OCI().LoadBalancers() {
				if ociLive(lb) && lb.CompartmentID == ociCompartment {
					out = append(out, lb.Kind+" "+lb.ID)
				}
			}
			if now := ociRules(); now != network {
				out = append(out, "security lists or NSGs changed: "+now)
			}
			return out
		},
	}
}

// ociRules is the OCI network's security lists and NSGs with their rules,
// as JSON: the soak's CCM (security list management None) must leave them.
func ociRules() string {
	st := suite.sim.OCI().Network()
	b, _ := json.Marshal(struct {
		SL  any `json:"securityLists"`
		NSG any `json:"nsgs"`
	}{st.SecurityLists, st.NetworkSecurityGroups})
	return string(b)
}

// ociInventory: every live load balancer of the compartment (both kinds)
// belongs to a Service and is of its kind, every listener to one of its
// ports, every backend (and only those) is a Node; every Service has one.
func ociInventory(svcs []corev1.Service, nodes []corev1.Node, checked map[string]int) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	byUID := map[string]corev1.Service{}
	for _, s := range svcs {
		byUID[string(s.UID)] = s
	}
	ips := byIP(nodes)
	byOCID := map[string]string{} // instance OCID -> node IP
	for ip, n := range ips {
		byOCID[strings.TrimPrefix(n.Spec.ProviderID, "oci://")] = ip
	}
	perSvc := map[string]int{}
	for _, lb := range suite.sim.OCI().LoadBalancers() {
		if !ociLive(lb) || lb.CompartmentID != ociCompartment {
			continue
		}
		checked[lb.Kind+"s"]++
		svc, ok := byUID[lb.DisplayName]
		if !ok {
			bad("%s %s (%s) belongs to no Service", lb.Kind, lb.ID, lb.DisplayName)
			continue
		}
		perSvc[string(svc.UID)]++
		wantKind := "loadbalancer"
		if svc.Annotations[annotations.OCILoadBalancerType.String()] == "nlb" {
			wantKind = "networkloadbalancer"
		}
		if lb.Kind != wantKind {
			bad("%s %s of Service %s: want a %s", lb.Kind, lb.ID, svc.Name, wantKind)
		}
		ports, seen := servicePorts(svc), map[int]bool{}
		for _, l := range lb.Listeners {
			checked["listeners"]++
			if !ports[l.Port] {
				bad("%s %s listener %s (port %d) belongs to no port of Service %s", lb.Kind, lb.ID, l.Name, l.Port, svc.Name)
			}
			seen[l.Port] = true
		}
		for p := range ports {
			if !seen[p] {
				bad("%s %s of Service %s: no listener for port %d", lb.Kind, lb.ID, svc.Name, p)
			}
		}
		for _, bs := range lb.BackendSets {
			checked["backend sets"]++
			targets := map[string]bool{}
			for _, b := range bs.Backends {
				checked["backends"]++
				ip := b.IPAddress
				if ip == "" {
					ip = byOCID[b.TargetID]
				}
				if _, ok := ips[ip]; !ok {
					bad("%s %s backend set %s: backend %s (%s) is no Node", lb.Kind, lb.ID, bs.Name, b.Name, b.TargetID)
				}
				targets[ip] = true
			}
			if !sameSet(targets, ips) {
				bad("%s %s backend set %s: backends %v, want every Node %v", lb.Kind, lb.ID, bs.Name, targets, keys(ips))
			}
		}
	}
	for _, s := range svcs {
		if perSvc[string(s.UID)] != 1 {
			bad("Service %s has %d load balancers, want 1", s.Name, perSvc[string(s.UID)])
		}
	}
	return problems
}
