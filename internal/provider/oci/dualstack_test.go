package oci

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

func TestReadIPFamilies(t *testing.T) {
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	require, prefer := corev1.IPFamilyPolicyRequireDualStack, corev1.IPFamilyPolicyPreferDualStack
	for _, tc := range []struct {
		name     string
		kind     lbops.Kind
		families []corev1.IPFamily
		policy   *corev1.IPFamilyPolicy
		assigned string
		want     string // "<IPVersion> <AssignedIPv6>", or the error's text, or "warning"
	}{
		{"nlb default", lbops.KindNLB, nil, nil, "", "IPV4 "},
		{"nlb dual", lbops.KindNLB, []corev1.IPFamily{v4, v6}, &require, "", "IPV4_AND_IPV6 "},
		{"nlb dual, IPv6 primary", lbops.KindNLB, []corev1.IPFamily{v6, v4}, &prefer, "FD00::7", "IPV4_AND_IPV6 fd00::7"},
		{"nlb IPv6 only", lbops.KindNLB, []corev1.IPFamily{v6}, nil, "", "IPV6 "},
		{"nlb prefer on a single-stack Service", lbops.KindNLB, []corev1.IPFamily{v4}, &prefer, "", "IPV4 "},
		{"assigned-ipv6 on IPv4", lbops.KindNLB, []corev1.IPFamily{v4}, nil, "fd00::7", "error: the Service has no IPv6 family"},
		{"assigned-ipv6 not IPv6", lbops.KindNLB, []corev1.IPFamily{v4, v6}, &require, "10.0.0.7", "error: must be an IPv6 address"},
		{"lb IPv4", lbops.KindLB, []corev1.IPFamily{v4}, nil, "", " "},
		{"lb prefer dual", lbops.KindLB, []corev1.IPFamily{v4, v6}, &prefer, "", "warning: the OCI Load Balancer serves IPv4 only"},
		{"lb require dual", lbops.KindLB, []corev1.IPFamily{v4, v6}, &require, "", "error: serves IPv4 only here"},
		{"lb IPv6 only", lbops.KindLB, []corev1.IPFamily{v6}, nil, "", "error: serves IPv4 only here"},
		{"lb assigned-ipv6", lbops.KindLB, []corev1.IPFamily{v4}, nil, "fd00::7", "error: applies to a network load balancer only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: corev1.ServiceSpec{IPFamilies: tc.families, IPFamilyPolicy: tc.policy}}
			svc.Annotations = map[string]string{}
			if tc.assigned != "" {
				svc.Annotations[string(annotations.OCINLBAssignedIPv6)] = tc.assigned
			}
			s := lbops.Settings{Kind: tc.kind}
			errs, w := readIPFamilies(svc, &s)
			var got string
			switch {
			case len(errs) > 0:
				got = fmt.Sprint("error: ", errs)
			case w != nil:
				got = "warning: " + w.Message
			default:
				got = s.IPVersion + " " + s.AssignedIPv6
			}
			kind, text, isMsg := strings.Cut(tc.want, ": ")
			ok := got == tc.want
			if isMsg && (kind == "error" || kind == "warning") {
				ok = strings.HasPrefix(got, kind+": ") && strings.Contains(got, text)
			}
			if !ok {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
