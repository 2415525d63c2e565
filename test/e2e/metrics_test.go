//go:build e2e

package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The CCM's /metrics, scraped as a metrics reader would, counts every cloud
// API call: its figures match cloudsim's own count for that process.
func TestCloudAPIMetricsMatchCloudsim(t *testing.T) {
	p, err := startCCM("ccm-metrics", writeCloudConfig(suite.dir, "cloud-metrics.yaml", metricsSecretID, secretKey),
		"--controllers=cloud-node")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	token := metricsReaderToken(t)

	for i := 0; i < 3; i++ {
		in := newInstance(t, "metrics-"+strconv.Itoa(i))
		// Calls of this CCM so far: the burst below waits for calls made
		// under the fault, however many the first nodes took.
		before := actionCallsBy(metricsSecretID, "DescribeInstances")
		if i == 2 {
			// A throttling burst, so that throttles and retries are counted.
			suite.sim.SetFault(cloudsim.Fault{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "RequestLimitExceeded"})
		}
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
		if i == 2 {
			deadline := time.Now().Add(10 * time.Second)
			for actionCallsBy(metricsSecretID, "DescribeInstances") < before+2 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			suite.sim.ClearFaults()
		}
		waitNode(t, in.PrivateIP, 30*time.Second, "initialized", initialized)
	}
	want := actionCallsBy(metricsSecretID, "DescribeInstances")
	if want == 0 {
		t.Fatal("the metrics CCM made no DescribeInstances call; it did not initialize the nodes")
	}

	var got float64
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for {
		var code int
		code, body = scrape(t, p.SecurePort, "/metrics", token)
		if code != 200 {
			t.Fatalf("GET /metrics as a metrics reader: HTTP %d", code)
		}
		got = sumMetric(body, "ccmkit_cloud_api_requests_total", map[string]string{"provider": "tencentcloud", "action": "DescribeInstances"})
		if int(got) == actionCallsBy(metricsSecretID, "DescribeInstances") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if want = actionCallsBy(metricsSecretID, "DescribeInstances"); int(got) != want {
		t.Errorf("ccmkit_cloud_api_requests_total{action=DescribeInstances} = %v, cloudsim counted %d", got, want)
	}
	if !strings.Contains(body, "ccmkit_cloud_api_request_duration_seconds_bucket") {
		t.Error("/metrics lacks the latency histogram ccmkit_cloud_api_request_duration_seconds")
	}
	for _, name := range []string{"ccmkit_cloud_api_throttled_total", "ccmkit_cloud_api_retries_total"} {
		if v := sumMetric(body, name, map[string]string{"action": "DescribeInstances"}); v < 1 {
			t.Errorf("%s{action=DescribeInstances} = %v after a throttling burst, want >= 1", name, v)
		}
	}
	// The result label classifies the codes: the throttles are the
	// throttled_total ones, and the rest of this CCM's calls went through.
	calls := map[string]string{"provider": "tencentcloud", "action": "DescribeInstances"}
	throttled := sumMetric(body, "ccmkit_cloud_api_requests_total", withLabel(calls, "result", "throttled"))
	if want := sumMetric(body, "ccmkit_cloud_api_throttled_total", calls); throttled < 1 || throttled != want {
		t.Errorf("ccmkit_cloud_api_requests_total{result=throttled} = %v, throttled_total = %v; want them equal, at least 1", throttled, want)
	}
	if ok := sumMetric(body, "ccmkit_cloud_api_requests_total", withLabel(calls, "result", "ok")); ok+throttled != got {
		t.Errorf("ccmkit_cloud_api_requests_total{action=DescribeInstances}: %v ok + %v throttled, of %v", ok, throttled, got)
	}
	// The build that runs: the same version and SDK as --version prints.
	out, err := exec.Command(suite.ccmBinary, "--version").Output()
	if err != nil {
		t.Fatalf("cloud-controller-manager --version: %v", err)
	}
	version, _, _ := strings.Cut(strings.TrimPrefix(string(out), "version "), ",")
	sdk := moduleVersion(t, "github.com/oracle/oci-go-sdk/v65")
	if v := sumMetric(body, "ccmkit_build_info", map[string]string{"version": version, "oci_sdk": sdk}); v != 1 {
		t.Errorf("ccmkit_build_info{version=%q,oci_sdk=%s} = %v, want 1 (--version said %q)", version, sdk, v, out)
	}
	mustNotContainSecret(t, "/metrics", body)
}

// moduleVersion is the version go.mod requires of a module (the tests run
// in test/e2e; the CCM binary is built from that go.mod).
func moduleVersion(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", path)
	return ""
}

// sumMetric adds up the samples of a Prometheus text-format metric whose
// labels include want.
func sumMetric(body, name string, want map[string]string) float64 {
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		labels, value := "", line[strings.LastIndexByte(line, ' ')+1:]
		if i, j := strings.IndexByte(line, '{'), strings.LastIndexByte(line, '}'); i >= 0 && j > i {
			labels = line[i+1 : j]
		}
		match := true
		for k, v := range want {
			match = match && strings.Contains(labels, k+`="`+v+`"`)
		}
		if f, err := strconv.ParseFloat(value, 64); match && err == nil {
			sum += f
		}
	}
	return sum
}

// withLabel returns labels with one more.
func withLabel(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for lk, lv := range labels {
		out[lk] = lv
	}
	return out
}
