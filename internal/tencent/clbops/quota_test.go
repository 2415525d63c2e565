package clbops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// fakeQuota answers DescribeQuota with set (nil: the error err).
type fakeQuota struct {
	calls int
	set   []*clb.Quota
	err   error
}

func (f *fakeQuota) DescribeQuotaWithContext(context.Context, *clb.DescribeQuotaRequest) (*clb.DescribeQuotaResponse, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	resp := clb.NewDescribeQuotaResponse()
	resp.Response = &clb.DescribeQuotaResponseParams{QuotaSet: f.set, RequestId: common.StringPtr("req-1")}
	return resp, nil
}

func quotaItem(id string, limit int64) *clb.Quota {
	return &clb.Quota{QuotaId: common.StringPtr(id), QuotaLimit: common.Int64Ptr(limit)}
}

func TestQuotasTargetsPerListener(t *testing.T) {
	f := &fakeQuota{set: []*clb.Quota{quotaItem("TOTAL_LISTENER_QUOTA", 50), quotaItem(QuotaTargetBind, 250)}}
	q := NewQuotas(f, time.Hour)
	now := time.Unix(1_700_000_000, 0)
	q.now = func() time.Time { return now }
	ctx := context.Background()

	if got := q.TargetsPerListener(ctx); got != 250 || f.calls != 1 {
		t.Fatalf("first read: %d after %d calls, want 250 after 1", got, f.calls)
	}
	now = now.Add(59 * time.Minute)
	if got := q.TargetsPerListener(ctx); got != 250 || f.calls != 1 {
		t.Fatalf("within the hour: %d after %d calls, want the cached 250", got, f.calls)
	}
	// After the TTL it is read again; a ticket raised it meanwhile.
	now = now.Add(2 * time.Minute)
	f.set = []*clb.Quota{quotaItem(QuotaTargetBind, 300)}
	if got := q.TargetsPerListener(ctx); got != 300 || f.calls != 2 {
		t.Fatalf("after the TTL: %d after %d calls, want 300 after 2", got, f.calls)
	}

	// A failed read falls back to the documented default of 100, and is
	// retried a minute later, not on every call.
	now = now.Add(2 * time.Hour)
	f.err = tcerr.NewTencentCloudSDKError("InternalError", "boom", "req-2")
	for range 3 {
		if got := q.TargetsPerListener(ctx); got != DefaultTargetQuota {
			t.Fatalf("failed read: %d, want the default %d", got, DefaultTargetQuota)
		}
	}
	if f.calls != 3 {
		t.Fatalf("%d calls, want one failed read for three lookups", f.calls)
	}
	now = now.Add(61 * time.Second)
	f.err = nil
	if got := q.TargetsPerListener(ctx); got != 300 || f.calls != 4 {
		t.Fatalf("after the retry delay: %d after %d calls, want 300 after 4", got, f.calls)
	}
}

func TestQuotasMalformedAnswer(t *testing.T) {
	for name, set := range map[string][]*clb.Quota{
		"no such quota": {quotaItem("TOTAL_LISTENER_QUOTA", 50)},
		"zero limit":    {quotaItem(QuotaTargetBind, 0)},
		"null limit":    {{QuotaId: common.StringPtr(QuotaTargetBind)}},
		"empty":         nil,
	} {
		q := NewQuotas(&fakeQuota{set: set}, 0)
		if got := q.TargetsPerListener(context.Background()); got != DefaultTargetQuota {
			t.Errorf("%s: %d, want the default %d", name, got, DefaultTargetQuota)
		}
		if _, err := q.read(context.Background(), QuotaTargetBind); !errors.Is(err, errNoQuota) {
			t.Errorf("%s: read error %v", name, err)
		}
	}
}

// Against cloudsim over the wire: DescribeQuota reports the quota cloudsim
// enforces.
func TestQuotasCloudsim(t *testing.T) {
	for _, tt := range []struct{ configured, want int }{{0, 100}, {150, 150}} {
		sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency, DisableDataPlane: true, Tencent: cloudsim.TencentOptions{Credentials: map[string]string{simID: simKey}, CLBTargetQuota: tt.configured}})
		t.Cleanup(func() { _ = sim.Close() })
		client := simClient(t, sim)
		q := NewQuotas(client, 0)
		if got := q.TargetsPerListener(context.Background()); got != tt.want {
			t.Errorf("cloudsim with CLBTargetQuota %d: %d, want %d", tt.configured, got, tt.want)
		}
		// Both quotas are cached apart: each is read once.
		if got := q.ListenersPerCLB(context.Background()); got != DefaultListenerQuota {
			t.Errorf("cloudsim: %s = %d, want %d", QuotaListener, got, DefaultListenerQuota)
		}
	}
}

// simClient starts sim and returns a CLB client for it.
func simClient(t *testing.T, sim *cloudsim.Sim) *clb.Client {
	t.Helper()
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	client, err := clb.NewClient(common.NewCredential(simID, simKey), "ap-guangzhou", cpf)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
