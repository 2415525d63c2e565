// Package credentials provides the Tencent Cloud API credentials that every
// SDK client of the CCM shares: one Credential (a common.CredentialIface),
// whose value a background loop replaces before it expires, or when the
// key files change. A call reads the SecretId, SecretKey and token in one
// atomic load, so a swap never mixes two credentials and never blocks or
// fails a call in flight; the old value stays valid until it expires.
//
// One file per source: static.go (a key in the config), keyfiles.go (a
// key read from files, re-read when the kubelet updates the mounted
// Secret), cvmrole.go (the instance's CAM role, from the metadata service)
// and webidentity.go (a ServiceAccount token exchanged at STS).
package credentials

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Value is one set of credentials. Expiry is zero for a key that does not
// expire.
type Value struct {
	SecretID, SecretKey, Token string
	Expiry                     time.Time
}

// Source fetches credentials.
type Source interface {
	// Name is the source's metrics label (ccmmetrics.Source*).
	Name() string
	// Describe says where the credentials come from, for preflight and
	// logs (never a secret).
	Describe() string
	// Fetch returns fresh credentials.
	Fetch(ctx context.Context) (Value, error)
}

// watcher is a source whose value changes on an outside signal (key files)
// rather than by expiring.
type watcher interface {
	// Changes signals when the value may have changed, until ctx ends.
	Changes(ctx context.Context) <-chan struct{}
}

// Credential is the credential every SDK client shares.
type Credential struct {
	src     Source
	value   atomic.Pointer[Value]
	metrics *ccmmetrics.Credentials
	now     func() time.Time
	policy  Policy
}

var _ common.CredentialIface = (*Credential)(nil)

// Policy is when to refresh and how to retry; zero values take the
// defaults.
//
// A refresh is due at half the remaining lifetime (1 h for STS's default
// 2 h, 10 s for 20 s credentials): long before expiry, so that a failing
// source gets many retries while the current credentials still work,
// and proportional, so that short lifetimes neither refresh in a tight
// loop nor wait too long. ("N minutes before expiry" would be the same
// for long lifetimes and a busy loop for short ones.)
type Policy struct {
	// RetryBase is the first retry delay after a failed fetch; it doubles
	// up to RetryMax (defaults 1s and 30s).
	RetryBase, RetryMax time.Duration
	// StartAttempts is how often the first fetch is tried before Start
	// gives up (default 3).
	StartAttempts int
	// Quiet leaves out the log line of the first fetch, for callers that
	// report the source themselves (preflight).
	Quiet bool
}

func (p Policy) withDefaults() Policy {
	if p.RetryBase <= 0 {
		p.RetryBase = time.Second
	}
	if p.RetryMax <= 0 {
		p.RetryMax = 30 * time.Second
	}
	if p.StartAttempts <= 0 {
		p.StartAttempts = 3
	}
	return p
}

// Start fetches the first credentials from src (a few tries, as the
// metadata service or STS may blink) and keeps them fresh in the
// background until ctx ends. provider labels the metrics.
func Start(ctx context.Context, provider string, src Source, p Policy) (*Credential, error) {
	c := &Credential{
		src:     src,
		metrics: ccmmetrics.NewCredentials(provider, src.Name()),
		now:     time.Now,
		policy:  p.withDefaults(),
	}
	var err error
	for attempt := range c.policy.StartAttempts {
		if attempt > 0 && !sleep(ctx, c.retryDelay(attempt-1)) {
			break
		}
		var v Value
		if v, err = src.Fetch(ctx); err == nil {
			c.value.Store(&v)
			if !v.Expiry.IsZero() { // temporary: the first fetch is a refresh too
				c.metrics.Refreshed(v.Expiry)
			}
			if !c.policy.Quiet {
				klog.InfoS("Tencent Cloud credentials loaded", "source", src.Describe(), "expires", expiryText(v.Expiry))
			}
			go c.run(ctx)
			return c, nil
		}
		c.metrics.RefreshFailed()
	}
	return nil, fmt.Errorf("credentials from %s: %w", src.Describe(), err)
}

// run keeps the value fresh: by expiry for temporary credentials, on
// change for key files; a static key never changes.
func (c *Credential) run(ctx context.Context) {
	if w, ok := c.src.(watcher); ok {
		c.watch(ctx, w.Changes(ctx))
		return
	}
	if c.Value().Expiry.IsZero() {
		return
	}
	failures := 0
	for {
		wait := c.refreshIn()
		if failures > 0 {
			wait = c.retryDelay(failures - 1)
		}
		if !sleep(ctx, wait) {
			return
		}
		if c.refresh(ctx) {
			failures = 0
		} else {
			failures++
		}
	}
}

// refresh fetches and swaps in new credentials; a failure keeps the
// current ones (valid until they expire) and is retried.
func (c *Credential) refresh(ctx context.Context) bool {
	v, err := c.src.Fetch(ctx)
	if err == nil && !v.Expiry.IsZero() && !v.Expiry.After(c.now()) {
		err = fmt.Errorf("the credentials fetched expired already at %s", v.Expiry.UTC().Format(time.RFC3339))
	}
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		c.metrics.RefreshFailed()
		cur := c.Value()
		klog.ErrorS(err, "Refreshing Tencent Cloud credentials failed; the current ones are kept until they expire",
			"source", c.src.Describe(), "expires", expiryText(cur.Expiry))
		return false
	}
	c.value.Store(&v)
	c.metrics.Refreshed(v.Expiry)
	klog.V(2).InfoS("Tencent Cloud credentials refreshed", "source", c.src.Describe(), "expires", expiryText(v.Expiry))
	return true
}

// watch re-reads a key on every change signal and swaps it in when it
// changed and reads whole; a read that fails keeps the current key.
func (c *Credential) watch(ctx context.Context, changes <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
		}
		v, err := c.src.Fetch(ctx)
		if err != nil {
			c.metrics.RefreshFailed()
			klog.ErrorS(err, "Re-reading the Tencent Cloud key failed; the current key stays in use", "source", c.src.Describe())
			continue
		}
		if cur := c.Value(); cur == v {
			continue // another file in the directory changed
		}
		c.value.Store(&v)
		c.metrics.Refreshed(time.Time{})
		klog.InfoS("Tencent Cloud key changed on disk; the next calls use the new key", "source", c.src.Describe())
	}
}

// refreshIn is how long until the current credentials are due for a
// refresh: half their remaining lifetime, at least a second.
func (c *Credential) refreshIn() time.Duration {
	return max(c.Value().Expiry.Sub(c.now())/2, time.Second)
}

func (c *Credential) retryDelay(n int) time.Duration {
	d := c.policy.RetryBase << min(n, 16)
	return min(d, c.policy.RetryMax)
}

// Value returns the current credentials.
func (c *Credential) Value() Value { return *c.value.Load() }

// Source returns where the credentials come from.
func (c *Credential) Source() Source { return c.src }

// GetCredential implements common.CredentialIface: the SecretId, SecretKey
// and token, from one value.
func (c *Credential) GetCredential() (string, string, string) {
	v := c.value.Load()
	return v.SecretID, v.SecretKey, v.Token
}

// GetSecretId implements common.CredentialIface.
func (c *Credential) GetSecretId() string { return c.value.Load().SecretID }

// GetSecretKey implements common.CredentialIface.
func (c *Credential) GetSecretKey() string { return c.value.Load().SecretKey }

// GetToken implements common.CredentialIface.
func (c *Credential) GetToken() string { return c.value.Load().Token }

func expiryText(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
