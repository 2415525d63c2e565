//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// OCI load balancer scenarios: a Service gets an OCI Load Balancer (or a
// Network Load Balancer) whose VIP carries HTTP to the nodes'
// InternalIP:NodePort, and loses it when deleted. The node scenarios are in
// the conformance table (conformance_test.go).

// startOCIServiceController makes an OCI CCM with the node and service
// controllers the cluster's only CCM for the rest of the test (two service
// controllers would both claim every Service).
func startOCIServiceController(t *testing.T) {
	t.Helper()
	theOCIEnv.prepare(t)
	theOCIEnv.runExclusive(t, "ccm-oci-lb-"+strings.ReplaceAll(t.Name(), "/", "-"), lbControllers...)
}

// ociLBNode adds an OCI instance and registers its Node as the CCM leaves
// it once initialized (providerID, InternalIP, Ready), labeled for the
// test's node selector.
func ociLBNode(t *testing.T, selector string) cloudsim.Instance {
	t.Helper()
	return ociLBNodeWith(t, selector, nil)
}

// ociLBNodeWith is ociLBNode with the instance changed by setup first.
func ociLBNodeWith(t *testing.T, selector string, setup func(*cloudsim.Instance)) cloudsim.Instance {
	t.Helper()
	in := theOCIEnv.newInstanceWith(t, "oci-lb-"+selector, setup)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: in.PrivateIP, Labels: map[string]string{
			corev1.LabelHostname: in.PrivateIP, lbNodeLabel: selector,
		}},
		Spec: corev1.NodeSpec{ProviderID: "oci://" + in.OCID},
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
		// The instance goes with its node, so that later tests do not scan
		// the VNICs of every load balancer test's nodes (TestNodeInitialized
		// counts the lookups of one node's initialization).
		_ = suite.sim.SetInstanceState(in.ID, "TERMINATED")
	})
	return in
}

// ociLBsOf returns the live OCI load balancers (of both kinds) named for
// the Service.
func ociLBsOf(uid types.UID) []simoci.LoadBalancer {
	var out []simoci.LoadBalancer
	for _, lb := range suite.sim.OCI().LoadBalancers() {
		if lb.DisplayName == string(uid) && lb.LifecycleState != "DELETED" && lb.LifecycleState != "DELETING" {
			out = append(out, lb)
		}
	}
	return out
}

func ociBackends(lb simoci.LoadBalancer, set string) []string {
	var out []string
	for _, bs := range lb.BackendSets {
		if bs.Name == set {
			for _, b := range bs.Backends {
				out = append(out, fmt.Sprintf("%s:%d", b.IPAddress, b.Port))
			}
		}
	}
	slices.Sort(out)
	return out
}

