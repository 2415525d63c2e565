//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Load balancer scenarios. Each test labels its own nodes and selects them
// with the lb.ccmkit.io/node-selector annotation, so that nodes left by
// other tests never become its targets. The nodes are cloudsim instances on
// loopback addresses; a small HTTP server on <private IP>:<NodePort> stands
// in for kube-proxy, and cloudsim's data plane forwards VIP:port to it.

const lbNodeLabel = "e2e.ccmkit.io/lb"

// lbNode registers a node for a cloudsim instance as the CCM leaves it once
// initialized (providerID set, no uninitialized taint, Ready), labeled
// for the test's node selector from the start: the service controller
// re-syncs load balancers when the node set changes, not when a node's
// ordinary labels do.
func lbNode(t *testing.T, selector string) cloudsim.Instance {
	t.Helper()
	return lbNodeAt(t, selector, nextIP())
}

// lbNodeAt is lbNode with the instance's private IP chosen by the caller.
func lbNodeAt(t *testing.T, selector, ip string) cloudsim.Instance {
	t.Helper()
	added, err := suite.sim.AddInstances(cloudsim.Instance{
		ID: fmt.Sprintf("ins-e2e%05d", idSeq.Add(1)), Name: "lb-" + selector, Zone: zone,
		PrivateIP: ip, VpcID: vpcID, SubnetID: "subnet-e2e00001", State: "RUNNING",
	})
	if err != nil {
		t.Fatal(err)
	}
	in := added[0]
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: in.PrivateIP, Labels: map[string]string{
			corev1.LabelHostname: in.PrivateIP, lbNodeLabel: selector,
		}},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID)},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
	if _, err := suite.cluster.Client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
	})
	return in
}

func labelNode(t *testing.T, name, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := suite.cluster.Client.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

var svcSeq, nodePortSeq atomic.Int32

// nextNodePort hands out NodePorts in the Service range that no other test
// uses. Tests choose them so that the node servers can listen before the
// load balancer probes them: a target found unhealthy takes three
// successful checks (15 s) to come back.
func nextNodePort() int32 { return 31500 + nodePortSeq.Add(1) }

// lbServiceSpec is a LoadBalancer Service selecting the nodes labeled
// selector, with one TCP port per entry of ports, each with its own
// NodePort (see nextNodePort).
func lbServiceSpec(name, selector string, ports ...int32) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, svcSeq.Add(1)),
			Annotations: map[string]string{string(annotations.NodeSelector): lbNodeLabel + "=" + selector}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name}},
	}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", p), Protocol: corev1.ProtocolTCP,
			Port: p, TargetPort: intstr.FromInt32(8080), NodePort: nextNodePort()})
	}
	return svc
}

// createService creates svc; at the end of the test it deletes it and waits
// until the CCM has released it (finalizer removed, load balancer deleted).
func createService(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	c := suite.cluster.Client.CoreV1().Services(svc.Namespace)
	created, err := c.Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), created.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete Service %s: %v", created.Name, err)
			return
		}
		waitServiceGone(t, created, 60*time.Second)
	})
	return created
}

