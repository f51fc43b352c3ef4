package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolModel is an OpenAI-compatible chat server (non-streamed answers) that
// asks for one call of the fx__record tool with the user's turn, then
// answers once it has the tool's result.
func toolModel(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		n++
		id := n
		mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		var text string
		json.Unmarshal(last.Content, &text)
		msg := map[string]any{"role": "assistant"}
		finish := "stop"
		if last.Role == "tool" {
			msg["content"] = "done: " + text
		} else {
			turn := text
			for i := len(req.Messages) - 1; i >= 0; i-- {
				if req.Messages[i].Role == "user" {
					json.Unmarshal(req.Messages[i].Content, &turn)
					break
				}
			}
			args, _ := json.Marshal(map[string]string{"turn": turn})
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", id), "type": "function",
				"function": map[string]any{"name": "fx__record", "arguments": string(args)}}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", id), "object": "chat.completion", "created": time.Now().Unix(),
			"model": req.Model, "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// faultyMCP is an MCP server over streamable HTTP whose tool calls fail at
// random: the server crashes mid-call (the tool ran, the connection is cut,
// its sessions are lost: a new server answers), hangs, or answers garbage.
type faultyMCP struct {
	srv *httptest.Server
	mu  sync.Mutex
	h   http.Handler
	// calls holds, per turn, whether each call of the tool reached the
	// client (false: the answer was lost to a fault).
	calls  map[string][]bool
	faults map[string]int
	rate   float64
}

type recordIn struct {
	Turn string `json:"turn" jsonschema:"the turn to record"`
}

func newFaultyMCP(t *testing.T, rate float64) *faultyMCP {
	m := &faultyMCP{calls: map[string][]bool{}, faults: map[string]int{}, rate: rate}
	m.restart()
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// restart replaces the server: the sessions of the old one are gone.
func (m *faultyMCP) restart() {
	s := sdk.NewServer(&sdk.Implementation{Name: "fx", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "record", Description: "Records a turn."},
		func(_ context.Context, _ *sdk.CallToolRequest, in recordIn) (*sdk.CallToolResult, any, error) {
			m.mu.Lock()
			m.calls[in.Turn] = append(m.calls[in.Turn], true)
			m.mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "recorded " + in.Turn}}}, nil, nil
		})
	m.h = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
}

func (m *faultyMCP) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var rpc struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments recordIn `json:"arguments"`
		} `json:"params"`
	}
	json.Unmarshal(body, &rpc)
	m.mu.Lock()
	h := m.h
	kind := "ok"
	if rpc.Method == "tools/call" && rand.Float64() < m.rate {
		kind = []string{"crash mid-call", "hang", "malformed result", "garbage"}[rand.IntN(4)]
	}
	if rpc.Method == "tools/call" {
		m.faults[kind]++
	}
	m.mu.Unlock()
	switch kind {
	case "crash mid-call":
		// The tool runs, then the server dies before answering: the
		// connection is cut and a new server (without the sessions) starts.
		h.ServeHTTP(httptest.NewRecorder(), r)
		m.mu.Lock()
		turn := rpc.Params.Arguments.Turn
		if l := m.calls[turn]; len(l) > 0 {
			l[len(l)-1] = false
		}
		m.restart()
		m.mu.Unlock()
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case "hang":
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	case "malformed result":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc": "2.0", "id": %s, "result": {"content": "not a list", "isError": "perhaps"}}`, rpc.ID)
		return
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc": "2.0", "id": `)
		return
	}
	h.ServeHTTP(w, r)
}

// check reports a turn whose tool call was answered and then made again.
func (m *faultyMCP) check(v *violations) (calls int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for turn, l := range m.calls {
		calls += len(l)
		for i := 1; i < len(l); i++ {
			if l[i-1] {
				v.add("no finished node ran twice", "tool call of turn %s made again after its answer was delivered (%d calls)", turn, len(l))
				break
			}
		}
	}
	return calls
}

