package ccmmetrics

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Credential sources, the `source` label of the credential metrics: one
// closed set for every cloud, so that the alerts name no cloud.
const (
	SourceStaticKey         = "static-key"         // a key pair in the config or the environment
	SourceKeyFiles          = "key-files"          // a key pair read from files, re-read when they change
	SourceCVMRole           = "cvm-role"           // Tencent: the instance's CAM role, from the metadata service
	SourceWebIdentity       = "web-identity"       // Tencent: a ServiceAccount token exchanged at STS
	SourceInstancePrincipal = "instance-principal" // OCI: the instance's identity, exchanged at the federation service
)

// The credential metrics, one shape for every cloud. A static key records
// refreshes (a changed file read again) but never expires.
var (
	credentialSet = NewSet("credentials")

	credentialRefreshes = credentialSet.CounterVec("refreshes_total",
		"Credential refreshes: temporary credentials fetched again, or a key read again after its files changed, by result (ok, error).",
		"provider", "source", "result")
	credentialExpiry = credentialSet.GaugeVec("expiry_timestamp_seconds",
		"When the credentials in use expire, as a Unix time; 0 for credentials that do not expire.",
		"provider", "source")
	credentialUntil = newUntilExpiry()
)

// Credentials records one provider's credential source.
type Credentials struct {
	provider, source string
}

// NewCredentials returns the recorder of a provider's credential source
// and registers the metrics.
func NewCredentials(provider, source string) *Credentials {
	credentialSet.Register()
	credentialUntil.register()
	c := &Credentials{provider: provider, source: source}
	credentialExpiry.WithLabelValues(provider, source).Set(0)
	return c
}

// Refreshed records a successful refresh; expiry is when the new
// credentials expire (zero: never).
func (c *Credentials) Refreshed(expiry time.Time) {
	credentialRefreshes.WithLabelValues(c.provider, c.source, "ok").Inc()
	v := 0.0
	if !expiry.IsZero() {
		v = float64(expiry.Unix())
	}
	credentialExpiry.WithLabelValues(c.provider, c.source).Set(v)
	credentialUntil.set(c.provider, c.source, expiry)
}

// RefreshFailed records a failed refresh; the credentials in use, and
// their expiry, stay as they were.
func (c *Credentials) RefreshFailed() {
	credentialRefreshes.WithLabelValues(c.provider, c.source, "error").Inc()
}

// untilExpiry serves ccmkit_credentials_seconds_until_expiry, computed at
// scrape time from the expiry of each provider's credentials, so that it
// is right even when nothing refreshed for a while.
type untilExpiry struct {
	metrics.BaseStableCollector
	desc *metrics.Desc

	once   sync.Once
	mu     sync.Mutex
	expiry map[[2]string]time.Time // provider, source -> expiry
}

func newUntilExpiry() *untilExpiry {
	return &untilExpiry{
		desc: metrics.NewDesc(namespace+"_credentials_seconds_until_expiry",
			"Seconds until the temporary credentials in use expire (negative once expired); absent for credentials that do not expire.",
			[]string{"provider", "source"}, nil, metrics.ALPHA, ""),
		expiry: map[[2]string]time.Time{},
	}
}

func (u *untilExpiry) register() {
	u.once.Do(func() { legacyregistry.CustomMustRegister(u) })
}

func (u *untilExpiry) set(provider, source string, expiry time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if expiry.IsZero() {
		delete(u.expiry, [2]string{provider, source})
		return
	}
	u.expiry[[2]string{provider, source}] = expiry
}

// DescribeWithStability implements metrics.StableCollector.
func (u *untilExpiry) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- u.desc }

// CollectWithStability implements metrics.StableCollector.
func (u *untilExpiry) CollectWithStability(ch chan<- metrics.Metric) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	for k, exp := range u.expiry {
		ch <- metrics.NewLazyConstMetric(u.desc, metrics.GaugeValue, exp.Sub(now).Seconds(), k[0], k[1])
	}
}
