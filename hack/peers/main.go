// Command peers runs an independent, unmodified Tencent cloud-controller-
// manager (a peer CCM, built from its own source outside this repository)
// against cloudsim and a real kube-apiserver, and reports every request
// cloudsim refused. A request the real cloud accepts must never be refused
// by cloudsim; this is how we check that with clients we did not write.
//
// The peer talks to the real API hostnames over HTTPS, unmodified, so
// hack/peers/run.sh points *.tencentcloudapi.com at 127.0.0.1 in
// /etc/hosts; this command serves TLS there (a throwaway CA, handed to the
// peer through SSL_CERT_FILE) and forwards to cloudsim, which reads the
// service from the Host header as the real endpoint does.
//
// Not part of make test: it needs a peer binary built from external code.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

const (
	secretID    = "AKIDpeerccm0000000000000000000000"
	secretKey   = "peer-ccm-secret-key"
	region      = "ap-guangzhou"
	vpcID       = "vpc-peer0001"
	routeTable  = "cls-peer0001"
	clusterCIDR = "10.244.0.0/16"
	nodePort    = 31080
)

func main() {
	binary := flag.String("tencent-peer", "", "the peer Tencent CCM binary (weimob-tech/cloud-provider-tencent)")
	listen := flag.String("tls-listen", "127.0.0.1:443", "where *.tencentcloudapi.com resolves (see run.sh)")
	duration := flag.Duration("duration", 2*time.Minute, "how long to let the peer work at most")
	flag.Parse()
	if *binary == "" {
		fmt.Fprintln(os.Stderr, "peers: --tencent-peer is required")
		os.Exit(2)
	}
	refused, err := runTencent(*binary, *listen, *duration)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
	if refused > 0 {
		fmt.Printf("cloudsim refused %d requests of the peer: check each against the SDK docs (docs/cloudsim.md#peer-ccms-against-cloudsim)\n", refused)
		os.Exit(1)
	}
	fmt.Println("cloudsim refused nothing the peer sent")
}

// refusal is one non-OK answer.
type refusal struct{ action, code, message string }

// alsoRefusedByTheCloud lists the refusals the real API gives for the same
// request, each with its source: the peer's own behaviour, not cloudsim's.
// Anything else cloudsim refused is a fidelity bug until shown otherwise.
var alsoRefusedByTheCloud = map[string]string{
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
	caFile, stopTLS, err := serveTLS(listen, simURL, dir)
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

	fmt.Println("== calls cloudsim answered, by action and code")
	calls := sim.Calls()
	actions := make([]string, 0, len(calls))
	for a := range calls {
		actions = append(actions, a)
	}
	sort.Strings(actions)
	for _, a := range actions {
		var parts []string
		for code, n := range calls[a] {
			parts = append(parts, fmt.Sprintf("%s=%d", code, n))
		}
		sort.Strings(parts)
		fmt.Printf("  %-28s %s\n", a, strings.Join(parts, " "))
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]bool{}
	unexplained := 0
	for _, r := range refusals {
		why, legit := alsoRefusedByTheCloud[r.action+" "+r.code]
		if !legit {
			unexplained++
		}
		key := r.action + " " + r.code + " " + r.message
		if seen[key] {
			continue
		}
		seen[key] = true
		if legit {
			fmt.Printf("refused, as the cloud would: %s: %s: %s (%s)\n", r.action, r.code, r.message, why)
		} else {
			fmt.Printf("REFUSED %s: %s: %s\n", r.action, r.code, r.message)
		}
	}
	return unexplained, nil
}

func lbService(name string, annotations map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: annotations},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "hello"},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}}}}
}

// serveTLS serves HTTPS on listen with a certificate for
// *.tencentcloudapi.com from a throwaway CA (written to dir/ca.pem) and
// forwards every request, Host header unchanged, to cloudsim.
func serveTLS(listen, simURL, dir string) (caFile string, stop func(), err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "peers throwaway CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, err
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "tencentcloudapi.com"},
		DNSNames:  []string{"tencentcloudapi.com", "*.tencentcloudapi.com", "*.ap-guangzhou.tencentcloudapi.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return "", nil, err
	}
	caFile = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return "", nil, err
	}
	target, err := url.Parse(simURL)
	if err != nil {
		return "", nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(target) // Director keeps req.Host: cloudsim reads the service from it
	srv := &http.Server{Addr: listen, Handler: proxy, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", nil, err
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return caFile, func() { _ = srv.Close() }, nil
}
