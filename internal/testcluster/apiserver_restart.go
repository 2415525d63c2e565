package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillAPIServer SIGKILLs the kube-apiserver, as a crashed control-plane
// host does; etcd keeps running with the data. It returns a function that
// starts the apiserver again with the same command line (port,
// certificates, etcd) and waits until it serves.
func (c *Cluster) KillAPIServer() (restart func(context.Context) error, err error) {
	pid, argv, err := c.apiServerProcess()
	if err != nil {
		return nil, fmt.Errorf("kill the apiserver: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("kill the apiserver (pid %d): %w", pid, err)
	}
	gone := func(context.Context) (bool, error) { return !running(pid), nil }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := waitFor(ctx, 20*time.Millisecond, gone); err != nil {
		return nil, fmt.Errorf("kill the apiserver (pid %d): still running: %w", pid, err)
	}
	return func(ctx context.Context) error { return c.startAPIServer(ctx, argv) }, nil
}

// startAPIServer runs argv as the apiserver until Stop.
func (c *Cluster) startAPIServer(ctx context.Context, argv []string) error {
	log, err := os.OpenFile(filepath.Join(c.Dir, "kube-apiserver-restarted.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("restart the apiserver: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("restart the apiserver: %w", err)
	}
	c.restarted = append(c.restarted, cmd)
	go func() { _ = cmd.Wait(); _ = log.Close() }()
	ready := func(ctx context.Context) (bool, error) {
		err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		return err == nil, nil
	}
	if err := waitFor(ctx, 100*time.Millisecond, ready); err != nil {
		return fmt.Errorf("restart the apiserver: not ready: %w", err)
	}
	return nil
}

// apiServerProcess finds this cluster's kube-apiserver among the running
// processes: the tools' binary serving on our port.
func (c *Cluster) apiServerProcess() (int, []string, error) {
	port := c.env.ControlPlane.APIServer.SecureServing.Port
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !running(pid) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		if filepath.Base(argv[0]) == "kube-apiserver" && bytes.Contains(raw, []byte("--secure-port="+port+"\x00")) {
			return pid, argv, nil
		}
	}
	return 0, nil, errors.New("no kube-apiserver process serves port " + port)
}

// running reports whether pid is alive (not gone, not a zombie).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}
