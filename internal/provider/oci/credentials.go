package oci

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/internal/oci/ociauth"
)

// startupBudget bounds how long the first instance principal token may
// take: the metadata service may not answer in an instance's first
// seconds, so failures are retried within it.
const startupBudget = 30 * time.Second

// newCredentials builds what the clients sign with, from the config: the
// instance principal, an API key from files (re-read when they change),
// or an inline API key. With instance principals it fills in the region
// and tenancy the config left out, from the instance. wrap wraps the
// credential calls' transport (preflight measures the clock on it).
// budget bounds the retries of the first instance principal token (0: one
// try, as preflight wants an answer, not a wait).
func newCredentials(cfg *config.Config, budget time.Duration, wrap func(http.RoundTripper) http.RoundTripper) (ociauth.Source, error) {
	a := &cfg.Auth
	switch {
	case cfg.InstancePrincipals():
		metrics := ccmmetrics.NewCredentials(ProviderName, ccmmetrics.SourceInstancePrincipal)
		opts := ociauth.InstancePrincipalOptions{
			MetadataURL: a.MetadataEndpoint, FederationURL: a.FederationEndpoint, Region: a.Region, Tenancy: a.Tenancy,
			HTTP: ociapi.AuthHTTP(wrap), Metrics: metrics,
		}
		ip, err := retryStartup(budget, func(ctx context.Context) (*ociauth.InstancePrincipal, error) {
			return ociauth.NewInstancePrincipal(ctx, opts)
		})
		if err != nil {
			metrics.RefreshFailed()
			return nil, fmt.Errorf("OCI instance principal (useInstancePrincipals): %w", err)
		}
		a.Region, a.Tenancy = ip.Region(), ip.Tenancy()
		return ip, nil
	case a.KeyFile != "":
		return ociauth.NewKeyFiles(ociauth.KeyFilesOptions{
			Tenancy: a.Tenancy, User: a.User, KeyFile: a.KeyFile,
			Fingerprint: a.Fingerprint, FingerprintFile: a.FingerprintFile,
			Passphrase: string(a.EffectivePassphrase()), PassphraseFile: a.PassphraseFile,
			Metrics: ccmmetrics.NewCredentials(ProviderName, ccmmetrics.SourceKeyFiles),
		})
	default:
		ccmmetrics.NewCredentials(ProviderName, ccmmetrics.SourceStaticKey)
		return ociauth.NewStatic(a.Tenancy, a.User, a.Fingerprint, string(a.Key), string(a.EffectivePassphrase()))
	}
}

// retryStartup runs f until it succeeds or budget is spent, backing off
// from 1 s; the last error is returned. A zero budget tries once.
func retryStartup[T any](budget time.Duration, f func(context.Context) (T, error)) (T, error) {
	if budget == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return f(ctx)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	wait := time.Second
	for {
		v, err := f(ctx)
		if err == nil {
			return v, nil
		}
		klog.ErrorS(err, "Getting the OCI credentials failed; retrying", "in", wait)
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait = min(2*wait, 8*time.Second)
	}
}

// runCredentials keeps the credentials fresh (a token renewed ahead of
// expiry, key files watched) until stop closes.
func runCredentials(src ociauth.Source, stop <-chan struct{}) {
	klog.InfoS("OCI credentials", "source", src.Kind(), "detail", src.Describe())
	r, ok := src.(ociauth.Runner)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stop
		cancel()
	}()
	go r.Run(ctx)
}
