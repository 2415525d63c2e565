package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunBadConfig(t *testing.T) {
	tests := []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--credentials", "nokey"}, "", "--credentials"},
		{nil, "broken", "CLOUDSIM_CREDENTIALS"},
		{[]string{"--rate-limit", "X"}, "", "Action=QPS"},
		{[]string{"--seed", "/nonexistent/seed.yaml"}, "", "seed"},
		{[]string{"--terminated-linger", "0s"}, "", "terminated-linger"},
		{[]string{"extra"}, "", "unexpected arguments"},
		{[]string{"--vip-range", "127.1.0.9-127.1.0.1"}, "", "--vip-range"},
		{[]string{"--clb-quota-open", "0"}, "", "clb-quota"},
		{[]string{"--clb-target-quota", "0"}, "", "--clb-target-quota"},
		{[]string{"--oci-nlb-backends", "0"}, "", "--oci-nlb-backends"},
		{[]string{"--latency", "fast"}, "", "--latency: latency \"fast\""},
		{[]string{"--latency", "read=50ms/10ms"}, "", "p99 \"10ms\" is not a duration at least the median"},
	}
	dir := t.TempDir()
	badSG := filepath.Join(dir, "sg.yaml")
	if err := os.WriteFile(badSG, []byte("securityGroups:\n- id: sg-cmd00001\n  ingress: [{Protocol: TCP, Port: '80', CidrBlock: 0.0.0.0/0, Action: ALLOW}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unknownSG := filepath.Join(dir, "seed.yaml")
	if err := os.WriteFile(unknownSG, []byte("instances:\n- securityGroupIds: [sg-nothere1]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests = append(tests, []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--security-groups", badSG, "--listen", "127.0.0.1:0"}, "", "ACCEPT or DROP"},
		{[]string{"--seed", unknownSG, "--listen", "127.0.0.1:0"}, "", "sg-nothere1` does not exist"},
	}...)
	for _, tt := range tests {
		var stderr syncBuffer
		err := run(context.Background(), tt.args, func(string) string { return tt.env }, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestRunServes(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "seed.yaml")
	if err := os.WriteFile(seed, []byte("instances:\n- id: ins-cmd00001\n  privateIP: 10.3.0.1\n  securityGroupIds: [sg-cmd00001]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sgs := filepath.Join(t.TempDir(), "sg.yaml")
	if err := os.WriteFile(sgs, []byte("- id: sg-cmd00001\n  name: nodes\n  ingress: [{Protocol: TCP, Port: 30000-32767, CidrBlock: 0.0.0.0/0, Action: ACCEPT}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "very-secret-key-value"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--security-groups", sgs, "--seed", seed, "--rate-limit", "DescribeInstances=100", "-v", "2"},
			func(k string) string {
				if k == "CLOUDSIM_CREDENTIALS" {
					return "AKIDcmd:" + key
				}
				return ""
			}, outW, &stderr)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v; stderr %s", err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[3], "http://127.0.0.1:") {
		t.Fatalf("start line %q", line)
	}
	url := fields[3]

	admin := &cloudsim.AdminClient{BaseURL: url}
	if err := admin.Healthz(ctx); err != nil {
		t.Fatal(err)
	}
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	cl, err := cvm.NewClient(common.NewCredential("AKIDcmd", key), "ap-guangzhou", cpf)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cl.DescribeInstances(cvm.NewDescribeInstancesRequest())
	if err != nil || *resp.Response.TotalCount != 1 || *resp.Response.InstanceSet[0].InstanceId != "ins-cmd00001" ||
		len(resp.Response.InstanceSet[0].SecurityGroupIds) != 1 || *resp.Response.InstanceSet[0].SecurityGroupIds[0] != "sg-cmd00001" {
		t.Fatalf("%v %v", resp, err)
	}
	groups, err := admin.SecurityGroups(ctx)
	if err != nil || len(groups) != 1 || groups[0].Name != "nodes" || len(groups[0].Ingress) != 1 {
		t.Fatalf("seeded security groups: %+v %v", groups, err)
	}
	bad, _ := cvm.NewClient(common.NewCredential("AKIDcmd", "wrong"), "ap-guangzhou", cpf)
	_, _ = bad.DescribeInstances(cvm.NewDescribeInstancesRequest())

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown")
	}
	logs := stderr.String()
	for _, want := range []string{"seeded 1 instances", "accepting SecretIds: AKIDcmd", "cvm/DescribeInstances", "code=OK", "code=AuthFailure.SignatureFailure", "shutting down"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, key) {
		t.Errorf("logs leak the secret key:\n%s", logs)
	}
}
