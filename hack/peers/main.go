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
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

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
	tencentPeer := flag.String("tencent-peer", "", "the peer Tencent CCM binary (weimob-tech/cloud-provider-tencent)")
	ociPeer := flag.String("oci-peer", "", "the peer OCI CCM binary (oracle/oci-cloud-controller-manager)")
	listen := flag.String("tls-listen", "127.0.0.1:443", "where the clouds' API hostnames resolve (see run.sh)")
	duration := flag.Duration("duration", 2*time.Minute, "how long to let each peer work at most")
	flag.Parse()
	if *tencentPeer == "" && *ociPeer == "" {
		fmt.Fprintln(os.Stderr, "peers: give --tencent-peer, --oci-peer or both")
		os.Exit(2)
	}
	refused := 0
	for _, p := range []struct {
		binary string
		run    func(binary, listen string, d time.Duration) (int, error)
	}{{*tencentPeer, runTencent}, {*ociPeer, runOCI}} {
		if p.binary == "" {
			continue
		}
		n, err := p.run(p.binary, *listen, *duration)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peers:", err)
			os.Exit(1)
		}
		refused += n
	}
	if refused > 0 {
		fmt.Printf("cloudsim refused %d requests of the peer: check each against the SDK docs (docs/cloudsim.md#peer-ccms-against-cloudsim)\n", refused)
		os.Exit(1)
	}
	fmt.Println("cloudsim refused nothing the peer sent")
}

// refusal is one non-OK answer.
type refusal struct{ action, code, message string }

// report prints the calls cloudsim answered and every refusal, and returns
// how many refusals allowed does not explain.
func report(sim *cloudsim.Sim, refusals []refusal, allowed map[string]string) int {
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
	seen := map[string]bool{}
	unexplained := 0
	for _, r := range refusals {
		why, legit := allowed[r.action+" "+r.code]
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
	return unexplained
}

// lbService is a LoadBalancer Service on port 80 with the peer's annotations.
func lbService(name string, annotations map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: annotations},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "hello"},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}}}}
}