// waitOCILB waits until the Service's one load balancer satisfies cond.
func waitOCILB(t *testing.T, uid types.UID, what string, d time.Duration, cond func(simoci.LoadBalancer) bool) simoci.LoadBalancer {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		lbs := ociLBsOf(uid)
		if len(lbs) == 1 && cond(lbs[0]) {
			return lbs[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("OCI load balancer of %s: %s: not within %s; last: %+v", uid, what, d, lbs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestOCILoadBalancer covers a Service's life on both OCI kinds: created
// with an ingress IP that carries HTTP to the nodes' InternalIP:NodePort,
// a node added while traffic flows, then deleted with its load balancer.
func TestOCILoadBalancer(t *testing.T) {
	startOCIServiceController(t)
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			sel := "oci-" + kind
			n1, n2 := ociLBNode(t, sel), ociLBNode(t, sel)
			spec := lbServiceSpec("oci-"+kind, sel, 8080)
			spec.Annotations[annotations.OCILoadBalancerType.String()] = kind
			np := nodePort(spec, 8080)
			serve(t, n1.PrivateIP, np, 200, "node-1")
			serve(t, n2.PrivateIP, np, 200, "node-2")
			svc := createService(t, spec)
			vip := waitIngress(t, svc, 90*time.Second)
			svc = getService(t, svc)

			lbs := ociLBsOf(svc.UID)
			if len(lbs) != 1 {
				t.Fatalf("OCI load balancers named %s = %d, want 1", svc.UID, len(lbs))
			}
			lb := lbs[0]
			wantKind := map[string]string{"lb": "loadbalancer", "nlb": "networkloadbalancer"}[kind]
			if lb.Kind != wantKind || lb.IPAddress != vip || lb.CompartmentID != ociCompartment || lb.IsPrivate {
				t.Errorf("load balancer = %+v, want a public %s in %s with IP %s", lb, wantKind, ociCompartment, vip)
			}
			if kind == "lb" && (lb.Shape != "flexible" || lb.MinMbps != 10 || lb.MaxMbps != 100) {
				t.Errorf("shape = %s %d-%d Mbps, want flexible 10-100", lb.Shape, lb.MinMbps, lb.MaxMbps)
			}
			if len(lb.Listeners) != 1 || lb.Listeners[0].Name != "TCP-8080" || lb.Listeners[0].Port != 8080 || lb.Listeners[0].DefaultBackendSetName != "TCP-8080" {
				t.Errorf("listeners = %+v, want TCP-8080 on port 8080", lb.Listeners)
			}
			want := []string{fmt.Sprintf("%s:%d", n1.PrivateIP, np), fmt.Sprintf("%s:%d", n2.PrivateIP, np)}
			slices.Sort(want)
			if got := ociBackends(lb, "TCP-8080"); !slices.Equal(got, want) {
				t.Errorf("backends = %v, want %v", got, want)
			}
			for _, bs := range lb.BackendSets {
				if hc := bs.HealthChecker; hc.Protocol != "HTTP" || hc.Port != 10256 || hc.URLPath != "/healthz" {
					t.Errorf("health check = %+v, want HTTP GET /healthz on kube-proxy's 10256", hc)
				}
			}
			url := fmt.Sprintf("http://%s:8080/", vip)
			waitAnswers(t, url, 30*time.Second, "node-1", "node-2")

			t.Run("node added", func(t *testing.T) {
				p := startProber(url)
				n3 := ociLBNode(t, sel)
				serve(t, n3.PrivateIP, np, 200, "node-3")
				waitOCILB(t, svc.UID, "node-3 a backend", 60*time.Second, func(lb simoci.LoadBalancer) bool {
					return slices.Contains(ociBackends(lb, "TCP-8080"), fmt.Sprintf("%s:%d", n3.PrivateIP, np))
				})
				waitAnswers(t, url, 30*time.Second, "node-1", "node-2", "node-3")
				p.finish(t, "while adding a node")
			})

			t.Run("deleted with its load balancer", func(t *testing.T) {
				if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				waitServiceGone(t, svc, 90*time.Second)
				if lbs := ociLBsOf(svc.UID); len(lbs) != 0 {
					t.Errorf("load balancer still there after its Service was deleted: %+v", lbs)
				}
			})
		})
	}
}

// externalTrafficPolicy Local: the health check asks kube-proxy's
// healthCheckNodePort over HTTP, so only nodes with a local endpoint get
// traffic.
func TestOCILoadBalancerLocalTraffic(t *testing.T) {
	startOCIServiceController(t)
	const sel = "oci-local"
	n1, n2 := ociLBNode(t, sel), ociLBNode(t, sel)
	spec := lbServiceSpec("oci-local", sel, 8081)
	spec.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	spec.Spec.HealthCheckNodePort = nextNodePort()
	spec.Annotations[annotations.OCILBHealthCheckInterval.String()] = "1000"
	spec.Annotations[annotations.OCILBHealthCheckTimeout.String()] = "500"
	np := nodePort(spec, 8081)
	serve(t, n1.PrivateIP, np, 200, "node-1")
	serve(t, n2.PrivateIP, np, 200, "node-2")
	serve(t, n1.PrivateIP, spec.Spec.HealthCheckNodePort, 200, "ok")
	serve(t, n2.PrivateIP, spec.Spec.HealthCheckNodePort, 503, "no local endpoints")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 90*time.Second)
	svc = getService(t, svc)
	lb := waitOCILB(t, svc.UID, "created", 10*time.Second, func(simoci.LoadBalancer) bool { return true })
	for _, bs := range lb.BackendSets {
		hc := bs.HealthChecker
		if hc.Protocol != "HTTP" || hc.Port != int(svc.Spec.HealthCheckNodePort) || hc.URLPath != "/healthz" || hc.IntervalInMillis != 1000 {
			t.Errorf("health check = %+v, want HTTP /healthz on %d every 1000 ms", hc, svc.Spec.HealthCheckNodePort)
		}
	}
	url := fmt.Sprintf("http://%s:8081/", vip)
	waitAnswers(t, url, 30*time.Second, "node-1")
	holdsFor(t, 3*time.Second, "only node-1 answers", func() bool {
		body, err := httpGet(url)
		return err == nil && body == "node-1"
	})
}
