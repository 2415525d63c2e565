package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a child process (the CCM, usually) whose combined output is kept
// in memory for assertions and copied to a log file for humans.
type Process struct {
	// SecurePort is the CCM's --secure-port, when the process is a CCM.
	SecurePort int

	cmd  *exec.Cmd
	done chan struct{}
	err  error // exit error, valid after done is closed

	mu  sync.Mutex
	out bytes.Buffer
}

// StartProcess starts bin with args and extra environment variables. Output
// goes to logPath (if not empty) and to an in-memory buffer.
func StartProcess(bin string, args, env []string, logPath string) (*Process, error) {
	p := &Process{done: make(chan struct{})}
	sinks := []io.Writer{lockedWriter{p}}
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, fmt.Errorf("start %s: log file: %w", bin, err)
		}
		sinks = append(sinks, f)
	}
	w := io.MultiWriter(sinks...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = w, w
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		if len(sinks) > 1 {
			_ = sinks[1].(*os.File).Close()
		}
		close(p.done)
	}()
	return p, nil
}

type lockedWriter struct{ p *Process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// Output returns everything the process printed so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and its exit code.
func (p *Process) Exited() (bool, int) {
	select {
	case <-p.done:
		return true, p.cmd.ProcessState.ExitCode()
	default:
		return false, 0
	}
}

// Wait waits for the process to end (or ctx) and returns its exit code.
func (p *Process) Wait(ctx context.Context) (int, error) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// WaitForOutput waits until the output contains substr.
func (p *Process) WaitForOutput(ctx context.Context, substr string) error {
	err := waitFor(ctx, 100*time.Millisecond, func(context.Context) (bool, error) {
		if strings.Contains(p.Output(), substr) {
			return true, nil
		}
		if exited, code := p.Exited(); exited {
			return false, fmt.Errorf("process exited with code %d before printing %q", code, substr)
		}
		return false, nil
	})
	return err
}

// Stop sends SIGTERM and waits; after a grace period it sends SIGKILL.
func (p *Process) Stop() {
	if exited, _ := p.Exited(); exited {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.Kill()
	}
}

// Kill sends SIGKILL to the process group and waits for the process to end.
func (p *Process) Kill() {
	if exited, _ := p.Exited(); exited {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}
