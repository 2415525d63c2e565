package lbkit

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SecretTimeout bounds the read of one Secret.
const SecretTimeout = 10 * time.Second

// ErrNoClient: the provider has no Kubernetes client yet (Initialize has
// not run), so no Secret can be read.
var ErrNoClient = errors.New("the CCM has no Kubernetes client")

// SecretGetter reads one Secret.
type SecretGetter func(ctx context.Context, namespace, name string) (*v1.Secret, error)

// SecretReader reads the Secrets a Service's annotations name (TLS
// certificates, certificate ids). It reads nothing until the provider has
// a Kubernetes client, which arrives after the load balancers are built;
// the zero value and a nil *SecretReader answer ErrNoClient.
type SecretReader struct {
	get atomic.Pointer[SecretGetter]
}

// Use makes the Secrets come from client.
func (r *SecretReader) Use(client kubernetes.Interface) {
	r.UseGetter(func(ctx context.Context, namespace, name string) (*v1.Secret, error) {
		return client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	})
}

// UseGetter makes the Secrets come from g (tests serve fixed Secrets).
func (r *SecretReader) UseGetter(g SecretGetter) { r.get.Store(&g) }

// Get reads the Secret namespace/name within SecretTimeout. The error is
// ErrNoClient, the API's (apierrors.IsNotFound works on it), or nil; the
// caller words it for the annotation that named the Secret.
func (r *SecretReader) Get(namespace, name string) (*v1.Secret, error) {
	var get *SecretGetter
	if r != nil {
		get = r.get.Load()
	}
	if get == nil {
		return nil, ErrNoClient
	}
	ctx, cancel := context.WithTimeout(context.Background(), SecretTimeout)
	defer cancel()
	return (*get)(ctx, namespace, name)
}
