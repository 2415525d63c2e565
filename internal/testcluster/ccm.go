package testcluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// CCM describes a cloud-controller-manager process to start.
type CCM struct {
	Binary      string   // path to the built cloud-controller-manager
	Provider    string   // --cloud-provider
	CloudConfig string   // --cloud-config file
	Kubeconfig  string   // the ServiceAccount kubeconfig
	Dir         string   // working directory for certs and the log file
	Name        string   // names the log file; defaults to "ccm"
	ExtraArgs   []string // appended last, so they override the defaults
	Env         []string
}

// Args returns the command line: upstream flags with values that suit a
// single-machine test cluster.
func (c CCM) Args(securePort int) []string {
	args := []string{
		"--cloud-provider=" + c.Provider,
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig,
		"--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
		"--cert-dir=" + filepath.Join(c.Dir, c.name()+"-certs"),
		"--leader-elect=false",
		"--node-monitor-period=1s",
		"--v=2",
	}
	if c.CloudConfig != "" {
		args = append(args, "--cloud-config="+c.CloudConfig)
	}
	return append(args, c.ExtraArgs...)
}

func (c CCM) name() string {
	if c.Name == "" {
		return "ccm"
	}
	return c.Name
}

// Start runs the CCM; its output goes to <Dir>/<Name>.log and to memory.
func (c CCM) Start() (*Process, int, error) {
	port, err := FreePort()
	if err != nil {
		return nil, 0, err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, 0, err
	}
	p, err := StartProcess(c.Binary, c.Args(port), c.Env, filepath.Join(c.Dir, c.name()+".log"))
	if p != nil {
		p.SecurePort = port
	}
	return p, port, err
}

// FreePort asks the kernel for an unused loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
