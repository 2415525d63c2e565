package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/kubeproxy"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The demo's LoadBalancer Service: port 8080, forwarded by the CLB to
// the run's NodePort (addresses.go) on every node. No kube-proxy runs
// here, so small HTTP servers on each instance's private IP stand in for
// it (startNodes).
const demoServicePort = 8080

// demoLoadBalancer creates the Service, waits for its CLB's VIP and shows
// requests through the VIP reaching the nodes. It returns the VIP and a
// function that stops the node servers.
func demoLoadBalancer(ctx context.Context, c *testcluster.Cluster, sim *cloudsim.Sim, instances []cloudsim.Instance, nodePort int32, timeout time.Duration) (string, func(), error) {
	vip, took, stop, err := exposeHello(ctx, c, instances, "hello", demoServicePort, nodePort, "", func(in cloudsim.Instance) string {
		return fmt.Sprintf("hello from %s (%s, %s)\n", in.Name, in.ID, in.PrivateIP)
	}, timeout)
	if err != nil {
		return "", nil, err
	}
	step("the Service got external IP %s in %s", vip, took.Round(100*time.Millisecond))
	for _, lb := range sim.Tencent().CLB().LoadBalancers() {
		if lb.VIP != vip {
			continue
		}
		fmt.Printf("\nCLB %s (%s, %s, LoadBalancerPassToTarget %t: the nodes' security group is not consulted), tags %v:\n",
			lb.ID, lb.Name, lb.Type, lb.PassToTarget, lb.Tags)
		for _, l := range lb.Listeners {
			var targets []string
			for _, t := range l.Targets {
				targets = append(targets, fmt.Sprintf("%s@%s:%d", t.InstanceID, t.IP, t.Port))
			}
			fmt.Printf("  listener %s %s/%d -> %s\n", l.Name, l.Protocol, l.Port, strings.Join(targets, ", "))
		}
		fmt.Println()
	}

	url := fmt.Sprintf("http://%s:%d/", vip, demoServicePort)
	step("curl %s (three times: the CLB round-robins over the nodes)", url)
	if err := getThrice(url, timeout); err != nil {
		stop()
		return "", nil, err
	}
	return vip, stop, nil
}

// exposeHello starts the nodes' servers on nodePort (each answering
// greeting) and creates the LoadBalancer Service name, port -> nodePort
// (what adds to the step that says so). It returns the Service's external
// IP, how long the load balancer took to give it, and a function that
// stops the servers.
func exposeHello(ctx context.Context, c *testcluster.Cluster, instances []cloudsim.Instance, name string, port, nodePort int32, what string,
	greeting func(cloudsim.Instance) string, timeout time.Duration) (string, time.Duration, func(), error) {
	stop, err := startNodes(instances, nodePort, greeting)
	if err != nil {
		return "", 0, nil, err
	}
	step("creating a LoadBalancer Service (port %d -> NodePort %d on every node)%s", port, nodePort, what)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "hello"},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port,
				TargetPort: intstr.FromInt32(8080), NodePort: nodePort}}},
	}
	if _, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		stop()
		return "", 0, nil, err
	}
	start := time.Now()
	vip, err := waitVIP(ctx, c, svc.Name, timeout)
	if err != nil {
		stop()
		return "", 0, nil, err
	}
	return vip, time.Since(start), stop, nil
}

// getThrice GETs url until it has answered three times, printing each
// answer; until timeout, failures are retried, as the load balancer's
// health checks may still be probing the nodes.
func getThrice(url string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	deadline := time.Now().Add(timeout)
	for answered := 0; answered < 3; {
		resp, err := client.Get(url)
		if err != nil {
			if time.Now().After(deadline) {
				return fmt.Errorf("GET %s: %w", url, err)
			}
			time.Sleep(200 * time.Millisecond) // health checks are still probing the nodes
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print("    ", string(b))
		answered++
	}
	return nil
}

func waitVIP(ctx context.Context, c *testcluster.Cluster, name string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		s, err := c.Client.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if ing := s.Status.LoadBalancer.Ingress; len(ing) > 0 && ing[0].IP != "" {
			return ing[0].IP, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no external IP for Service %s within %s", name, timeout)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startNodes plays each instance's kube-proxy: a server on the NodePort
// answering body(instance), and /healthz on 10256, which the load
// balancers probe. It returns a function that stops them.
func startNodes(instances []cloudsim.Instance, nodePort int32, body func(cloudsim.Instance) string) (func(), error) {
	health := kubeproxy.New()
	servers := []*http.Server{}
	stop := func() {
		for _, s := range servers {
			_ = s.Close()
		}
		health.Close()
	}
	for _, in := range instances {
		ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", in.PrivateIP, nodePort))
		if err == nil {
			err = health.Serve(in.PrivateIP)
		}
		if err != nil {
			stop()
			return nil, err
		}
		text := body(in)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, text) }),
			ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		servers = append(servers, srv)
	}
	return stop, nil
}
