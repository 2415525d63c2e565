package tencentcloud

import (
	"context"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

// fakeSecrets serves Secrets from a map keyed namespace/name.
func fakeSecrets(secrets map[string]map[string]string) *certSecrets {
	c := &certSecrets{}
	c.UseGetter(func(_ context.Context, namespace, name string) (*v1.Secret, error) {
		data, ok := secrets[namespace+"/"+name]
		if !ok {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
		}
		s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s, nil
	})
	return c
}

func TestReadProtocols(t *testing.T) {
	secrets := fakeSecrets(map[string]map[string]string{
		"default/one-way": {secretKeyCertID: "certAAAA"},
		"default/mutual":  {secretKeyCertID: "certAAAA", secretKeyCACertID: "caBBBBBB"},
		"default/empty":   {"tls.crt": "x"},
		"other/one-way":   {secretKeyCertID: "certOTHR"},
	})
	svc := func(ann string) *v1.Service {
		s := lbTestService(map[string]string{string(annotations.TKESpecifyProtocol): ann})
		s.Spec.Ports = []v1.ServicePort{
			{Protocol: v1.ProtocolTCP, Port: 80, NodePort: 30080},
			{Protocol: v1.ProtocolTCP, Port: 443, NodePort: 30443},
			{Protocol: v1.ProtocolUDP, Port: 53, NodePort: 30053},
		}
		return s
	}
	tests := []struct {
		name    string
		ann     string
		want    map[string]clbops.PortProtocol
		wantErr string
	}{
		{"TCP_SSL one-way", `{"443":{"protocol":["TCP_SSL"],"tls":"one-way"}}`,
			map[string]clbops.PortProtocol{"TCP-443": {Protocol: "TCP_SSL", CertID: "certAAAA"}}, ""},
		{"TCP_SSL mutual", `{"443":{"protocol":["TCP_SSL"],"tls":"mutual"}}`,
			map[string]clbops.PortProtocol{"TCP-443": {Protocol: "TCP_SSL", CertID: "certAAAA", CACertID: "caBBBBBB"}}, ""},
		{"own protocols change nothing; unknown ports are ignored", `{"80":{"protocol":["TCP"]},"53":{"protocol":["UDP"]},"8443":{"protocol":["TCP_SSL"]}}`,
			map[string]clbops.PortProtocol{}, ""},
		{"Secret of another namespace is not used", `{"443":{"protocol":["TCP_SSL"],"tls":"other/one-way"}}`, nil, "does not exist"},
		{"missing Secret", `{"443":{"protocol":["TCP_SSL"],"tls":"nothere"}}`, nil, "Secret default/nothere (named by \"tls\") does not exist"},
		{"Secret without the id", `{"443":{"protocol":["TCP_SSL"],"tls":"empty"}}`, nil, "has no qcloud_cert_id"},
		{"HTTP", `{"80":{"protocol":["HTTP"]}}`,
			map[string]clbops.PortProtocol{"TCP-80": {Protocol: "HTTP"}}, ""},
		{"HTTPS one-way", `{"443":{"protocol":["HTTPS"],"tls":"one-way"}}`,
			map[string]clbops.PortProtocol{"TCP-443": {Protocol: "HTTPS", CertID: "certAAAA"}}, ""},
		{"HTTPS mutual", `{"443":{"protocol":["HTTPS"],"tls":"mutual"}}`,
			map[string]clbops.PortProtocol{"TCP-443": {Protocol: "HTTPS", CertID: "certAAAA", CACertID: "caBBBBBB"}}, ""},
		{"HTTPS without tls", `{"443":{"protocol":["HTTPS"]}}`, nil, `port 443/TCP: HTTPS needs "tls"`},
		{"hosts (rules per domain) are refused", `{"443":{"protocol":["HTTPS"],"hosts":{"a.example.com":{"tls":"one-way"}}}}`, nil, `port 443/TCP: "hosts" (rules per domain) is not supported`},
		{"tls on HTTP", `{"80":{"protocol":["HTTP"],"tls":"one-way"}}`, nil, `"tls" applies to TCP_SSL and HTTPS only, not HTTP`},
		{"QUIC is not supported", `{"53":{"protocol":["QUIC"]}}`, nil, "port 53/UDP: protocol QUIC is not supported"},
		{"HTTP on a UDP port", `{"53":{"protocol":["HTTP"]}}`, nil, `port 53/UDP: protocol "HTTP" cannot serve a UDP port`},
		{"TCP_SSL on a UDP port", `{"53":{"protocol":["TCP_SSL"],"tls":"one-way"}}`, nil, "port 53/UDP: protocol \"TCP_SSL\" cannot serve a UDP port"},
		{"two protocols on a port", `{"80":{"protocol":["TCP","UDP"]}}`, nil, "exactly one protocol"},
		{"tls on TCP", `{"80":{"protocol":["TCP"],"tls":"one-way"}}`, nil, `"tls" applies to TCP_SSL and HTTPS only`},
		{"not a port", `{"http":{"protocol":["TCP"]}}`, nil, `key "http" is not a port number`},
		{"unknown field", `{"443":{"protocol":["TCP_SSL"],"cert":"one-way"}}`, nil, `unknown field "cert"`},
		{"not JSON", `443=TCP_SSL`, nil, "want TKE's JSON form"},
		{"both bad ports reported", `{"80":{"protocol":["QUIC"]},"443":{"protocol":["TCP_SSL"]}}`, nil, "port 443/TCP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secrets.readProtocols(svc(tt.ann))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), string(annotations.TKESpecifyProtocol)) {
					t.Fatalf("err = %v, want one naming the annotation and containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
