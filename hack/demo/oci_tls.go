package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// ociDemoTLS is the OCI demo's HTTPS Service: port 8443 in ssl-ports, its
// certificate (signed by the demo's CA) in a kubernetes.io/tls Secret
// named by tls-secret, as with the public OCI CCM. The load balancer ends
// TLS and forwards plain HTTP to the nodes. It GETs the Service through
// the VIP verifying the chain against the demo CA (written to
// dir/demo-ca.pem), and returns the curl command that does the same and a
// function that stops the node servers.
func ociDemoTLS(ctx context.Context, c *testcluster.Cluster, sim *cloudsim.Sim, instances []cloudsim.Instance, dir string, timeout time.Duration) (string, func(), error) {
	ca, caFile, leaf, err := demoCA(dir)
	if err != nil {
		return "", nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-oci-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: leaf.CertPEM, corev1.TLSPrivateKeyKey: leaf.KeyPEM}}
	if _, err := c.Client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return "", nil, err
	}
	step("created the kubernetes.io/tls Secret hello-oci-tls: a certificate for %s signed by the demo CA (%s)", demoTLSName, caFile)
	ann := map[string]string{string(annotations.OCILBSSLPorts): fmt.Sprint(demoTLSPort), string(annotations.OCILBTLSSecret): "hello-oci-tls"}
	step("creating an HTTPS Service: %s: %q, %s: hello-oci-tls", annotations.OCILBSSLPorts, fmt.Sprint(demoTLSPort), annotations.OCILBTLSSecret)
	vip, stop, err := exposeHTTPS(ctx, c, instances, "hello-oci-tls", ann, func(in cloudsim.Instance) string {
		return fmt.Sprintf("hello over TLS (ended at the OCI load balancer) from %s (%s)\n", in.Name, in.PrivateIP)
	}, timeout)
	if err != nil {
		return "", nil, err
	}
	for _, lb := range sim.OCI().LoadBalancers() {
		if lb.IPAddress == vip {
			fmt.Printf("\nOCI %s %s: listener TCP-%d ends TLS with a certificate made from the Secret\n\n", lb.Kind, lb.ID, demoTLSPort)
		}
	}
	curl, err := getHTTPS(vip, ca, caFile, timeout)
	if err != nil {
		stop()
		return "", nil, err
	}
	return curl, stop, nil
}
