//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
)

// ociNetwork is a VirtualNetwork client on cloudsim as the suite's administrator,
// for what a user does through the OCI API (reserving a public IP).
func ociNetwork(t *testing.T) ocicore.VirtualNetworkClient {
	t.Helper()
	clients, err := ociapi.New(ociapi.Options{Tenancy: ociTenancy, User: ociAdminUser, Region: ociRegion, Fingerprint: theOCIEnv.fingerprint,
		Key: theOCIEnv.keyPEM, Endpoint: suite.simURL, Limits: ociapi.Limits{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	return clients.Network
}

func publicIPState(t *testing.T, vn ocicore.VirtualNetworkClient, ip string) ocicore.PublicIpLifecycleStateEnum {
	t.Helper()
	resp, err := vn.GetPublicIpByIpAddress(context.Background(), ocicore.GetPublicIpByIpAddressRequest{
		GetPublicIpByIpAddressDetails: ocicore.GetPublicIpByIpAddressDetails{IpAddress: &ip}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.LifecycleState
}

// TestOCIReservedPublicIP (issue 14 items 4 and 6): a Service whose
// spec.loadBalancerIP names a reserved public IP gets a load balancer at
// that address, of either kind in turn (the IP is AVAILABLE again after
// each Service is deleted); its status shows the address with the ipMode
// the ingress-ip-mode annotation asks for, and traffic flows through it. A
// second Service naming the taken address gets an Event naming it.
func TestOCIReservedPublicIP(t *testing.T) {
	startOCIServiceController(t)
	vn := ociNetwork(t)
	resp, err := vn.CreatePublicIp(context.Background(), ocicore.CreatePublicIpRequest{CreatePublicIpDetails: ocicore.CreatePublicIpDetails{
		CompartmentId: common.String(ociCompartment), Lifetime: ocicore.CreatePublicIpDetailsLifetimeReserved, DisplayName: common.String("e2e-reserved")}})
	if err != nil {
		t.Fatal(err)
	}
	ip := *resp.IpAddress
	t.Cleanup(func() {
		_, _ = vn.DeletePublicIp(context.Background(), ocicore.DeletePublicIpRequest{PublicIpId: resp.Id})
	})
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			sel := "oci-reserved-" + kind
			n1 := ociLBNode(t, sel)
			spec := lbServiceSpec("oci-reserved-"+kind, sel, 8080)
			spec.Annotations[annotations.OCILoadBalancerType.String()] = kind
			spec.Annotations[annotations.OCIIngressIPMode.String()] = "proxy"
			spec.Spec.LoadBalancerIP = ip
			np := nodePort(spec, 8080)
			serve(t, n1.PrivateIP, np, 200, "node-1")
			svc := createService(t, spec)
			if got := waitIngress(t, svc, 90*time.Second); got != ip {
				t.Fatalf("ingress %s, want the reserved %s", got, ip)
			}
			svc = getService(t, svc)
			if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IPMode == nil || *ing[0].IPMode != corev1.LoadBalancerIPModeProxy {
				t.Errorf("status ingress %+v, want one at %s with ipMode Proxy", ing, ip)
			}
			waitAnswers(t, fmt.Sprintf("http://%s:8080/", ip), 30*time.Second, "node-1")
			if s := publicIPState(t, vn, ip); s != ocicore.PublicIpLifecycleStateAssigned {
				t.Errorf("reserved IP %s is %s, want ASSIGNED", ip, s)
			}

			if kind == "lb" {
				t.Run("taken address is an Event", func(t *testing.T) {
					spec2 := lbServiceSpec("oci-reserved-taken", sel, 8081)
					spec2.Spec.LoadBalancerIP = ip
					svc2 := createService(t, spec2)
					waitEvent(t, svc2, "SyncLoadBalancerFailed", []string{"spec.loadBalancerIP " + ip, "not AVAILABLE"}, 60*time.Second)
					if lbs := ociLBsOf(svc2.UID); len(lbs) != 0 {
						t.Errorf("a load balancer was created for the taken address: %+v", lbs)
					}
					if err := suite.cluster.Client.CoreV1().Services(svc2.Namespace).Delete(context.Background(), svc2.Name, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					waitServiceGone(t, svc2, 60*time.Second)
				})
			}

			if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitServiceGone(t, svc, 90*time.Second)
			if s := publicIPState(t, vn, ip); s != ocicore.PublicIpLifecycleStateAvailable {
				t.Errorf("after the Service's deletion the reserved IP is %s, want AVAILABLE", s)
			}
		})
	}
}