func (m *faultyMCP) table() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parts []string
	for k, n := range m.faults {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

const agentGraph = `dsl_version: "graphctl/v1"
name: "agent"
defaults: {
	mcp_servers: fx: {url: %q}
	call_retry: {max_attempts: 4, initial_interval: "20ms", max_interval: "200ms"}
}
state: {
	messages: {type: "messages"}
	contracts: {type: "contracts"}
	turn: {type: "string"}
	log: {type: "list<string>", reducer: "append"}
}
start: "agent"
nodes: {
	agent: {
		type: "llm"
		config: {model: "openai:gpt-4o-mini", stream: false, tools: ["mcp:fx/record"], contracts_field: "contracts"}
		routes: [{when: "any(contracts, {.action_type == 'tool_call' && .status == 'PENDING'})", to: "tools"}]
		default: "note"
	}
	tools: {type: "mcp_tool", timeout: "2s", retry: {max_attempts: 6, initial_interval: "20ms"}, next: "agent"}
	note: {type: "set", config: set: log: "[turn]", next: "END"}
}
`

// TestMCPServerFaults runs tool-using turns through graphctl serve against
// an MCP server that crashes mid-call, hangs or answers garbage.
func TestMCPServerFaults(t *testing.T) {
	turnsPerThread := 5
	if long {
		turnsPerThread = 20
	}
	model := toolModel(t)
	mcp := newFaultyMCP(t, 0.3)
	graphs := writeGraph(t, "agent", fmt.Sprintf(agentGraph, mcp.srv.URL))
	data := filepath.Join(t.TempDir(), "data")
	srv := startServer(t, graphs, data, []string{"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL + "/v1", "GRAPHCTL_LLM="})
	c := newClient()
	var v violations
	threads := []string{"p0", "p1", "p2", "p3"}
	var mu sync.Mutex
	succeeded := map[string][]string{}
	statuses := map[string]int{}
	var wg sync.WaitGroup
	stopProbe := make(chan struct{})
	probed := make(chan struct{})
	go func() { // the server keeps answering while tools hang
		defer close(probed)
		for {
			select {
			case <-stopProbe:
				return
			case <-time.After(100 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			code, _, err := c.call(ctx, srv.url, http.MethodGet, "/ok", nil)
			cancel()
			if err != nil || code != http.StatusOK {
				v.add("the server keeps answering", "GET /ok: %d %v", code, err)
			}
		}
	}()
	for _, th := range threads {
		c.must(t, srv.url, http.MethodPost, "/threads", map[string]any{"thread_id": th}, http.StatusOK)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < turnsPerThread; i++ {
				turn := fmt.Sprintf("%s/%d", th, i)
				code, out, err := c.call(context.Background(), srv.url, http.MethodPost, "/threads/"+th+"/runs/wait",
					map[string]any{"assistant_id": "agent", "input": turnInput(turn)})
				if err != nil || code != http.StatusOK {
					v.add("the server keeps answering", "run %s: %d %v %v", turn, code, out, err)
					continue
				}
				status := "success"
				if e := field(out, "__error__"); e != nil {
					status = "error"
					t.Logf("run %s ended in error: %v", turn, field(e, "message"))
				}
				mu.Lock()
				statuses[status]++
				if status == "success" {
					succeeded[th] = append(succeeded[th], turn)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stopProbe)
	<-probed
	waitFinal(t, c, srv.url, threads)
	for _, th := range threads {
		st := c.must(t, srv.url, http.MethodGet, "/threads/"+th+"/state", nil, http.StatusOK)
		for _, m := range asList(field(st, "values", "messages")) {
			if r := str(field(m, "role")); r == "tool" || str(field(m, "type")) == "tool" {
				// A tool result is the tool's answer or an error, never
				// what a broken server sent.
				content := fmt.Sprint(field(m, "content"))
				if !strings.HasPrefix(content, "recorded "+th+"/") && !strings.HasPrefix(content, "Error: ") {
					v.add("a broken tool answer is never a result", "thread %s has tool result %q", th, content)
				}
			}
		}
	}
	for _, e := range c.serverErrors() {
		v.add("the server keeps answering", "%s", e)
	}
	srv.stop()
	_, latest := checkDataDir(t, data, &v)
	for _, th := range threads {
		checkTurns(th, stringList(latest[th]["log"]), succeeded[th], &v)
	}
	calls := mcp.check(&v)
	t.Logf("runs %v; %d tool calls reached the tool; MCP answers: %s", statuses, calls, mcp.table())
	v.report(t, "MCP server: crash mid-call (sessions lost), hang, malformed result, garbage", len(threads)*turnsPerThread)
}
