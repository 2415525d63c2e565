package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// The demo's HTTPS Service: port 8443 made TCP_SSL with TKE's
// specify-protocol annotation, so that the CLB ends TLS with a certificate
// signed by the demo's own CA and forwards plain HTTP to the nodes.
const (
	demoTLSPort = 8443
	demoTLSName = "hello.demo.ccmkit.test" // the certificate's name; curl --resolve maps it to the VIP
)

// demoTLS uploads a certificate to cloudsim, names it in TKE's certificate
// Secret, creates the HTTPS Service and GETs it through the VIP verifying
// the chain against the demo CA (written to dir/demo-ca.pem). It returns
// the curl command that does the same and a function that stops the node
// servers.
func demoTLS(ctx context.Context, c *testcluster.Cluster, sim *cloudsim.Sim, instances []cloudsim.Instance, dir string, timeout time.Duration) (string, func(), error) {
	ca, caFile, leaf, err := demoCA(dir)
	if err != nil {
		return "", nil, err
	}
	cert, err := sim.Tencent().CLB().UploadCertificate(tencent.CertificateSpec{Name: "hello-demo", Certificate: string(leaf.CertPEM), Key: string(leaf.KeyPEM)})
	if err != nil {
		return "", nil, err
	}
	step("uploaded a certificate for %s, signed by the demo CA (%s), to cloudsim: id %s", demoTLSName, caFile, cert.ID)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-tls-cert"}, Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{"qcloud_cert_id": cert.ID}}
	if _, err := c.Client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return "", nil, err
	}
	ann := fmt.Sprintf(`{"%d":{"protocol":["TCP_SSL"],"tls":"hello-tls-cert"}}`, demoTLSPort)
	step("creating an HTTPS Service: %s: %s", annotations.TKESpecifyProtocol, ann)
	vip, stop, err := exposeHTTPS(ctx, c, instances, "hello-tls", map[string]string{string(annotations.TKESpecifyProtocol): ann}, func(in cloudsim.Instance) string {
		return fmt.Sprintf("hello over TLS (ended at the CLB) from %s (%s)\n", in.Name, in.PrivateIP)
	}, timeout)
	if err != nil {
		return "", nil, err
	}
	for _, lb := range sim.Tencent().CLB().LoadBalancers() {
		for _, l := range lb.Listeners {
			if lb.VIP == vip && l.Certificate != nil {
				fmt.Printf("\nCLB %s: listener %s %s/%d, certificate %s (%s)\n\n", lb.ID, l.Name, l.Protocol, l.Port, *l.Certificate.CertId, *l.Certificate.SSLMode)
			}
		}
	}
	curl, err := getHTTPS(vip, ca, caFile, timeout)
	if err != nil {
		stop()
		return "", nil, err
	}
	return curl, stop, nil
}

// demoCA makes the demo's CA, writes its PEM to dir/demo-ca.pem (the
// file curl --cacert takes) and issues it a certificate for demoTLSName.
func demoCA(dir string) (*testca.CA, string, testca.Leaf, error) {
	ca, err := testca.New("ccmkit demo CA")
	if err != nil {
		return nil, "", testca.Leaf{}, err
	}
	caFile := filepath.Join(dir, "demo-ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o644); err != nil {
		return nil, "", testca.Leaf{}, err
	}
	leaf, err := ca.Server(demoTLSName)
	if err != nil {
		return nil, "", testca.Leaf{}, err
	}
	return ca, caFile, leaf, nil
}

// exposeHTTPS creates the HTTPS Service name (port demoTLSPort, with the
// annotations ann) and starts the nodes' servers on the NodePort it gets,
// each answering greeting. It returns the Service's external IP and a
// function that stops the servers.
func exposeHTTPS(ctx context.Context, c *testcluster.Cluster, instances []cloudsim.Instance, name string, ann map[string]string,
	greeting func(cloudsim.Instance) string, timeout time.Duration) (string, func(), error) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "hello"},
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: demoTLSPort, TargetPort: intstr.FromInt32(8080)}}},
	}
	created, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return "", nil, err
	}
	// The apiserver chose the NodePort: the nodes' servers listen on it now
	// (their kube-proxy health port already answers the load balancer's
	// checks).
	stop, err := serveNodePort(instances, created.Spec.Ports[0].NodePort, greeting)
	if err != nil {
		return "", nil, err
	}
	vip, err := waitVIP(ctx, c, svc.Name, timeout)
	if err != nil {
		stop()
		return "", nil, err
	}
	return vip, stop, nil
}

// serveNodePort is the nodes' kube-proxy on one more NodePort: plain HTTP,
// answering text (which node it is); the health port is startNodes'.
func serveNodePort(instances []cloudsim.Instance, port int32, text func(cloudsim.Instance) string) (func(), error) {
	var servers []*http.Server
	stop := func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	for _, in := range instances {
		ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", in.PrivateIP, port))
		if err != nil {
			stop()
			return nil, err
		}
		body := text(in)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }),
			ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		servers = append(servers, srv)
	}
	return stop, nil
}

// getHTTPS GETs the demo's HTTPS Service twice through vip, verifying the
// chain against the demo CA (whose PEM is caFile), and returns the curl
// command that does the same.
func getHTTPS(vip string, ca *testca.CA, caFile string, timeout time.Duration) (string, error) {
	url := fmt.Sprintf("https://%s:%d/", demoTLSName, demoTLSPort)
	direct := fmt.Sprintf("https://%s:%d/", vip, demoTLSPort)
	step("GET %s through VIP %s, verifying the chain against the demo CA", url, vip)
	deadline := time.Now().Add(timeout)
	for answered := 0; answered < 2; {
		body, err := testca.Get(direct, ca.Pool(), demoTLSName, nil)
		if err != nil {
			if time.Now().After(deadline) {
				return "", fmt.Errorf("HTTPS GET %s: %w", direct, err)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		fmt.Print("    ", body)
		answered++
	}
	return fmt.Sprintf("curl --cacert %s --resolve %s:%d:%s %s", caFile, demoTLSName, demoTLSPort, vip, url), nil
}
