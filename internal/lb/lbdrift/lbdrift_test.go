package lbdrift

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"github.com/ccmkit/ccm/internal/annotations"
)

func lbService(name string, ingress bool) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	if ingress {
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}
	}
	return s
}

func TestCheckOnce(t *testing.T) {
	now := metav1.Now()
	deleting := lbService("deleting", true)
	deleting.DeletionTimestamp = &now
	deleting.Finalizers = []string{"x"}
	clusterIP := lbService("cluster-ip", true)
	clusterIP.Spec.Type = corev1.ServiceTypeClusterIP
	objs := []*corev1.Service{
		lbService("in-sync", true),
		lbService("drifted", true),
		lbService("broken", true),
		lbService("pending", false), // no ingress yet: the controller's business
		deleting, clusterIP,
	}
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	svcInformer := factory.Core().V1().Services()
	for _, s := range objs {
		if _, err := client.CoreV1().Services(s.Namespace).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := svcInformer.Informer().GetStore().Add(s); err != nil {
			t.Fatal(err)
		}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	if err := factory.Core().V1().Nodes().Informer().GetStore().Add(node); err != nil {
		t.Fatal(err)
	}

	var checked []string
	recorder := record.NewFakeRecorder(10)
	c := &Checker{
		Services: svcInformer.Lister(),
		Nodes:    factory.Core().V1().Nodes().Lister(),
		Client:   client,
		Recorder: recorder,
		Now:      func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		Check: func(_ context.Context, svcs []*corev1.Service, nodes []*corev1.Node) map[types.UID]Result {
			if len(nodes) != 1 {
				t.Errorf("nodes = %d, want 1", len(nodes))
			}
			out := map[types.UID]Result{}
			for _, s := range svcs {
				checked = append(checked, s.Name)
				switch s.Name {
				case "drifted":
					out[s.UID] = Result{Diffs: []string{"listener TCP-80 missing"}}
				case "broken":
					out[s.UID] = Result{Err: errors.New("bad annotation")}
				default:
					out[s.UID] = Result{}
				}
			}
			return out
		},
	}
	registerMetrics()
	detectedBefore := counterValue(t, detected)
	errorsBefore := counterValue(t, checks.WithLabelValues("error"))
	if n := c.CheckOnce(context.Background()); n != 1 {
		t.Errorf("drifted = %d, want 1", n)
	}
	// One drifted Service counted; the round is an error round because
	// "broken" could not be checked.
	if d := counterValue(t, detected) - detectedBefore; d != 1 {
		t.Errorf("ccmkit_lb_drift_detected_total grew by %v, want 1", d)
	}
	if d := counterValue(t, checks.WithLabelValues("error")) - errorsBefore; d != 1 {
		t.Errorf("ccmkit_lb_drift_checks_total{result=error} grew by %v, want 1", d)
	}
	if got := strings.Join(checked, ","); got != "broken,drifted,in-sync" {
		t.Errorf("checked = %s, want broken,drifted,in-sync", got)
	}
	got, err := client.CoreV1().Services("default").Get(context.Background(), "drifted", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Annotations[string(annotations.DriftDetected)]; v != "2026-01-02T03:04:05Z: listener TCP-80 missing" {
		t.Errorf("annotation = %q", v)
	}
	for _, name := range []string{"in-sync", "broken"} {
		s, _ := client.CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{})
		if _, ok := s.Annotations[string(annotations.DriftDetected)]; ok {
			t.Errorf("%s was annotated", name)
		}
	}
	select {
	case ev := <-recorder.Events:
		if !strings.HasPrefix(ev, "Warning LoadBalancerDrift Load balancer drifted (listener TCP-80 missing)") {
			t.Errorf("event = %q", ev)
		}
	default:
		t.Error("no Event recorded")
	}
}

func TestSummarize(t *testing.T) {
	diffs := []string{"a", "b", "c", "d", "e", "f", "g"}
	if got := summarize(diffs); got != "a; b; c; d; e; and 2 more" {
		t.Errorf("summarize = %q", got)
	}
}

func counterValue(t *testing.T, c metrics.CounterMetric) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