func getService(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	s, err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func updateService(t *testing.T, svc *corev1.Service, change func(*corev1.Service)) *corev1.Service {
	t.Helper()
	for range 5 {
		s := getService(t, svc)
		change(s)
		updated, err := suite.cluster.Client.CoreV1().Services(s.Namespace).Update(context.Background(), s, metav1.UpdateOptions{})
		if err == nil {
			return updated
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatalf("update Service %s: conflicts", svc.Name)
	return nil
}

func waitServiceGone(t *testing.T, svc *corev1.Service, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("Service %s still exists after %s (finalizer not removed?); events: %v", svc.Name, d, serviceEvents(t, svc, ""))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitIngress waits for the Service's load balancer IP.
func waitIngress(t *testing.T, svc *corev1.Service, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := getService(t, svc)
		if ing := s.Status.LoadBalancer.Ingress; len(ing) > 0 && ing[0].IP != "" {
			return ing[0].IP
		}
		if time.Now().After(deadline) {
			t.Fatalf("Service %s got no ingress IP within %s; events: %v", svc.Name, d, serviceEvents(t, svc, ""))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// serviceEvents returns "reason: message" of the Service's events (of one
// reason, unless reason is empty).
func serviceEvents(t *testing.T, svc *corev1.Service, reason string) []string {
	t.Helper()
	set := fields.Set{"involvedObject.kind": "Service", "involvedObject.name": svc.Name}
	if reason != "" {
		set["reason"] = reason
	}
	list, err := suite.cluster.Client.CoreV1().Events(svc.Namespace).List(context.Background(), metav1.ListOptions{FieldSelector: set.AsSelector().String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.UID == svc.UID {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

func waitEvent(t *testing.T, svc *corev1.Service, reason string, contains []string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		for _, e := range serviceEvents(t, svc, reason) {
			ok := true
			for _, c := range contains {
				ok = ok && strings.Contains(e, c)
			}
			if ok {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event containing %q on Service %s within %s; events: %v", reason, contains, svc.Name, d, serviceEvents(t, svc, ""))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// clbsOf returns the CLBs tagged for the Service.
func clbsOf(uid types.UID) []tencent.CLBLoadBalancer {
	var out []tencent.CLBLoadBalancer
	for _, lb := range suite.sim.Tencent().CLB().LoadBalancers() {
		if lb.Tags[clbops.TagServiceUID] == string(uid) {
			out = append(out, lb)
		}
	}
	return out
}

// waitCLB waits until the CLB with this id satisfies cond.
func waitCLB(t *testing.T, id, what string, d time.Duration, cond func(tencent.CLBLoadBalancer) bool) tencent.CLBLoadBalancer {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		lb, err := suite.sim.Tencent().CLB().LoadBalancer(id)
		if err == nil && cond(lb) {
			return lb
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLB %s: %s: not within %s; last: %+v (err %v)", id, what, d, lb, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func listenerNamed(lb tencent.CLBLoadBalancer, name string) (tencent.CLBListener, bool) {
	for _, l := range lb.Listeners {
		if l.Name == name {
			return l, true
		}
	}
	return tencent.CLBListener{}, false
}

func targetInstances(l tencent.CLBListener) []string {
	var out []string
	for _, t := range l.Targets {
		out = append(out, fmt.Sprintf("%s:%d", t.InstanceID, t.Port))
	}
	slices.Sort(out)
	return out
}

func nodePort(svc *corev1.Service, port int32) int32 {
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			return p.NodePort
		}
	}
	return 0
}

// serve runs an HTTP server standing in for a node's NodePort: it answers
// every request with body.
func serve(t *testing.T, ip string, port int32, status int, body string) {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

var httpClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}

func httpGet(url string) (string, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// waitAnswers GETs url until every body in want has answered (round robin
// over the targets), and fails on any other body.
func waitAnswers(t *testing.T, url string, d time.Duration, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	deadline := time.Now().Add(d)
	var lastErr error
	for {
		body, err := httpGet(url)
		switch {
		case err != nil:
			lastErr = err
		case !slices.Contains(want, body):
			t.Fatalf("GET %s answered %q, want one of %q", url, body, want)
		default:
			seen[body] = true
		}
		if len(seen) == len(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: answers %v within %s, want all of %q (last error %v)", url, seen, d, want, lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// prober GETs url continuously and counts failures, to show that traffic
// keeps flowing while targets change.
type prober struct {
	ok, failed atomic.Int32
	lastErr    atomic.Value
	stop       chan struct{}
	done       sync.WaitGroup
}

func startProber(url string) *prober {
	p := &prober{stop: make(chan struct{})}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := httpGet(url); err != nil {
				p.failed.Add(1)
				p.lastErr.Store(err.Error())
			} else {
				p.ok.Add(1)
			}
		}
	}()
	return p
}

func (p *prober) finish(t *testing.T, what string) {
	t.Helper()
	close(p.stop)
	p.done.Wait()
	if n := p.failed.Load(); n > 0 {
		t.Errorf("%s: %d of %d requests through the VIP failed (last: %v)", what, n, n+p.ok.Load(), p.lastErr.Load())
	}
	if p.ok.Load() == 0 {
		t.Errorf("%s: no request succeeded", what)
	}
}

// TestLoadBalancer covers a Service's life: created with an external IP
// that carries traffic to the nodes, ports and nodes added and removed
// while traffic flows, then deleted with its CLB.
func TestLoadBalancer(t *testing.T) {
	const sel = "basic"
	n1, n2 := lbNode(t, sel), lbNode(t, sel)
	spec := lbServiceSpec("web", sel, 8080)
	np := nodePort(spec, 8080)
	serve(t, n1.PrivateIP, np, 200, "node-1")
	serve(t, n2.PrivateIP, np, 200, "node-2")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	svc = getService(t, svc)

	lbs := clbsOf(svc.UID)
	if len(lbs) != 1 {
		t.Fatalf("CLBs tagged for the Service = %d, want 1", len(lbs))
	}
	lb := lbs[0]
	if lb.VIP != vip || lb.Type != "OPEN" || lb.VpcID != vpcID {
		t.Errorf("CLB = %+v, want OPEN in %s with VIP %s", lb, vpcID, vip)
	}
	l, ok := listenerNamed(lb, "TCP-8080")
	if !ok {
		t.Fatalf("no listener TCP-8080: %+v", lb.Listeners)
	}
	if got, want := targetInstances(l), sortedStrings(fmt.Sprintf("%s:%d", n1.ID, np), fmt.Sprintf("%s:%d", n2.ID, np)); !slices.Equal(got, want) {
		t.Errorf("targets = %v, want %v", got, want)
	}
	if hc := l.HealthCheck; hc == nil || *hc.HealthSwitch != 1 || *hc.CheckType != "HTTP" || hc.CheckPort == nil || *hc.CheckPort != 10256 ||
		hc.HttpCheckPath == nil || *hc.HttpCheckPath != "/healthz" {
		t.Errorf("health check = %+v, want HTTP GET /healthz on kube-proxy's 10256", hc)
	}
	url := fmt.Sprintf("http://%s:8080/", vip)
	waitAnswers(t, url, 20*time.Second, "node-1", "node-2")

	t.Run("port added", func(t *testing.T) {
		np2 := nextNodePort()
		serve(t, n1.PrivateIP, np2, 200, "node-1:9090")
		serve(t, n2.PrivateIP, np2, 200, "node-2:9090")
		svc = updateService(t, svc, func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "p9090", Protocol: corev1.ProtocolTCP, Port: 9090,
				TargetPort: intstr.FromInt32(9090), NodePort: np2})
		})
		waitCLB(t, lb.ID, "listener TCP-9090", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
			l, ok := listenerNamed(lb, "TCP-9090")
			return ok && len(l.Targets) == 2
		})
		waitAnswers(t, fmt.Sprintf("http://%s:9090/", vip), 20*time.Second, "node-1:9090", "node-2:9090")
	})

	t.Run("port removed", func(t *testing.T) {
		svc = updateService(t, svc, func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] })
		waitCLB(t, lb.ID, "listener TCP-9090 gone", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
			_, ok := listenerNamed(lb, "TCP-9090")
			return !ok && len(lb.Listeners) == 1
		})
		waitAnswers(t, url, 10*time.Second, "node-1", "node-2")
	})

	var n3 cloudsim.Instance
	parent := t // n3 and its server outlive the subtest
	t.Run("node added", func(t *testing.T) {
		p := startProber(url)
		ip := nextIP() // the node's server listens before the node exists
		serve(parent, ip, np, 200, "node-3")
		n3 = lbNodeAt(parent, sel, ip)
		waitCLB(t, lb.ID, "node-3 a target", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
			l, _ := listenerNamed(lb, "TCP-8080")
			return slices.Contains(targetInstances(l), fmt.Sprintf("%s:%d", n3.ID, np))
		})
		waitAnswers(t, url, 20*time.Second, "node-1", "node-2", "node-3")
		p.finish(t, "while adding a node")
	})

	t.Run("node excluded and removed", func(t *testing.T) {
		p := startProber(url)
		labelNode(t, n1.PrivateIP, corev1.LabelNodeExcludeBalancers, "true")
		waitCLB(t, lb.ID, "node-1 no longer a target", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
			l, _ := listenerNamed(lb, "TCP-8080")
			return !slices.Contains(targetInstances(l), fmt.Sprintf("%s:%d", n1.ID, np))
		})
		if err := suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), n2.PrivateIP, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitCLB(t, lb.ID, "node-2 no longer a target", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
			l, _ := listenerNamed(lb, "TCP-8080")
			return len(l.Targets) == 1
		})
		for range 10 {
			if body, err := httpGet(url); err != nil || body != "node-3" {
				dp, _ := suite.sim.Tencent().CLB().DataPlane(lb.ID)
				now, _ := suite.sim.Tencent().CLB().LoadBalancer(lb.ID)
				t.Fatalf("GET %s = %q, %v; want node-3 only (n1 %s, n2 %s, n3 %s); CLB %+v; data plane %+v", url, body, err,
					n1.PrivateIP, n2.PrivateIP, n3.PrivateIP, now, dp)
			}
		}
		p.finish(t, "while excluding and removing nodes")
	})

	t.Run("deleted with its CLB", func(t *testing.T) {
		if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitServiceGone(t, svc, 60*time.Second)
		if _, err := suite.sim.Tencent().CLB().LoadBalancer(lb.ID); err == nil {
			t.Errorf("CLB %s still exists after its Service was deleted", lb.ID)
		}
	})
}

// externalTrafficPolicy Local: the health check asks kube-proxy's
// healthCheckNodePort, so only nodes with a local endpoint get traffic.
func TestLoadBalancerLocalTraffic(t *testing.T) {
	const sel = "local"
	n1, n2 := lbNode(t, sel), lbNode(t, sel)
	spec := lbServiceSpec("local", sel, 8081)
	spec.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	spec.Spec.HealthCheckNodePort = nextNodePort()
	// node-1 has a local endpoint (kube-proxy answers 200), node-2 does not (503).
	np := nodePort(spec, 8081)
	serve(t, n1.PrivateIP, np, 200, "node-1")
	serve(t, n2.PrivateIP, np, 200, "node-2")
	serve(t, n1.PrivateIP, spec.Spec.HealthCheckNodePort, 200, "ok")
	serve(t, n2.PrivateIP, spec.Spec.HealthCheckNodePort, 503, "no local endpoints")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	svc = getService(t, svc)
	lb := clbsOf(svc.UID)[0]
	l, _ := listenerNamed(lb, "TCP-8081")
	hc := l.HealthCheck
	if hc == nil || *hc.CheckType != "HTTP" || hc.CheckPort == nil || *hc.CheckPort != int64(svc.Spec.HealthCheckNodePort) ||
		*hc.HttpCheckPath != "/healthz" || *hc.HttpCode != 2 {
		t.Fatalf("health check = %+v, want HTTP GET /healthz on %d expecting 2xx", hc, svc.Spec.HealthCheckNodePort)
	}
	url := fmt.Sprintf("http://%s:8081/", vip)
	waitAnswers(t, url, 30*time.Second, "node-1")
	for range 10 {
		if body, err := httpGet(url); err != nil || body != "node-1" {
			t.Fatalf("GET %s = %q, %v; want node-1 only (node-2 has no local endpoint)", url, body, err)
		}
	}
}

// An internal CLB without a subnet is refused with a Warning Event; no CLB
// is created. With a subnet, it is INTERNAL in that subnet.
func TestLoadBalancerInternal(t *testing.T) {
	const sel = "internal"
	lbNode(t, sel)
	t.Run("without subnet", func(t *testing.T) {
		spec := lbServiceSpec("private", sel, 8082)
		spec.Annotations[annotations.TencentLBType.String()] = "private"
		svc := createService(t, spec)
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{"needs a subnet", string(annotations.TencentLBInternalSubnetID)}, 30*time.Second)
		holdsFor(t, 3*time.Second, "no CLB for the Service", func() bool { return len(clbsOf(svc.UID)) == 0 })
		if ing := getService(t, svc).Status.LoadBalancer.Ingress; len(ing) != 0 {
			t.Errorf("ingress = %v, want none", ing)
		}
	})
	t.Run("with subnet", func(t *testing.T) {
		spec := lbServiceSpec("private", sel, 8082)
		spec.Annotations[string(annotations.TKEInternalSubnetID)] = "subnet-e2e00001"
		svc := createService(t, spec)
		waitIngress(t, svc, 60*time.Second)
		lb := clbsOf(getService(t, svc).UID)[0]
		if lb.Type != "INTERNAL" || lb.SubnetID != "subnet-e2e00001" {
			t.Errorf("CLB type %s subnet %s, want INTERNAL in subnet-e2e00001", lb.Type, lb.SubnetID)
		}
	})
}

// rbacLoadBalancerService creates a LoadBalancer Service for the RBAC
// scenario: no node matches its selector, so it needs no backends.
func rbacLoadBalancerService(t *testing.T) *corev1.Service {
	t.Helper()
	spec := lbServiceSpec("rbac", "none", 8086)
	created, err := suite.cluster.Client.CoreV1().Services(spec.Namespace).Create(context.Background(), spec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The suite's CCM, running again after the test, releases it.
	t.Cleanup(func() {
		_ = suite.cluster.Client.CoreV1().Services(created.Namespace).Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	return created
}

func sortedStrings(s ...string) []string {
	slices.Sort(s)
	return s
}

// addPorts appends n TCP ports from first on, each with its own NodePort.
func addPorts(svc *corev1.Service, first int32, n int) {
	for i := range int32(n) {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("q%d", first+i), Protocol: corev1.ProtocolTCP,
			Port: first + i, TargetPort: intstr.FromInt32(8080), NodePort: nextNodePort()})
	}
}

// TOTAL_LISTENER_QUOTA (50 listeners per CLB, which cloudsim enforces): a
// Service with more ports gets a Warning Event and no CLB; a working Service
// that grows past it keeps its CLB as it was.
func TestLoadBalancerListenerQuota(t *testing.T) {
	const sel = "listener-quota"
	lbNode(t, sel)
	t.Run("new Service", func(t *testing.T) {
		spec := lbServiceSpec("quota-new", sel)
		addPorts(spec, 1000, clbops.DefaultListenerQuota+1)
		svc := createService(t, spec)
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{clbops.QuotaListener, "51 listeners", "nothing was changed"}, 30*time.Second)
		holdsFor(t, 2*time.Second, "no CLB for the Service", func() bool { return len(clbsOf(svc.UID)) == 0 })
	})
	t.Run("working Service grows", func(t *testing.T) {
		svc := createService(t, lbServiceSpec("quota-grow", sel, 8090))
		waitIngress(t, svc, 60*time.Second)
		svc = updateService(t, svc, func(s *corev1.Service) { addPorts(s, 2000, clbops.DefaultListenerQuota) })
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{clbops.QuotaListener, "51 listeners"}, 30*time.Second)
		lbs := clbsOf(svc.UID)
		if len(lbs) != 1 || len(lbs[0].Listeners) != 1 {
			t.Fatalf("CLBs %+v, want the one CLB with its one listener TCP-8090", lbs)
		}
		if _, ok := listenerNamed(lbs[0], "TCP-8090"); !ok {
			t.Errorf("listener TCP-8090 gone: %+v", lbs[0].Listeners)
		}
	})
}

// Managed TKE's annotations: the read-only service.kubernetes.io/
// loadbalance-id shows the CLB's id (a hand-set value is overwritten), and
// qcloud-loadbalancer-backends-label selects the nodes, refused when it
// disagrees with lb.ccmkit.io/node-selector.
func TestLoadBalancerTKEAnnotations(t *testing.T) {
	const sel = "tke-annotations"
	n1, _ := lbNode(t, sel), lbNode(t, "tke-annotations-other")
	idKey := string(annotations.TKELoadBalanceID)
	waitID := func(t *testing.T, svc *corev1.Service, want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for getService(t, svc).Annotations[idKey] != want {
			if time.Now().After(deadline) {
				t.Fatalf("annotation %s = %q, want %q", idKey, getService(t, svc).Annotations[idKey], want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	t.Run("backends-label and loadbalance-id", func(t *testing.T) {
		spec := lbServiceSpec("tke", sel, 8091)
		// Only TKE's name selects the nodes: without it, both nodes would be targets.
		delete(spec.Annotations, string(annotations.NodeSelector))
		spec.Annotations[string(annotations.TKEBackendsLabel)] = lbNodeLabel + "=" + sel
		svc := createService(t, spec)
		waitIngress(t, svc, 60*time.Second)
		lbs := clbsOf(getService(t, svc).UID)
		if len(lbs) != 1 {
			t.Fatalf("CLBs for the Service: %d, want 1", len(lbs))
		}
		l, _ := listenerNamed(lbs[0], "TCP-8091")
		if got, want := targetInstances(l), []string{fmt.Sprintf("%s:%d", n1.ID, nodePort(spec, 8091))}; !slices.Equal(got, want) {
			t.Errorf("targets %v, want only the labeled node %v", got, want)
		}
		waitID(t, svc, lbs[0].ID)

		// A value set by hand is overwritten by the next sync (which the
		// annotation change itself triggers).
		updateService(t, svc, func(s *corev1.Service) { s.Annotations[idKey] = "lb-byhand00" })
		waitID(t, svc, lbs[0].ID)
	})

	t.Run("backends-label disagrees with node-selector", func(t *testing.T) {
		spec := lbServiceSpec("tke-conflict", sel, 8092)
		spec.Annotations[string(annotations.TKEBackendsLabel)] = lbNodeLabel + "=tke-annotations-other"
		svc := createService(t, spec)
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{string(annotations.TKEBackendsLabel), string(annotations.NodeSelector),
			"select different nodes"}, 30*time.Second)
		holdsFor(t, 2*time.Second, "no CLB for the Service", func() bool { return len(clbsOf(svc.UID)) == 0 })
		if v, ok := getService(t, svc).Annotations[idKey]; ok {
			t.Errorf("annotation %s = %q on a Service without a CLB", idKey, v)
		}
	})
}

// waitLBSettled waits until the service controller has finished every sync
// of svc it started: as many EnsuredLoadBalancer as EnsuringLoadBalancer
// Events (counted), unchanged for a second. A provider may annotate the
// Service after its first sync (Tencent's service.kubernetes.io/
// loadbalance-id), which makes the controller sync it once more; a test
// that changes the load balancer behind the CCM's back waits for that.
func waitLBSettled(t *testing.T, svc *corev1.Service, d time.Duration) {
	t.Helper()
	counts := func() (ensuring, ensured int32) {
		set := fields.Set{"involvedObject.kind": "Service", "involvedObject.name": svc.Name}
		list, err := suite.cluster.Client.CoreV1().Events(svc.Namespace).List(context.Background(), metav1.ListOptions{FieldSelector: set.AsSelector().String()})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			switch {
			case e.InvolvedObject.UID != svc.UID:
			case e.Reason == "EnsuringLoadBalancer":
				ensuring += max(e.Count, 1)
			case e.Reason == "EnsuredLoadBalancer":
				ensured += max(e.Count, 1)
			}
		}
		return ensuring, ensured
	}
	deadline := time.Now().Add(d)
	var last [2]int32
	stableSince := time.Now()
	for {
		a, b := counts()
		if now := [2]int32{a, b}; now != last || a != b {
			last, stableSince = now, time.Now()
		} else if time.Since(stableSince) >= time.Second {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Service %s: syncs not settled within %s (ensuring %d, ensured %d)", svc.Name, d, a, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
