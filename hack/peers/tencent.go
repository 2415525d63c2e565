package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// tencentAlsoRefused lists the refusals the real API gives for the same
// request, each with its source: the peer's own behavior, not cloudsim's.
// Anything else cloudsim refused is a fidelity bug until shown otherwise.
var tencentAlsoRefused = map[string]string{
	// The peer caches DescribeListeners for 60 s and creates the listener
	// again meanwhile. clb@v1.3.105 errors.go: INVALIDPARAMETER_PORTCHECKFAILED
	// "监听器端口检查失败，比如端口冲突" (port check failed, e.g. a port
	// conflict), listed for CreateListener in client.go.
	"CreateListener InvalidParameter.PortCheckFailed": "a second listener on a port that has one (SDK: port conflict)",
}

// runTencent: three CVM instances and their Nodes, a TKE route table, a
// public and a private CLB Service, the peer; then what cloudsim refused.
func runTencent(binary, listen string, duration time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), duration+time.Minute)
	defer cancel()
	w, err := newWorld(ctx, "tencent", listen, cloudsim.Options{
		Region:   region,
		VIPRange: "127.77.1.1-127.77.1.254",
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{secretID: secretKey},
			RouteTables: []tencent.RouteTable{{Name: routeTable, CIDR: clusterCIDR, VpcID: vpcID}},
		},
	}, []string{"tencentcloudapi.com", "*.tencentcloudapi.com"})
	if err != nil {
		return 0, err
	}
	defer w.close()

	var names []string
	for i := 1; i <= 3; i++ {
		ip := fmt.Sprintf("127.77.0.%d", i)
		in := cloudsim.Instance{ID: fmt.Sprintf("ins-peer%04d", i), Name: fmt.Sprintf("peer-%d", i), Type: "S5.MEDIUM4",
			Zone: "ap-guangzhou-3", PrivateIP: ip, VpcID: vpcID, State: "RUNNING"}
		if _, err := w.sim.AddInstances(in); err != nil {
			return 0, err
		}
		// The peer finds instances by private IP, so nodes are named by it,
		// and binds only nodes labeled kubernetes.io/role=node (its default).
		if _, err := w.cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: ip, InternalIP: ip, PodCIDR: fmt.Sprintf("10.244.%d.0/24", i),
			Labels: map[string]string{"kubernetes.io/role": "node"}}); err != nil {
			return 0, err
		}
		names = append(names, ip)
		if err := w.serveNode(ip, nodePort, nodePort+1); err != nil {
			return 0, err
		}
	}
	// Both kinds of CLB the peer makes: public (OPEN) and private
	// (INTERNAL, in a subnet), by its own annotations.
	services := []*corev1.Service{
		lbService("peer-public", map[string]string{"service.beta.kubernetes.io/tencentcloud-loadbalancer-type": "public"}),
		lbService("peer-private", map[string]string{"service.beta.kubernetes.io/tencentcloud-loadbalancer-type": "private",
			"service.beta.kubernetes.io/tencentcloud-loadbalancer-type-internal-subnet-id": "subnet-peer0001"}),
	}
	if err := w.createServices(services, nodePort); err != nil {
		return 0, err
	}

	err = w.startPeer(binary, []string{
		"--cloud-provider=tencentcloud", "--kubeconfig=" + w.cluster.AdminKubeconfig,
		"--leader-elect=false", "--use-service-account-credentials=false",
		"--allocate-node-cidrs=true", "--configure-cloud-routes=true", "--cluster-cidr=" + clusterCIDR,
		"--route-reconciliation-period=10s", "--allow-untagged-cloud=true", "--port=0", "--secure-port=0", "--v=2",
	}, []string{
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_REGION=" + region,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_VPC_ID=" + vpcID,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLB_NAME_PREFIX=peer",
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLB_TAG_KEY=peer-cluster",
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_ID=" + secretID,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_KEY=" + secretKey,
		"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLUSTER_ROUTE_TABLE=" + routeTable,
	})
	if err != nil {
		return 0, err
	}

	routes := func() int {
		rt, err := w.sim.Tencent().TKE().RouteTable(routeTable)
		if err != nil {
			return 0
		}
		return len(rt.Routes)
	}
	initialized, vips := w.await(duration, names, services, func() bool { return routes() == len(names) })
	fmt.Printf("== the peer initialized %d/%d nodes, programmed %d/%d routes, load balancer ingress %v\n",
		initialized, len(names), routes(), len(names), vips)
	probe(vips)
	return w.report(tencentAlsoRefused), nil
}
