package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	_ "github.com/graphctl/graphctl/builtin-nodes/interrupt"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server/ephemeral"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/sse"
)

// gateEnv names a directory through which tests hold the slow node: it
// writes THREAD.started there and waits for THREAD.release.
const gateEnv = "GRAPHCTL_SERVERTEST_GATE"

func TestMain(m *testing.M) {
	node.MustRegister(slowType)
	if os.Getenv("GRAPHCTL_SERVERTEST_CHILD") == "1" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

var slowType = node.Type{
	Name:        "servertest_slow",
	Description: "waits for a release file (tests only)",
	Config:      `{label: string}`,
	New: func(b node.Builder) (node.Node, error) {
		var cfg struct{ Label string }
		if err := b.Decode(&cfg); err != nil {
			return nil, err
		}
		return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
			dir := os.Getenv(gateEnv)
			if dir != "" {
				os.WriteFile(filepath.Join(dir, in.ThreadID+".started"), []byte(in.RunID), 0o644)
				release := filepath.Join(dir, in.ThreadID+".release")
				for {
					if _, err := os.Stat(release); err == nil {
						break
					}
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(5 * time.Millisecond):
					}
				}
			}
			return node.Update{"log": []any{cfg.Label}}, nil
		}), nil
	},
}

// childMain serves testdata/graphs on the address in GRAPHCTL_SERVERTEST_ADDR
// with the data dir in GRAPHCTL_SERVERTEST_DATA: the server process that the
// durability test kills and restarts.
func childMain() int {
	ws, err := openServed(os.Getenv("GRAPHCTL_SERVERTEST_DATA"))
	if err != nil {
		os.Stderr.WriteString(err.Error())
		return 2
	}
	defer ws.Close()
	reg, _, err := graphs.Open("testdata/graphs", func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, engine.Options{}), nil
	}, nil)
	if err != nil || reg == nil {
		return 2
	}
	srv, err := New(Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), ChatGraph: "chatbot", Answers: []AnswerKind{contractAnswers}})
	if err != nil {
		return 2
	}
	ln, err := net.Listen("tcp", os.Getenv("GRAPHCTL_SERVERTEST_ADDR"))
	if err != nil {
		return 2
	}
	ctx := context.Background()
	srv.Recover(ctx, os.Getenv("GRAPHCTL_SERVERTEST_FAIL") == "1")
	srv.Serve(ctx, ln, ServeOptions{})
	return 0
}

// servedWorkspace is a workspace wired as graphctl serve wires it: the
// threads of stateless runs are kept in memory (server/ephemeral).
type servedWorkspace struct {
	*workspace.Workspace
	cp *ephemeral.Checkpointer
}

// openServed opens the workspace in dir as graphctl serve does.
func openServed(dir string) (*servedWorkspace, error) {
	ws, err := workspace.Open(dir)
	if err != nil {
		return nil, err
	}
	return &servedWorkspace{Workspace: ws, cp: ephemeral.New(ws.Checkpointer())}, nil
}

// Checkpointer returns the checkpointer the server and engines share.
func (w *servedWorkspace) Checkpointer() checkpoint.Checkpointer { return w.cp }

// Engine builds an engine for g over the served checkpointer.
func (w *servedWorkspace) Engine(g *compile.Graph, opts engine.Options) *engine.Engine {
	if opts.Store == nil {
		opts.Store = w.Store()
	}
	return engine.New(g, w.cp, opts)
}

// fixture is a server over testdata/graphs on a temporary data dir.
type fixture struct {
	t    testing.TB
	srv  *Server
	http *httptest.Server
	gate string
}

func newFixture(t testing.TB, mutate func(*Config)) *fixture {
	t.Helper()
	gate := t.TempDir()
	t.Setenv(gateEnv, gate)
	ws, err := openServed(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, diags, err := graphs.Open("testdata/graphs", func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, engine.Options{}), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	return wrapFixture(t, ws, reg, mutate)
}

func wrapFixture(t testing.TB, ws *servedWorkspace, reg *graphs.Registry, mutate func(*Config)) *fixture {
	t.Helper()
	gate := os.Getenv(gateEnv)
	cfg := Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), ChatGraph: "chatbot", Answers: []AnswerKind{contractAnswers}, OwnStore: true}
	if mutate != nil {
		mutate(&cfg)
	}
	return serveFixture(t, cfg, gate, func() { reg.Close(); ws.Close() })
}

// serveFixture starts a server of cfg over httptest; when the test ends it
// stops the server, its runs, then calls release.
func serveFixture(t testing.TB, cfg Config, gate string, release func()) *fixture {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	srv.Start(ctx)
	// As Serve's server: run streams see their connection.
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Config.ConnContext = sse.ConnContext
	hs.Start()
	t.Cleanup(func() {
		stop()
		srv.Wait()
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.runs.Shutdown(ctx)
		release()
	})
	return &fixture{t: t, srv: srv, http: hs, gate: gate}
}

// do sends a JSON request and returns the status and decoded body.
func (f *fixture) do(method, path string, body any) (int, any) {
	f.t.Helper()
	var r io.Reader
	if s, ok := body.(string); ok {
		r = strings.NewReader(s)
	} else if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.http.URL+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			out = string(raw)
		}
	}
	return resp.StatusCode, out
}

// stream posts a request and collects the SSE frames until the stream ends.
func (f *fixture) stream(path string, body any) (int, []sse.Frame) {
	f.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(f.http.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var frames []sse.Frame
	sse.Parse(bufio.NewReader(resp.Body), func(fr sse.Frame) error { frames = append(frames, fr); return nil })
	return resp.StatusCode, frames
}

func (f *fixture) release(thread string) {
	os.WriteFile(filepath.Join(f.gate, thread+".release"), nil, 0o644)
}

// waitStarted blocks until the slow node has started on thread.
func (f *fixture) waitStarted(thread string) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(f.gate, thread+".started")); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("slow node never started on thread %s", thread)
}

func field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func eventNames(frames []sse.Frame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.Event
	}
	return out
}
