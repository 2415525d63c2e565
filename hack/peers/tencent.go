package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// tencentAlsoRefused lists the refusals the real API gives for the same
// request, each with its source: the peer's own behaviour, not cloudsim's.
// Anything else cloudsim refused is a fidelity bug until shown otherwise.
var tencentAlsoRefused = map[string]string{
	// The peer caches DescribeListeners for 60 s and creates the listener
	// again meanwhile. clb@v1.3.105 errors.go: INVALIDPARAMETER_PORTCHECKFAILED
	// "监听器端口检查失败，比如端口冲突" (port check failed, e.g. a port
	// conflict), listed for CreateListener in client.go.
	"CreateListener InvalidParameter.PortCheckFailed": "a second listener on a port that has one (SDK: port conflict)",
}

func runTencent(binary, listen string, duration time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), duration+time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "peer-ccm-")
	if err != nil {
		return 0, err
	}
	fmt.Println("== starting etcd and kube-apiserver", testcluster.K8sVersion, "in", dir)
	cluster, err := testcluster.Start(dir)
	if err != nil {
		return 0, err
	}
	defer cluster.Stop()

	var mu sync.Mutex
	var refusals []refusal
	sim := cloudsim.New(cloudsim.Options{
		Region: region, Credentials: map[string]string{secretID: secretKey},
		RouteTables: []cloudsim.RouteTable{{Name: routeTable, CIDR: clusterCIDR, VpcID: vpcID}},
		VIPRange:    "127.77.1.1-127.77.1.254",
		OnCall: func(c cloudsim.Call) {
			if c.Code != "OK" {
				mu.Lock()
				refusals = append(refusals, refusal{c.Action, c.Code, c.Message})
				mu.Unlock()
			}
		},
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer sim.Close()
	caFile, stopTLS, err := serveTLS(listen, simURL, dir, []string{"tencentcloudapi.com", "*.tencentcloudapi.com"})
	if err != nil {
		return 0, fmt.Errorf("serving TLS on %s (run as root, see run.sh): %w", listen, err)
	}
	defer stopTLS()

	var names []string
	for i := 1; i <= 3; i++ {
		ip := fmt.Sprintf("127.77.0.%d", i)
		in := cloudsim.Instance{ID: fmt.Sprintf("ins-peer%04d", i), Name: fmt.Sprintf("peer-%d", i), Type: "S5.MEDIUM4",
			Zone: "ap-guangzhou-3", PrivateIP: ip, VpcID: vpcID, State: "RUNNING"}
		if _, err := sim.AddInstances(in); err != nil {
			return 0, err
		}
		// The peer finds instances by private IP, so nodes are named by it,
		// and binds only nodes labelled kubernetes.io/role=node (its default).
		if _, err := cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: ip, InternalIP: ip, PodCIDR: fmt.Sprintf("10.244.%d.0/24", i),
			Labels: map[string]string{"kubernetes.io/role": "node"}}); err != nil {
			return 0, err
		}
		names = append(names, ip)
		for port := nodePort; port < nodePort+2; port++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
			if err != nil {
				return 0, err
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello from", ip) }),
				ReadHeaderTimeout: 5 * time.Second}
			go func() { _ = srv.Serve(ln) }()
			defer srv.Close()
		}
	}
	// Both kinds of CLB the peer makes: public (OPEN) and private
	// (INTERNAL, in a subnet), by its own annotations.
	services := []*corev1.Service{
		lbService("peer-public", map[string]string{"service.beta.kubernetes.io/tencentcloud-loadbalancer-type": "public"}),
		lbService("peer-private", map[string]string{"service.beta.kubernetes.io/tencentcloud-loadbalancer-type": "private",
			"service.beta.kubernetes.io/tencentcloud-loadbalancer-type-internal-subnet-id": "subnet-peer0001"}),
	}
	for i, svc := range services {
		svc.Spec.Ports[0].NodePort = nodePort + int32(i)
		if _, err := cluster.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return 0, err
		}
	}

	logPath := filepath.Join(dir, "peer.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd := exec.Command(binary,
		"--cloud-provider=tencentcloud", "--kubeconfig="+cluster.AdminKubeconfig,
		"--leader-elect=false", "--use-service-account-credentials=false",
		"--allocate-node-cidrs=true", "--configure-cloud-routes=true", "--cluster-cidr="+clusterCIDR,
		"--route-reconciliation-period=10s", "--allow-untagged-cloud=true", "--port=0", "--secure-port=0", "--v=2")
	cmd.Env = append(os.Environ(),
		"SSL_CERT_FILE="+caFile,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_REGION="+region,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_VPC_ID="+vpcID,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLB_NAME_PREFIX=peer",
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLB_TAG_KEY=peer-cluster",
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_ID="+secretID,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_KEY="+secretKey,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLUSTER_ROUTE_TABLE="+routeTable,
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	fmt.Println("== starting the peer:", binary, "(log:", logPath+")")
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	// Let it work until it did everything it can or the time is up.
	deadline := time.Now().Add(duration)
	var initialized, routes int
	vips := map[string]string{}
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		initialized = 0
		for _, n := range names {
			node, err := cluster.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err == nil && !testcluster.HasTaint(node, cloudapi.TaintExternalCloudProvider) && node.Spec.ProviderID != "" {
				initialized++
			}
		}
		if rt, err := sim.RouteTable(routeTable); err == nil {
			routes = len(rt.Routes)
		}
		for _, svc := range services {
			if s, err := cluster.Client.CoreV1().Services("default").Get(ctx, svc.Name, metav1.GetOptions{}); err == nil && len(s.Status.LoadBalancer.Ingress) > 0 {
				vips[svc.Name] = s.Status.LoadBalancer.Ingress[0].IP
			}
		}
		if initialized == len(names) && routes == len(names) && len(vips) == len(services) {
			break
		}
	}
	fmt.Printf("== the peer initialized %d/%d nodes, programmed %d/%d routes, load balancer ingress %v\n", initialized, len(names), routes, len(names), vips)
	for name, vip := range vips {
		if resp, err := http.Get("http://" + vip + "/"); err == nil {
			fmt.Println("== through", name+"'s VIP:", resp.Status)
			_ = resp.Body.Close()
		} else {
			fmt.Println("== through", name+"'s VIP:", err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	return report(sim, refusals, tencentAlsoRefused), nil
}
