package oci

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/identity"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

const (
	testTenancy = "ocid1.tenancy.oc1..aaaaaaaatesttenancy"
	testUser    = "ocid1.user.oc1..aaaaaaaatestuser"
)

// RSA key generation is slow under -race; every test shares two keys.
var (
	keysOnce  sync.Once
	keyA      *rsa.PrivateKey
	keyB      *rsa.PrivateKey
	keysError error
)

func testKeys(t *testing.T) (*rsa.PrivateKey, *rsa.PrivateKey) {
	t.Helper()
	keysOnce.Do(func() {
		if keyA, keysError = rsa.GenerateKey(rand.Reader, 2048); keysError != nil {
			return
		}
		keyB, keysError = rsa.GenerateKey(rand.Reader, 2048)
	})
	if keysError != nil {
		t.Fatal(keysError)
	}
	return keyA, keyB
}

func privatePEM(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

func publicPEM(t *testing.T, k *rsa.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func keyIDOf(k *rsa.PrivateKey) string {
	return testTenancy + "/" + testUser + "/" + Fingerprint(&k.PublicKey)
}

// testEnv is a dialect behind an httptest server, with key A registered,
// and SDK clients that sign with it.
type testEnv struct {
	t        *testing.T
	core     *core.Core
	d        *Dialect
	url      string
	provider common.ConfigurationProvider
}

func newTestEnv(t *testing.T, opts Options, cfg core.Config) *testEnv {
	t.Helper()
	return newPlaneEnv(t, nil, opts, cfg)
}

// newPlaneEnv is newTestEnv with the load balancers on plane.
func newPlaneEnv(t *testing.T, plane *dataplane.Plane, opts Options, cfg core.Config) *testEnv {
	t.Helper()
	a, _ := testKeys(t)
	if cfg.Latency == nil {
		cfg.Latency = core.ZeroLatency // unit tests: answers at once
	}
	c := core.New(cfg)
	if opts.Keys == nil {
		opts.Keys = map[string]string{keyIDOf(a): publicPEM(t, &a.PublicKey)}
	}
	if opts.WorkRequestLatency == 0 {
		opts.WorkRequestLatency = -1 // tests that want latency ask for it
	}
	d, err := New(c, plane, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", c.AdminHandler())
	for _, p := range d.Patterns() {
		mux.Handle(p, d)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	return &testEnv{t: t, core: c, d: d, url: srv.URL, provider: providerFor(a)}
}

func providerFor(k *rsa.PrivateKey) common.ConfigurationProvider {
	return common.NewRawConfigurationProvider(testTenancy, testUser, DefaultRegion, Fingerprint(&k.PublicKey), privatePEM(k), nil)
}

// configure points an SDK client at the simulator, without the circuit
// breaker (fault tests would open it) and without retries.
func (e *testEnv) configure(bc *common.BaseClient) {
	bc.Host = e.url
	bc.Configuration.CircuitBreaker = nil
	noRetry := common.NoRetryPolicy()
	bc.Configuration.RetryPolicy = &noRetry
}

func (e *testEnv) compute() ocicore.ComputeClient { return e.computeWith(e.provider) }

func (e *testEnv) computeWith(p common.ConfigurationProvider) ocicore.ComputeClient {
	c, err := ocicore.NewComputeClientWithConfigurationProvider(p)
	if err != nil {
		e.t.Fatal(err)
	}
	e.configure(&c.BaseClient)
	return c
}

func (e *testEnv) network() ocicore.VirtualNetworkClient {
	c, err := ocicore.NewVirtualNetworkClientWithConfigurationProvider(e.provider)
	if err != nil {
		e.t.Fatal(err)
	}
	e.configure(&c.BaseClient)
	return c
}

func (e *testEnv) identity() identity.IdentityClient {
	c, err := identity.NewIdentityClientWithConfigurationProvider(e.provider)
	if err != nil {
		e.t.Fatal(err)
	}
	e.configure(&c.BaseClient)
	return c
}

func (e *testEnv) lb() loadbalancer.LoadBalancerClient {
	c, err := loadbalancer.NewLoadBalancerClientWithConfigurationProvider(e.provider)
	if err != nil {
		e.t.Fatal(err)
	}
	e.configure(&c.BaseClient)
	return c
}

func (e *testEnv) nlb() networkloadbalancer.NetworkLoadBalancerClient {
	c, err := networkloadbalancer.NewNetworkLoadBalancerClientWithConfigurationProvider(e.provider)
	if err != nil {
		e.t.Fatal(err)
	}
	e.configure(&c.BaseClient)
	return c
}

func (e *testEnv) addInstances(in ...core.Instance) []core.Instance {
	e.t.Helper()
	out, err := e.core.AddInstances(in...)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// svcErr returns the HTTP status and code of an SDK service error.
func svcErr(t *testing.T, err error) (int, string) {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got none")
	}
	var se common.ServiceError
	if !errors.As(err, &se) {
		t.Fatalf("want a service error, got %T: %v", err, err)
	}
	return se.GetHTTPStatusCode(), se.GetCode()
}

func wantErr(t *testing.T, err error, status int, code string) {
	t.Helper()
	gotStatus, gotCode := svcErr(t, err)
	if gotStatus != status || gotCode != code {
		t.Fatalf("got %d %s (%v), want %d %s", gotStatus, gotCode, err, status, code)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// eventually polls f until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after %s: %v", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// nlbPublicIP is the public address of a public NLB, which lists its
// private address too.
func nlbPublicIP(t *testing.T, ips []networkloadbalancer.IpAddress) string {
	t.Helper()
	for _, ip := range ips {
		if ip.IsPublic != nil && *ip.IsPublic {
			return *ip.IpAddress
		}
	}
	t.Fatalf("no public address in %+v", ips)
	return ""
}
