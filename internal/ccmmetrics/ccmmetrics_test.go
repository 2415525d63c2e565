package ccmmetrics

import (
	"testing"
	"time"
)

// A set's metrics are named ccmkit_<subsystem>_<name> and served once
// registered; registering twice is harmless.
func TestSetNamesAndRegisters(t *testing.T) {
	s := NewSet("settest")
	c := s.CounterVec("things_total", "Things.", "kind")
	g := s.Gauge("level", "Level.")
	h := s.HistogramVec("size", "Size.", []float64{1, 10}, "kind")
	s.Register()
	s.Register()
	c.WithLabelValues("a").Add(2)
	c.WithLabelValues("b").Inc()
	g.Set(7)
	h.WithLabelValues("a").Observe(3)
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"ccmkit_settest_things_total", nil, 3},
		{"ccmkit_settest_things_total", map[string]string{"kind": "a"}, 2},
		{"ccmkit_settest_things_total", map[string]string{"kind": "c"}, 0},
		{"ccmkit_settest_level", nil, 7},
		{"ccmkit_settest_size", map[string]string{"kind": "a"}, 1},
		{"ccmkit_settest_absent", nil, 0},
	}
	for _, tt := range tests {
		if got, err := Sum(tt.name, tt.labels); err != nil || got != tt.want {
			t.Errorf("Sum(%s, %v) = %v, %v; want %v", tt.name, tt.labels, got, err, tt.want)
		}
	}
}

// Attempt labels the request with the classifier's result, counts a
// throttle in throttled_total too, and never lets a result outside the
// closed set through.
func TestCloudAPIAttempt(t *testing.T) {
	classify := func(code string) Result {
		switch code {
		case CodeOK:
			return ResultOK
		case "Slow":
			return ResultThrottled
		}
		return Result("surprise")
	}
	c := NewCloudAPI("attempttest", classify)
	c.Attempt("svc", "Act", CodeOK, time.Millisecond)
	c.Attempt("svc", "Act", "Slow", time.Millisecond)
	c.Attempt("svc", "Act", "Odd", time.Millisecond)
	c.Retry("svc", "Act", "throttled")
	c.ClientWait("svc", "Act", time.Millisecond)
	base := map[string]string{"provider": "attempttest", "service": "svc", "action": "Act"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for bk, bv := range base {
			m[bk] = bv
		}
		return m
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"ccmkit_cloud_api_requests_total", base, 3},
		{"ccmkit_cloud_api_requests_total", with("result", "ok"), 1},
		{"ccmkit_cloud_api_requests_total", with("result", "throttled"), 1},
		{"ccmkit_cloud_api_requests_total", with("result", "error"), 1},
		{"ccmkit_cloud_api_requests_total", with("result", "surprise"), 0},
		{"ccmkit_cloud_api_throttled_total", base, 1},
		{"ccmkit_cloud_api_request_duration_seconds", base, 3},
		{"ccmkit_cloud_api_retries_total", with("reason", "throttled"), 1},
		{"ccmkit_cloud_api_client_wait_seconds", base, 1},
	}
	for _, tt := range tests {
		if got, err := Sum(tt.name, tt.labels); err != nil || got != tt.want {
			t.Errorf("Sum(%s, %v) = %v, %v; want %v", tt.name, tt.labels, got, err, tt.want)
		}
	}
}

// Credentials count refreshes by result, publish the expiry as a
// timestamp, and serve the seconds until it computed at scrape time; a
// source that never expires has no seconds-until series.
func TestCredentials(t *testing.T) {
	c := NewCredentials("credtest", SourceCVMRole)
	exp := time.Now().Add(time.Hour)
	c.Refreshed(exp)
	c.RefreshFailed()
	static := NewCredentials("credtest", SourceStaticKey)
	static.Refreshed(time.Time{})
	role := map[string]string{"provider": "credtest", "source": SourceCVMRole}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"ccmkit_credentials_refreshes_total", map[string]string{"provider": "credtest", "source": SourceCVMRole, "result": "ok"}, 1},
		{"ccmkit_credentials_refreshes_total", map[string]string{"provider": "credtest", "source": SourceCVMRole, "result": "error"}, 1},
		{"ccmkit_credentials_refreshes_total", map[string]string{"provider": "credtest", "source": SourceStaticKey, "result": "ok"}, 1},
		{"ccmkit_credentials_expiry_timestamp_seconds", role, float64(exp.Unix())},
		{"ccmkit_credentials_expiry_timestamp_seconds", map[string]string{"provider": "credtest", "source": SourceStaticKey}, 0},
		{"ccmkit_credentials_seconds_until_expiry", map[string]string{"provider": "credtest", "source": SourceStaticKey}, 0},
	}
	for _, tt := range tests {
		if got, err := Sum(tt.name, tt.labels); err != nil || got != tt.want {
			t.Errorf("Sum(%s, %v) = %v, %v; want %v", tt.name, tt.labels, got, err, tt.want)
		}
	}
	until, err := Sum("ccmkit_credentials_seconds_until_expiry", role)
	if err != nil || until < 3500 || until > 3600 {
		t.Errorf("seconds until expiry = %v, %v; want about 3600", until, err)
	}
}
