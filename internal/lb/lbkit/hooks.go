package lbkit

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Hooks are what an ops layer tells the pipeline during a call, for the
// pipeline to act on the Service; New hands them to newOps. Both clouds'
// layers get the same ones, and each uses what it needs.
type Hooks struct {
	// DrainEnds: a backend of the Service drains until at; the pipeline
	// runs the Service's last reconcile again then (internal/lb/drain),
	// since the service controller has no reason to call then.
	DrainEnds func(uid types.UID, at time.Time)
	// Show: the Service should show value in its annotation key, one of
	// Config.Shown (TKE's read-only loadbalance-id: its CLB's id). When the
	// call returns, the pipeline patches the Service if it shows anything
	// else.
	Show func(uid types.UID, key, value string)
	// Warn: what the call found about the Service's load balancer that the
	// user should know and the call leaves as it is (a creation-only
	// setting that now differs); the zero Warning: nothing (any more).
	// When the call returns, the pipeline records it as a Warning Event,
	// once per change, so that a resync does not repeat it.
	Warn func(uid types.UID, w Warning)
}

// told is what calls in progress showed and warned, by Service, and the
// last warning recorded for each.
type told struct {
	mu     sync.Mutex
	shown  map[types.UID]map[string]string
	warned map[types.UID]Warning
	last   map[types.UID]Warning
}

func newTold() *told {
	return &told{shown: map[types.UID]map[string]string{}, warned: map[types.UID]Warning{}, last: map[types.UID]Warning{}}
}

func (t *told) show(uid types.UID, key, value string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shown[uid] == nil {
		t.shown[uid] = map[string]string{}
	}
	t.shown[uid][key] = value
}

func (t *told) warn(uid types.UID, w Warning) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.warned[uid] = w
}

// take returns what the call showed, and the warning to record now: the
// call's, when it differs from the last one recorded (ok false: none).
func (t *told) take(uid types.UID) (shown map[string]string, w Warning, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	shown = t.shown[uid]
	delete(t.shown, uid)
	w, warned := t.warned[uid]
	delete(t.warned, uid)
	if !warned || w == t.last[uid] {
		return shown, Warning{}, false
	}
	if w == (Warning{}) {
		delete(t.last, uid)
		return shown, w, false
	}
	t.last[uid] = w
	return shown, w, true
}

func (t *told) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.shown, uid)
	delete(t.warned, uid)
	delete(t.last, uid)
}

// afterCall shows on svc what the ops layer said it should, and records
// its warning: after every Ensure and Update, failed ones too (what was
// found before the failure is still true).
func (l *LoadBalancer[D]) afterCall(ctx context.Context, svc *corev1.Service) {
	shown, w, ok := l.told.take(svc.UID)
	for key, value := range shown {
		old, set := svc.Annotations[key]
		if set && old == value {
			continue
		}
		if set {
			klog.InfoS("Overwriting a read-only annotation with what the cloud says", "service", klog.KObj(svc), "annotation", key, "was", old, "value", value)
		}
		l.patchAnnotation(ctx, svc, key, &value)
	}
	if ok {
		l.warn(svc, []Warning{w})
	}
}

// unshow removes Config.Shown from a Service that lives on without a load
// balancer (it is no longer a LoadBalancer); a Service being deleted is
// left alone.
func (l *LoadBalancer[D]) unshow(ctx context.Context, svc *corev1.Service) {
	l.told.forget(svc.UID)
	if svc.DeletionTimestamp != nil {
		return
	}
	for _, key := range l.cfg.Shown {
		if _, set := svc.Annotations[key]; set {
			l.patchAnnotation(ctx, svc, key, nil)
		}
	}
}

// patchAnnotation sets the annotation key to *value, or removes it (nil).
// A merge patch of one annotation cannot conflict with the user's edits;
// the uid is a precondition, so that a newer Service of the same name is
// never touched. It goes through the status subresource, which accepts
// metadata changes for Services, so it needs no permission beyond the
// service controller's (services/status patch). A failure is logged; the
// next Ensure or Update writes it again.
func (l *LoadBalancer[D]) patchAnnotation(ctx context.Context, svc *corev1.Service, key string, value *string) {
	kube := l.client.Load()
	if kube == nil {
		return // no cluster (unit tests): nothing is written
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         svc.UID,
		"annotations": map[string]*string{key: value},
	}})
	if err == nil {
		_, err = (*kube).CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: l.fieldManager()}, "status")
	}
	if err != nil {
		klog.ErrorS(err, "Annotating the Service", "service", klog.KObj(svc), "annotation", key)
	}
}

// fieldManager owns the shown annotations in managedFields.
func (l *LoadBalancer[D]) fieldManager() string {
	if l.cfg.FieldManager != "" {
		return l.cfg.FieldManager
	}
	return "ccmkit-" + l.cfg.Provider + "-load-balancers"
}
