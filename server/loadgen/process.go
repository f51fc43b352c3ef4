package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a graphctl serve process started by Start.
type Process struct {
	// URL is the server's base URL.
	URL string
	// PID is the process id.
	PID int

	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	stderr bytes.Buffer
}

// Start runs exe with args (a serve command that listens on a free port,
// --addr 127.0.0.1:0) and env, and waits until it prints the URL it serves
// on ("… on http://HOST:PORT").
func Start(ctx context.Context, exe string, args, env []string) (*Process, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = lockedWriter{p}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	p.PID = cmd.Process.Pid
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), " on http://"); ok && !sent {
				urls <- "http://" + strings.TrimSpace(url)
				sent = true
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	select {
	case p.URL = <-urls:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s %s exited before serving: %s", exe, strings.Join(args, " "), p.Stderr())
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
}

type lockedWriter struct{ p *Process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.stderr.Len() < 1<<20 {
		w.p.stderr.Write(b)
	}
	return len(b), nil
}

// Stderr returns what the process wrote to its standard error (its first
// MiB).
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.TrimSpace(p.stderr.String())
}

// Stop asks the process to shut down (SIGTERM), kills it after 30 s, and
// waits for it to exit.
func (p *Process) Stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		select {
		case <-p.done:
			return nil
		default:
		}
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}
