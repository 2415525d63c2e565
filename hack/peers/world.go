package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// world is what every peer run needs: a real control plane, cloudsim
// behind a TLS front for the cloud's hostnames, every refusal recorded,
// stand-in servers on the nodes, and the peer as a process.
type world struct {
	ctx     context.Context
	dir     string
	cluster *testcluster.Cluster
	sim     *cloudsim.Sim
	caFile  string

	mu       sync.Mutex
	refusals []refusal
	closers  []func() // run in reverse by close
}

// newWorld starts the control plane and cloudsim (with opts, whose OnCall
// it takes), and serves TLS for dnsNames on listen.
func newWorld(ctx context.Context, label, listen string, opts cloudsim.Options, dnsNames []string) (*world, error) {
	dir, err := os.MkdirTemp("", "peer-ccm-"+label+"-")
	if err != nil {
		return nil, err
	}
	w := &world{ctx: ctx, dir: dir}
	fmt.Printf("== %s: starting etcd and kube-apiserver %s in %s\n", label, testcluster.K8sVersion, dir)
	if w.cluster, err = testcluster.Start(dir); err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { _ = w.cluster.Stop() })
	opts.OnCall = func(c cloudsim.Call) {
		if c.Code != "OK" {
			w.mu.Lock()
			w.refusals = append(w.refusals, refusal{c.Action, c.Code, c.Message})
			w.mu.Unlock()
		}
	}
	w.sim = cloudsim.New(opts)
	simURL, err := w.sim.Start("127.0.0.1:0")
	if err != nil {
		w.close()
		return nil, err
	}
	w.closers = append(w.closers, func() { _ = w.sim.Close() })
	caFile, stopTLS, err := serveTLS(listen, simURL, dir, dnsNames)
	if err != nil {
		w.close()
		return nil, fmt.Errorf("serving TLS on %s (run as root, see run.sh): %w", listen, err)
	}
	w.caFile = caFile
	w.closers = append(w.closers, stopTLS)
	return w, nil
}

func (w *world) close() {
	for _, c := range slices.Backward(w.closers) {
		c()
	}
}

// serveNode stands in for kube-proxy on a node: HTTP on each port.
func (w *world) serveNode(ip string, ports ...int) error {
	for _, port := range ports {
		ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { fmt.Fprintln(rw, "hello from", ip) }),
			ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		w.closers = append(w.closers, func() { _ = srv.Close() })
	}
	return nil
}

// createServices creates the Services, the i-th on NodePort firstNodePort+i.
func (w *world) createServices(services []*corev1.Service, firstNodePort int) error {
	for i, svc := range services {
		svc.Spec.Ports[0].NodePort = int32(firstNodePort + i)
		if _, err := w.cluster.Client.CoreV1().Services("default").Create(w.ctx, svc, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// startPeer runs the peer with args and env (on top of ours, with the TLS
// front's CA), logging to peer.log; close kills it.
func (w *world) startPeer(binary string, args, env []string) error {
	logPath := filepath.Join(w.dir, "peer.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), "SSL_CERT_FILE="+w.caFile), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	fmt.Println("== starting the peer:", binary, "(log:", logPath+")")
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return err
	}
	w.closers = append(w.closers, func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = logFile.Close() })
	return nil
}

// await lets the peer work until every node is initialized, every Service
// has an ingress IP and done (if any) says so, or duration ends. It
// returns how many nodes were initialized and each Service's first
// ingress IP.
func (w *world) await(duration time.Duration, nodes []string, services []*corev1.Service, done func() bool) (int, map[string]string) {
	deadline := time.Now().Add(duration)
	var initialized int
	vips := map[string]string{}
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		initialized = 0
		for _, n := range nodes {
			node, err := w.cluster.Client.CoreV1().Nodes().Get(w.ctx, n, metav1.GetOptions{})
			if err == nil && !testcluster.HasTaint(node, cloudapi.TaintExternalCloudProvider) && node.Spec.ProviderID != "" {
				initialized++
			}
		}
		for _, svc := range services {
			if s, err := w.cluster.Client.CoreV1().Services("default").Get(w.ctx, svc.Name, metav1.GetOptions{}); err == nil && len(s.Status.LoadBalancer.Ingress) > 0 {
				vips[svc.Name] = s.Status.LoadBalancer.Ingress[0].IP
			}
		}
		if initialized == len(nodes) && len(vips) == len(services) && (done == nil || done()) {
			break
		}
	}
	return initialized, vips
}

// probe sends one HTTP request through each Service's address.
func probe(vips map[string]string) {
	for name, vip := range vips {
		resp, err := http.Get("http://" + vip + "/")
		if err != nil {
			fmt.Println("== through", name+"'s address:", err)
			continue
		}
		fmt.Println("== through", name+"'s address:", resp.Status)
		_ = resp.Body.Close()
	}
}

// report prints what cloudsim answered and refused (see report in main.go).
func (w *world) report(allowed map[string]string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return report(w.sim, w.refusals, allowed)
}
