package tencentcloud

import (
	"fmt"
	"net/http"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
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
// transport is where cross-cutting behaviour lives: client-side pacing per
// action, backoff on throttling, and API call metrics.
type sdk struct {
	cred      *common.Credential
	region    string
	profile   *profile.ClientProfile
	transport http.RoundTripper // nil: the SDK's default
}

func newSDK(cfg *Config) (*sdk, error) {
	host, scheme, err := cfg.endpoint()
	if err != nil {
		return nil, fmt.Errorf("api_endpoint %q: %w", cfg.APIEndpoint, err)
	}
	return &sdk{
		cred:    common.NewCredential(string(cfg.SecretID), string(cfg.SecretKey)),
		region:  cfg.Region,
		profile: newClientProfile(host, scheme),
	}, nil
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
