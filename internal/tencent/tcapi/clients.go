package tcapi

import (
	"fmt"
	"net/http"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
)

const (
	// requestTimeout bounds one API call. The SDK's default is 60 s, far
	// longer than a controller should wait on a single read.
	requestTimeout = 15 * time.Second
	// requestClient is sent in X-TC-RequestClient so that calls from the CCM
	// can be told apart in audit logs and in cloudsim's call counts.
	requestClient = "ccmkit-cloud-controller-manager"
)

// ClientOptions are what every client is built from: narrow on purpose,
// so that the SDK wiring does not depend on the provider's config.
type ClientOptions struct {
	Region string
	// Credential signs every call: one object shared by every client, so
	// that a refreshed credential reaches them all at once. When nil, a
	// static credential of SecretID and SecretKey.
	Credential          common.CredentialIface
	SecretID, SecretKey string
	// Endpoint and Scheme (HTTP or HTTPS) replace
	// <service>.tencentcloudapi.com for every service; empty: the SDK's.
	Endpoint, Scheme string
	// Transport carries every call (NewTransport: pacing, backoff,
	// metrics); nil: the SDK's default.
	Transport http.RoundTripper
}

// Clients builds every Tencent SDK client (cvm, tke, vpc, clb) from one
// place, so that they share the credential, the profile and the HTTP
// transport. The transport is where cross-cutting behavior lives:
// client-side pacing per action, backoff on throttling, and API call
// metrics.
type Clients struct {
	cred      common.CredentialIface
	region    string
	profile   *profile.ClientProfile
	transport http.RoundTripper
}

// NewClients prepares the clients; it makes no API call.
func NewClients(o ClientOptions) *Clients {
	cred := o.Credential
	if cred == nil {
		cred = common.NewCredential(o.SecretID, o.SecretKey)
	}
	return &Clients{
		cred:      cred,
		region:    o.Region,
		profile:   newClientProfile(o.Endpoint, o.Scheme),
		transport: o.Transport,
	}
}

// configure applies what every client shares. Call it on the embedded
// common.Client of each product client right after creating it.
func (s *Clients) configure(c *common.Client) {
	c.WithRequestClient(requestClient)
	if s.transport != nil {
		c.WithHttpTransport(s.transport)
	}
}

// CVM returns a CVM client.
func (s *Clients) CVM() (*cvm.Client, error) {
	client, err := cvm.NewClient(s.cred, s.region, s.profile)
	if err != nil {
		// The SDK's message is about the profile, never the credential.
		return nil, fmt.Errorf("create CVM client for region %s: %w", s.region, err)
	}
	s.configure(&client.Client)
	return client, nil
}

// TKE returns a TKE client (cluster route tables).
func (s *Clients) TKE() (*tke.Client, error) {
	client, err := tke.NewClient(s.cred, s.region, s.profile)
	if err != nil {
		return nil, fmt.Errorf("create TKE client for region %s: %w", s.region, err)
	}
	s.configure(&client.Client)
	return client, nil
}

// VPC returns a VPC client (VPC route tables).
func (s *Clients) VPC() (*vpc.Client, error) {
	client, err := vpc.NewClient(s.cred, s.region, s.profile)
	if err != nil {
		return nil, fmt.Errorf("create VPC client for region %s: %w", s.region, err)
	}
	s.configure(&client.Client)
	return client, nil
}

// CLB returns a CLB client (load balancers).
func (s *Clients) CLB() (*clb.Client, error) {
	client, err := clb.NewClient(s.cred, s.region, s.profile)
	if err != nil {
		return nil, fmt.Errorf("create CLB client for region %s: %w", s.region, err)
	}
	s.configure(&client.Client)
	return client, nil
}

// newClientProfile returns the SDK profile shared by every client we build.
func newClientProfile(endpointHost, scheme string) *profile.ClientProfile {
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.ReqTimeout = int(requestTimeout / time.Second)
	if endpointHost != "" {
		cpf.HttpProfile.Endpoint = endpointHost
		cpf.HttpProfile.Scheme = scheme
	}
	// English error messages: they end up in our errors and logs.
	cpf.Language = "en-US"
	// No SDK retries: a retry hidden in the SDK would defeat our own pacing
	// and make a throttled lookup look slow instead of failed.
	cpf.NetworkFailureMaxRetries = 0
	cpf.RateLimitExceededMaxRetries = 0
	// The region breaker may switch to a backup endpoint in another region,
	// which would bypass api_endpoint (and thus cloudsim).
	cpf.DisableRegionBreaker = true
	return cpf
}
