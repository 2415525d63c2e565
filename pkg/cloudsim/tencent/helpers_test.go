package tencent

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

const (
	testID     = "AKIDcloudsimtest"
	testKey    = "cloudsim-test-secret-key"
	testRegion = "ap-guangzhou"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type env struct {
	core *core.Core
	d    *Dialect
	url  string // http://127.0.0.1:PORT
	host string // 127.0.0.1:PORT
}

func newEnv(t testing.TB, cfg core.Config) *env {
	t.Helper()
	if cfg.Latency == nil {
		cfg.Latency = core.ZeroLatency // unit tests: answers at once
	}
	c := core.New(cfg)
	d := New(c, Options{Credentials: map[string]string{testID: testKey}})
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return &env{core: c, d: d, url: srv.URL, host: strings.TrimPrefix(srv.URL, "http://")}
}

func clientProfile(e *env) *profile.ClientProfile {
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = e.host
	cpf.HttpProfile.Scheme = "HTTP"
	cpf.HttpProfile.ReqTimeout = 10
	return cpf
}

// client is the real SDK client pointed at the sim.
func (e *env) client(t *testing.T, id, key string) *cvm.Client {
	t.Helper()
	c, err := cvm.NewClient(common.NewCredential(id, key), testRegion, clientProfile(e))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) mustAdd(t *testing.T, in ...core.Instance) []core.Instance {
	t.Helper()
	out, err := e.core.AddInstances(in...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sdkCode is the Tencent error code of an SDK error ("" for nil).
func sdkCode(err error) string {
	if err == nil {
		return ""
	}
	var e *tcerr.TencentCloudSDKError
	if errors.As(err, &e) {
		return e.Code
	}
	return "non-SDK error: " + err.Error()
}

// rawReq describes a hand-crafted API request.
type rawReq struct {
	method, action, version, region, body string
	contentType                           string
	ts                                    time.Time
	id, key, service                      string
	scopeDate                             string // default: ts's UTC date
	token                                 string
	authorization                         string // overrides the computed header if set
	tamperBody                            string // body actually sent, if set
	hostHeader                            string // Host header, if set
}

func (e *env) do(t *testing.T, r rawReq) (int, string) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.action == "" {
		r.action = "DescribeInstances"
	}
	if r.version == "" {
		r.version = CVMVersion
	}
	if r.region == "" {
		r.region = testRegion
	}
	if r.body == "" {
		r.body = "{}"
	}
	if r.contentType == "" {
		r.contentType = "application/json"
	}
	if r.ts.IsZero() {
		r.ts = time.Now()
	}
	if r.id == "" {
		r.id, r.key = testID, testKey
	}
	if r.service == "" {
		r.service = "cvm"
	}
	if r.scopeDate == "" {
		r.scopeDate = r.ts.UTC().Format("2006-01-02")
	}
	host := e.host
	if r.hostHeader != "" {
		host = r.hostHeader
	}
	ts := strconv.FormatInt(r.ts.Unix(), 10)
	canonical := fmt.Sprintf("%s\n/\n\ncontent-type:%s\nhost:%s\n\ncontent-type;host\n%s",
		r.method, r.contentType, host, sha256Hex([]byte(r.body)))
	sig := Signature(r.key, r.scopeDate, r.service, ts, canonical)
	auth := fmt.Sprintf("TC3-HMAC-SHA256 Credential=%s/%s/%s/tc3_request, SignedHeaders=content-type;host, Signature=%s",
		r.id, r.scopeDate, r.service, sig)
	if r.authorization != "" {
		auth = r.authorization
	}
	sent := r.body
	if r.tamperBody != "" {
		sent = r.tamperBody
	}
	req, err := http.NewRequest(r.method, e.url+"/", strings.NewReader(sent))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Content-Type", r.contentType)
	req.Header.Set("X-TC-Action", r.action)
	req.Header.Set("X-TC-Version", r.version)
	req.Header.Set("X-TC-Timestamp", ts)
	if r.region != "-" {
		req.Header.Set("X-TC-Region", r.region)
	}
	if r.token != "" {
		req.Header.Set("X-TC-Token", r.token)
	}
	if auth != "-" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ins-%08d", i)
	}
	return out
}
