package lbkit

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

// telling are ops that show and warn, during Ensure and Update, what the
// test sets: as an ops layer that found the Service's load balancer does.
type telling struct {
	*recordingOps
	hooks Hooks
	value string   // shown under "lb-id" ("" : nothing shown)
	warn  *Warning // nil: no warning told
}

func (o *telling) tell(svc *testDesired) {
	if o.value != "" {
		o.hooks.Show(svc.UID, "lb-id", o.value)
	}
	if o.warn != nil {
		o.hooks.Warn(svc.UID, *o.warn)
	}
}

func (o *telling) Ensure(ctx context.Context, d *testDesired) (*corev1.LoadBalancerStatus, error) {
	o.tell(d)
	return o.recordingOps.Ensure(ctx, d)
}

func (o *telling) Update(ctx context.Context, d *testDesired) error {
	o.tell(d)
	return o.recordingOps.Update(ctx, d)
}

// What an ops layer shows is patched onto the Service when it differs
// (through the status subresource); a warning is one Event per change; a
// Service that stops being a LoadBalancer loses the shown annotation, one
// being deleted is left alone.
func TestHooksShowAndWarn(t *testing.T) {
	ops := &telling{recordingOps: &recordingOps{}}
	l := New[*testDesired](testTranslator{}, func(h Hooks) Ops[*testDesired] { ops.hooks = h; return ops },
		Config{Provider: "test", Shown: []string{"lb-id"}, FieldManager: "test-ids"})
	events := record.NewFakeRecorder(10)
	l.UseRecorder(events)
	svc := service("web", nil)
	client := fake.NewClientset(svc.DeepCopy())
	l.UseKubeClient(client)
	ctx := context.Background()
	patches := func() (n int) {
		for _, a := range client.Actions() {
			if p, ok := a.(k8stesting.PatchAction); ok {
				n++
				if p.GetSubresource() != "status" {
					t.Errorf("patched %q, want the status subresource", p.GetSubresource())
				}
			}
		}
		client.ClearActions()
		return n
	}
	shown := func() string {
		got, err := client.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		client.ClearActions()
		return got.Annotations["lb-id"]
	}
	told := func() (out []string) {
		for {
			select {
			case e := <-events.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}
	drifted := &Warning{Reason: "Drifted", Message: "it drifted"}

	steps := []struct {
		name    string
		value   string
		warn    *Warning
		update  bool
		patches int
		events  int
	}{
		{name: "shown and warned", value: "lb-1", warn: drifted, patches: 1, events: 1},
		{name: "the same again: nothing", value: "lb-1", warn: drifted},
		{name: "an Update that finds another id", value: "lb-2", warn: drifted, update: true, patches: 1},
		{name: "the warning cleared", value: "lb-2", warn: &Warning{}},
		{name: "and back: told again", value: "lb-2", warn: drifted, events: 1},
	}
	for _, s := range steps {
		ops.value, ops.warn = s.value, s.warn
		var err error
		if s.update {
			err = l.UpdateLoadBalancer(ctx, "k", svc, nil)
		} else {
			_, err = l.EnsureLoadBalancer(ctx, "k", svc, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if n := patches(); n != s.patches {
			t.Errorf("%s: %d patches, want %d", s.name, n, s.patches)
		}
		if ev := told(); len(ev) != s.events || (s.events > 0 && !strings.Contains(ev[0], "Drifted it drifted")) {
			t.Errorf("%s: events %q, want %d", s.name, ev, s.events)
		}
		if got := shown(); got != s.value {
			t.Errorf("%s: the Service shows %q, want %q", s.name, got, s.value)
		}
		svc.Annotations = map[string]string{"lb-id": s.value} // what the service controller's next call carries
	}

	gone := svc.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{}
	if err := l.EnsureLoadBalancerDeleted(ctx, "k", gone); err != nil {
		t.Fatal(err)
	}
	if n := patches(); n != 0 {
		t.Errorf("a Service being deleted was patched %d times", n)
	}
	if err := l.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
		t.Fatal(err)
	}
	if n, got := patches(), shown(); n != 1 || got != "" {
		t.Errorf("no longer a LoadBalancer: %d patches, shows %q; want 1 and nothing", n, got)
	}
}
