package tencentcloud

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

	"github.com/ccmkit/ccm/internal/tcapi"
	"github.com/ccmkit/ccm/internal/tencent/config"
)

const (
	// requestTimeout bounds one API call. The SDK's default is 60 s, far
	// longer than a controller should wait on a single read.
	requestTimeout = 15 * time.Second
	// requestClient is sent in X-TC-RequestClient so that calls from the CCM
	// can be told apart in audit logs and in cloudsim's call counts.
	requestClient = "ccmkit-cloud-controller-manager"
)

// sdk builds every Tencent SDK client (cvm, tke, vpc, clb) from one place, so
// that they share the credential, the profile and the HTTP transport. The
// transport is where cross-cutting behavior lives: client-side pacing per
// action, backoff on throttling, and API call metrics.
type sdk struct {
	cred      *common.Credential
	region    string
	profile   *profile.ClientProfile
	transport http.RoundTripper // internal/tcapi; nil: the SDK's default
}

func newSDK(cfg *config.Config) (*sdk, error) {
	host, scheme, err := cfg.Endpoint()
	if err != nil {
		return nil, fmt.Errorf("api_endpoint %q: %w", cfg.APIEndpoint, err)
	}
	return &sdk{
		cred:    common.NewCredential(string(cfg.SecretID), string(cfg.SecretKey)),
		region:  cfg.Region,
		profile: newClientProfile(host, scheme),
		// One transport for every client: pacing and cool-downs must see
		// every call the process makes with this account.
		transport: tcapi.NewTransport(transportOptions(cfg.APIRateLimits)),
	}, nil
}

// retryPolicy is the transport's retry policy: zero values take tcapi's
// defaults (4 attempts within 5 s). Tests shorten it.
var retryPolicy tcapi.Options

func transportOptions(limits tcapi.Limits) tcapi.Options {
	o := retryPolicy
	o.Provider, o.Limits = ProviderName, limits
	return o
}

// configure applies what every client shares. Call it on the embedded
// common.Client of each product client right after creating it.
func (s *sdk) configure(c *common.Client) {
	c.WithRequestClient(requestClient)
	if s.transport != nil {
		c.WithHttpTransport(s.transport)
	}
}

// cvm returns a CVM client.
func (s *sdk) cvm() (*cvm.Client, error) {
	client, err := cvm.NewClient(s.cred, s.region, s.profile)
	if err != nil {
		// The SDK's message is about the profile, never the credential.
		return nil, fmt.Errorf("create CVM client for region %s: %w", s.region, err)
	}
	s.configure(&client.Client)
	return client, nil
}

// tke returns a TKE client (cluster route tables).
func (s *sdk) tke() (*tke.Client, error) {
	client, err := tke.NewClient(s.cred, s.region, s.profile)
	if err != nil {
		return nil, fmt.Errorf("create TKE client for region %s: %w", s.region, err)
	}
	s.configure(&client.Client)
	return client, nil
}

// vpc returns a VPC client (VPC route tables).
func (s *sdk) vpc() (*vpc.Client, error) {
	client, err := vpc.NewClient(s.cred, s.region, s.profile)
	if err != nil {
		return nil, fmt.Errorf("create VPC client for region %s: %w", s.region, err)
	}
	s.configure(&client.Client)
	return client, nil
}

// clb returns a CLB client (load balancers).
func (s *sdk) clb() (*clb.Client, error) {
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
