//go:build e2e

package e2e

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The container image is distroless/static: the binary must be static and
// run from an otherwise empty filesystem with only CA certificates. No
// Docker engine runs here, so this test builds that filesystem by hand and
// chroots into it (CI runs as root).
func TestBinaryIsStatic(t *testing.T) {
	f, err := elf.Open(suite.ccmBinary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("binary has an ELF interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("binary needs shared libraries %v", libs)
	}
}

func TestBinaryRunsFromEmptyFilesystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test chroots and must run as root (CI does)")
	}
	root := t.TempDir()
	copyFile(t, suite.ccmBinary, filepath.Join(root, "cloud-controller-manager"), 0o755)
	if ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		writeFile(t, filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"), ca, 0o644)
	}
	kc, err := os.ReadFile(suite.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "etc/ccm/kubeconfig"), kc, 0o600)
	cfg, err := os.ReadFile(writeCloudConfig(suite.dir, "cloud-chroot.yaml", secretID, secretKey))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "etc/ccm/cloud.yaml"), cfg, 0o600)
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/cloud-controller-manager",
		"--cloud-provider=tencentcloud", "--cloud-config=/etc/ccm/cloud.yaml",
		"--kubeconfig=/etc/ccm/kubeconfig", "--authentication-kubeconfig=/etc/ccm/kubeconfig",
		"--authorization-kubeconfig=/etc/ccm/kubeconfig", "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=0", "--controllers=cloud-node")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	cmd.Dir = "/"
	cmd.Env = []string{} // nothing from the host
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Running means: config parsed, apiserver reached, controller started.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(out.String(), `Started "cloud-node-controller"`) {
		time.Sleep(200 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !strings.Contains(out.String(), `Started "cloud-node-controller"`) {
		t.Fatalf("CCM did not start in an empty filesystem:\n%s", tail(out.String(), 30))
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, data, mode)
}

func writeFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer collects a child's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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
