package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
	"github.com/graphctl/graphctl/server/graphs"
)

// newServer serves the shipped slot-filling graph and testdata/refund.cue
// (an interrupt) on 127.0.0.1, with the given API keys.
func newServer(t *testing.T, keys ...string) string {
	t.Helper()
	dir := t.TempDir()
	for src, dst := range map[string]string{"../../graphs/slot_filling.cue": "slot_filling.cue", "testdata/refund.cue": "refund.cue"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) { return ws.Engine(g, engine.Options{}), nil }, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	srv, err := server.New(server.Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), APIKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Runs().Shutdown(ctx)
		reg.Close()
		ws.Close()
	})
	return hs.URL
}

// bearer adds an API key to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressLog) add(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, req.Params.Message)
}

func (p *progressLog) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

func connect(t *testing.T, url string, client *http.Client, progress *progressLog) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = progress.add
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "graphctl-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: client}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type outcome struct {
	ThreadID   string         `json:"thread_id"`
	Status     string         `json:"status"`
	Replies    []string       `json:"replies"`
	Values     map[string]any `json:"values"`
	Interrupts []struct {
		ID, Node, Field, Message string
	} `json:"interrupts"`
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, token any) (*mcp.CallToolResult, outcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("call %s %v: %v", tool, args, err)
	}
	var out outcome
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return res, out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestGoClientSlotFillingAndInterrupt drives /mcp with the official Go SDK
// client: list the tools, call the slot-filling tool twice on one thread
// (the second call remembers the first), then hit an interrupt and resume it.
func TestGoClientSlotFillingAndInterrupt(t *testing.T) {
	url := newServer(t)
	progress := &progressLog{}
	cs := connect(t, url, nil, progress)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	sf := byName["slot_filling"]
	if sf == nil || byName["refund"] == nil {
		t.Fatalf("tools = %v, want slot_filling and refund", tools.Tools)
	}
	if !strings.Contains(sf.Description, "Appliance repair assistant") {
		t.Errorf("description %q does not come from the graph file", sf.Description)
	}
	schema, _ := json.Marshal(sf.InputSchema)
	var in struct {
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &in)
	if got := in.Properties["goal"].Enum; len(got) != 3 || got[0] != "install_instruction" {
		t.Errorf("goal enum = %v, want the graph's three goals; schema %s", got, schema)
	}
	for _, name := range []string{"message", "thread_id", "resume", "model", "symptoms"} {
		if _, ok := in.Properties[name]; !ok {
			t.Errorf("input schema lacks %q: %s", name, schema)
		}
	}
	if _, ok := in.Properties["messages"]; ok {
		t.Errorf("the messages field is offered as an argument; message covers it: %s", schema)
	}

	res, first := call(t, cs, "slot_filling", map[string]any{"message": "My dishwasher WDT780SAEM1 is leaking"}, "p1")
	if res.IsError || first.Status != "completed" || first.ThreadID == "" {
		t.Fatalf("first call: error=%v %+v %s", res.IsError, first, text(res))
	}
	if !strings.Contains(text(res), "What would you like to do?") || !strings.Contains(text(res), first.ThreadID) {
		t.Errorf("first reply %q, want the question for the goal and the thread id", text(res))
	}
	// The client handles notifications concurrently with the result: wait
	// for them to be handled.
	got := progress.all()
	for deadline := time.Now().Add(10 * time.Second); len(got) < 3 && time.Now().Before(deadline); got = progress.all() {
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) < 3 || !strings.Contains(strings.Join(got, ";"), "node extract finished") {
		t.Errorf("progress notifications %q, want one per finished node", got)
	}

	res, second := call(t, cs, "slot_filling", map[string]any{"thread_id": first.ThreadID, "message": "I want to fix it"}, nil)
	if res.IsError || second.ThreadID != first.ThreadID {
		t.Fatalf("second call: %+v %s", second, text(res))
	}
	if second.Values["model"] != "WDT780SAEM1" || second.Values["goal"] != "diagnose_repair" {
		t.Errorf("second call state model=%v goal=%v: the thread did not remember the first call", second.Values["model"], second.Values["goal"])
	}
	if len(second.Replies) != 1 || strings.Contains(second.Replies[0], "What would you like to do?") {
		t.Errorf("second call replies %q, want only the new diagnosis", second.Replies)
	}

	res, asked := call(t, cs, "refund", map[string]any{"message": "invoice 42"}, nil)
	if res.IsError || asked.Status != "interrupted" || len(asked.Interrupts) != 1 {
		t.Fatalf("refund call: %+v %s", asked, text(res))
	}
	if !strings.Contains(text(res), "Approve a refund for: invoice 42?") || !strings.Contains(text(res), `"resume"`) {
		t.Errorf("interrupt result %q, want the question and how to resume", text(res))
	}
	res, answered := call(t, cs, "refund", map[string]any{"thread_id": asked.ThreadID, "resume": "yes"}, nil)
	if res.IsError || answered.Status != "completed" || answered.Values["approved"] != "yes" {
		t.Fatalf("resume: %+v %s", answered, text(res))
	}
	if len(answered.Replies) != 1 || answered.Replies[0] != "Your refund is approved." {
		t.Errorf("resume replies %q", answered.Replies)
	}
}

// TestGoClientErrors checks that bad calls come back as tool errors that
// say what is wrong.
func TestGoClientErrors(t *testing.T) {
	url := newServer(t)
	cs := connect(t, url, nil, nil)
	_, done := call(t, cs, "slot_filling", map[string]any{"message": "hello"}, nil)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"unknown argument", "slot_filling", map[string]any{"modle": "X"}, "unknown argument modle"},
		{"enum", "slot_filling", map[string]any{"goal": "fly"}, "goal"},
		{"resume without question", "slot_filling", map[string]any{"thread_id": done.ThreadID, "resume": "yes"}, "not waiting"},
		{"resume without thread", "refund", map[string]any{"resume": "yes"}, "thread_id"},
		{"other graph's thread", "refund", map[string]any{"thread_id": done.ThreadID, "message": "x"}, "belongs to graph \"slot_filling\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := call(t, cs, tt.tool, tt.args, nil)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("error=%v text %q, want an error containing %q", res.IsError, text(res), tt.want)
			}
		})
	}
}

// TestAuth checks that /mcp takes the API's keys.
func TestAuth(t *testing.T) {
	url := newServer(t, "k1")
	c := mcp.NewClient(&mcp.Implementation{Name: "graphctl-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil); err == nil {
		cs.Close()
		t.Fatal("connected without an API key")
	}
	cs := connect(t, url, &http.Client{Transport: bearer{"k1"}}, nil)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 {
		t.Fatalf("tools with a key: %v %v", tools, err)
	}
}
