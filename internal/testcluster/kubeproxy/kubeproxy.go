// Package kubeproxy plays the part of kube-proxy that load balancers see:
// its /healthz on port 10256 of every node. As kube-proxy does since
// Kubernetes 1.30 (KEP-3836), a node answers 200 while it is eligible and
// 503 once it is tainted ToBeDeletedByClusterAutoscaler or is being
// deleted, so that a load balancer probing it drains the node before it
// goes. The e2e suite, the demo and the provider tests run it on the nodes'
// loopback addresses.
package kubeproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// HealthPort is kube-proxy's --healthz-bind-address port.
const HealthPort = 10256

// TaintToBeDeleted is the taint the cluster autoscaler puts on a node it is
// about to remove.
const TaintToBeDeleted = "ToBeDeletedByClusterAutoscaler"

// Health serves /healthz on each node address it is given.
type Health struct {
	mu      sync.Mutex
	servers map[string]*nodeServer // by IP
}

type nodeServer struct {
	srv      *http.Server
	eligible bool
}

// New returns a Health serving no address yet.
func New() *Health { return &Health{servers: map[string]*nodeServer{}} }

// Serve starts answering on ip:10256, eligible until SetEligible says
// otherwise. Serving an address twice is a no-op.
func (h *Health) Serve(ip string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.servers[ip]; ok {
		return nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(HealthPort)))
	if err != nil {
		return fmt.Errorf("kube-proxy health on %s: %w", ip, err)
	}
	ns := &nodeServer{eligible: true}
	ns.srv = &http.Server{Handler: h.handler(ip), ReadHeaderTimeout: 5 * time.Second}
	h.servers[ip] = ns
	go func() { _ = ns.srv.Serve(ln) }()
	return nil
}

// SetEligible changes what ip's /healthz answers.
func (h *Health) SetEligible(ip string, eligible bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ns, ok := h.servers[ip]; ok {
		ns.eligible = eligible
	}
}

// Stop stops answering on ip, as when the node's kube-proxy goes away.
func (h *Health) Stop(ip string) {
	h.mu.Lock()
	ns, ok := h.servers[ip]
	delete(h.servers, ip)
	h.mu.Unlock()
	if ok {
		_ = ns.srv.Close()
	}
}

// Close stops every server.
func (h *Health) Close() {
	h.mu.Lock()
	ips := make([]string, 0, len(h.servers))
	for ip := range h.servers {
		ips = append(ips, ip)
	}
	h.mu.Unlock()
	for _, ip := range ips {
		h.Stop(ip)
	}
}

// handler answers like kube-proxy's healthz server: a JSON body, and 503
// when the node is not eligible.
func (h *Health) handler(ip string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.URL.Path != "/livez" {
			http.NotFound(w, r)
			return
		}
		h.mu.Lock()
		ns := h.servers[ip]
		eligible := ns != nil && ns.eligible
		h.mu.Unlock()
		now := time.Now().UTC()
		body := map[string]any{"lastUpdated": now, "currentTime": now, "nodeEligible": eligible}
		w.Header().Set("Content-Type", "application/json")
		// /livez reports only that kube-proxy runs; /healthz also drains.
		if r.URL.Path == "/healthz" && !eligible {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
}

// Eligible reports what kube-proxy 1.30+ reports for a node: not tainted
// ToBeDeletedByClusterAutoscaler and not being deleted.
func Eligible(n *corev1.Node) bool {
	if n.DeletionTimestamp != nil {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Key == TaintToBeDeleted {
			return false
		}
	}
	return true
}

// Watch keeps a server on every node's IPv4 InternalIP while the node
// exists, with eligibility from the node, until ctx ends. A node whose
// address cannot be bound (not a local address) is skipped with an error
// to onError, if set.
func (h *Health) Watch(ctx context.Context, client kubernetes.Interface, onError func(error)) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Nodes().Informer()
	sync := func(obj any) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		for _, ip := range internalIPs(n) {
			if err := h.Serve(ip); err != nil {
				if onError != nil {
					onError(err)
				}
				continue
			}
			h.SetEligible(ip, Eligible(n))
		}
	}
	gone := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if n, ok := obj.(*corev1.Node); ok {
			for _, ip := range internalIPs(n) {
				h.Stop(ip)
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sync,
		UpdateFunc: func(_, obj any) { sync(obj) },
		DeleteFunc: gone,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return errors.New("kube-proxy health: the node informer did not sync")
	}
	go func() { <-ctx.Done(); factory.Shutdown(); h.Close() }()
	return nil
}

func internalIPs(n *corev1.Node) []string {
	var out []string
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip := net.ParseIP(a.Address); ip != nil && ip.To4() != nil {
			out = append(out, a.Address)
		}
	}
	return out
}
