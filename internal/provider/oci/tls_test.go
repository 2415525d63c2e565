package oci

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/lbops"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// secretsOf is a Secret reader over fixed Secrets of namespace default.
func secretsOf(secrets ...*corev1.Secret) *tlsSecrets {
	byName := map[string]*corev1.Secret{}
	for _, s := range secrets {
		byName[s.Name] = s
	}
	out := &tlsSecrets{}
	out.UseGetter(func(_ context.Context, namespace, name string) (*corev1.Secret, error) {
		if s, ok := byName[name]; ok && namespace == "default" {
			return s, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	})
	return out
}

func tlsSecret(name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: corev1.SecretTypeTLS, Data: data}
}

func TestReadTLS(t *testing.T) {
	ca, err := testca.New("provider test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Server("web.example.test")
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.Server("web.example.test")
	if err != nil {
		t.Fatal(err)
	}
	secrets := secretsOf(
		tlsSecret("web-tls", map[string][]byte{"tls.crt": leaf.CertPEM, "tls.key": leaf.KeyPEM}),
		tlsSecret("backend-tls", map[string][]byte{"tls.crt": leaf.CertPEM, "tls.key": leaf.KeyPEM, "ca.crt": ca.PEM}),
		tlsSecret("ca-only", map[string][]byte{"ca.crt": ca.PEM}),
		tlsSecret("mismatched", map[string][]byte{"tls.crt": leaf.CertPEM, "tls.key": other.KeyPEM}),
		tlsSecret("no-key", map[string][]byte{"tls.crt": leaf.CertPEM}),
	)
	ports := []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
		{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 30443}}
	var (
		sslPorts  = string(annotations.OCILBSSLPorts)
		secret    = string(annotations.OCILBTLSSecret)
		bsSecret  = string(annotations.OCILBTLSBackendSetSecret)
		lsConfig  = string(annotations.OCILBListenerSSLConfig)
		bsConfig  = string(annotations.OCILBBackendSetSSLConfig)
		lbTypeKey = annotations.OCILoadBalancerType.String()
	)
	tests := []struct {
		name    string
		ann     map[string]string
		want    []string // parts of the error; none: valid
		check   func(t *testing.T, d *lbops.Desired)
		warning string
	}{
		{name: "listener TLS with a config", ann: map[string]string{sslPorts: "443", secret: "web-tls",
			lsConfig: `{"CipherSuiteName":"oci-default-http2-tls-12-13-ssl-cipher-suite-v1", "Protocols":["TLSv1.2","TLSv1.3"]}`},
			check: func(t *testing.T, d *lbops.Desired) {
				tl := d.TLS
				if len(tl.Ports) != 1 || tl.Ports[0] != 443 || tl.Listener == nil || tl.Listener.Secret != "default/web-tls" ||
					tl.Listener.PublicCertificate != string(leaf.CertPEM) || tl.Backend != nil ||
					tl.ListenerSSL.CipherSuite != "oci-default-http2-tls-12-13-ssl-cipher-suite-v1" || len(tl.ListenerSSL.Protocols) != 2 {
					t.Errorf("TLS = %+v", tl)
				}
			}},
		{name: "backend TLS only, CA only", ann: map[string]string{sslPorts: "443, 80", bsSecret: "ca-only"},
			check: func(t *testing.T, d *lbops.Desired) {
				if d.TLS.Listener != nil || d.TLS.Backend == nil || d.TLS.Backend.CACertificate != string(ca.PEM) || len(d.TLS.Ports) != 2 {
					t.Errorf("TLS = %+v", d.TLS)
				}
			}},
		{name: "nlb: ignored with a warning", ann: map[string]string{lbTypeKey: "nlb", sslPorts: "443", secret: "missing"},
			warning: EventReasonTLSNotOnNLB, check: func(t *testing.T, d *lbops.Desired) {
				if d.TLS.Ports != nil || d.TLS.Listener != nil {
					t.Errorf("TLS on an NLB: %+v", d.TLS)
				}
			}},
		{name: "missing Secret", ann: map[string]string{sslPorts: "443", secret: "missing"},
			want: []string{"tls-secret: the Secret default/missing does not exist"}},
		{name: "mismatched key", ann: map[string]string{sslPorts: "443", secret: "mismatched"},
			want: []string{"the Secret default/mismatched: tls.crt and tls.key are not a matching"}},
		{name: "no key", ann: map[string]string{sslPorts: "443", secret: "no-key"}, want: []string{"default/no-key has tls.crt but no tls.key"}},
		{name: "CA only cannot serve", ann: map[string]string{sslPorts: "443", secret: "ca-only"}, want: []string{"default/ca-only has no tls.crt"}},
		{name: "not a port of the Service", ann: map[string]string{sslPorts: "8443", secret: "web-tls"}, want: []string{"ssl-ports", "port 8443 is not a port of the Service"}},
		{name: "ports without a Secret", ann: map[string]string{sslPorts: "443"}, want: []string{"ssl-ports needs"}},
		{name: "Secret without ports", ann: map[string]string{secret: "web-tls"}, want: []string{"names no port"}},
		{name: "config without its Secret", ann: map[string]string{sslPorts: "443", secret: "web-tls", bsConfig: `{"Protocols":["TLSv1.2"]}`},
			want: []string{"backendset-ssl-config applies with", "tls-backendset-secret"}},
		{name: "bad config", ann: map[string]string{sslPorts: "443", secret: "web-tls", lsConfig: `{"Ciphers":"x"}`},
			want: []string{"listener-ssl-config", "CipherSuiteName"}},
		{name: "bad protocol", ann: map[string]string{sslPorts: "443", secret: "web-tls", lsConfig: `{"Protocols":["SSLv3"]}`},
			want: []string{`protocol "SSLv3"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &ociTranslator{cfg: lbCfg, secrets: secrets}
			d, warnings, err := tr.Desired("k", lbService(tt.ann, ports...), []*corev1.Node{lbNode("a", "10.0.0.1", true)})
			if len(tt.want) > 0 {
				for _, w := range tt.want {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("error does not contain %q:\n%v", w, err)
					}
				}
				if err != nil && strings.Contains(err.Error(), "BEGIN") {
					t.Errorf("the error shows PEM: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.warning != "" && (len(warnings) != 1 || warnings[0].Reason != tt.warning) {
				t.Errorf("warnings %+v, want one %s", warnings, tt.warning)
			}
			tt.check(t, d)
		})
	}
}

func TestReadTLSWithoutClient(t *testing.T) {
	tr := &ociTranslator{cfg: lbCfg}
	svc := lbService(map[string]string{string(annotations.OCILBSSLPorts): "80", string(annotations.OCILBTLSSecret): "web-tls"})
	_, _, err := tr.Desired("k", svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)})
	if err == nil || !strings.Contains(err.Error(), "no Kubernetes client") {
		t.Errorf("error %v, want one saying the CCM has no client", err)
	}
}
