package graphs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/sse"
)

// shipped is `graphctl serve --graphs graphs` in process: the shipped graph
// files of this directory served over real HTTP on 127.0.0.1, with a Badger
// data directory that survives restart.
type shipped struct {
	t       *testing.T
	dataDir string
	chat    string
	// tune, when set, adjusts each graph after it is compiled, before it is
	// served (a test shortens a duration it cannot wait for).
	tune func(*compile.Graph)

	ws  *workspace.Workspace
	reg *graphs.Registry
	srv *server.Server
	web *httptest.Server
	url string
}

// serveShipped serves the graphs of this directory with chatGraph behind the
// chat endpoints, as `graphctl serve --graphs graphs --chat-graph
// chatGraph` does. Model and service URLs come from the environment, which
// the test sets before calling it.
func serveShipped(t *testing.T, chatGraph string) *shipped {
	t.Helper()
	return serveTuned(t, chatGraph, nil)
}

// serveTuned is serveShipped with each compiled graph passed to tune first.
func serveTuned(t *testing.T, chatGraph string, tune func(*compile.Graph)) *shipped {
	t.Helper()
	s := &shipped{t: t, dataDir: t.TempDir(), chat: chatGraph, tune: tune}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *shipped) start() {
	t := s.t
	t.Helper()
	ws, err := workspace.Open(s.dataDir)
	if err != nil {
		t.Fatalf("open data dir: %v", err)
	}
	// As serve does, $GRAPHCTL_LLM overrides every node's model.
	var extra node.Extra
	if choice := os.Getenv("GRAPHCTL_LLM"); choice != "" {
		extra = llm.OverrideKey.Bind(extra, choice)
	}
	reg, diags, err := graphs.Open(".", func(g *compile.Graph) (*engine.Engine, error) {
		if s.tune != nil {
			s.tune(g)
		}
		eng := ws.Engine(g, engine.Options{Extra: extra})
		// As serve does, a graph that cannot be prepared is still served.
		_ = eng.Preflight(context.Background())
		return eng, nil
	}, nil)
	if err != nil || reg == nil {
		ws.Close()
		t.Fatalf("serve graphs/: %v\n%v", err, diags)
	}
	srv, err := server.New(server.Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), ChatGraph: s.chat,
		Answers: []server.AnswerKind{{Name: contract.AnswerName, Pending: contract.PendingAnswer, Waiting: contract.AnswerWaiting}}})
	if err != nil {
		reg.Close()
		ws.Close()
		t.Fatalf("server: %v", err)
	}
	if _, err := srv.Recover(context.Background(), false); err != nil {
		t.Fatalf("recover: %v", err)
	}
	s.ws, s.reg, s.srv = ws, reg, srv
	s.web = httptest.NewServer(srv.Handler())
	s.url = s.web.URL
}

// stop waits for the server's runs to end and closes everything.
func (s *shipped) stop() {
	if s.web == nil {
		return
	}
	s.web.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.srv.Runs().Shutdown(ctx); err != nil {
		s.t.Errorf("shut the run manager down: %v", err)
	}
	if err := s.reg.Close(); err != nil {
		s.t.Errorf("close engines: %v", err)
	}
	if err := s.ws.Close(); err != nil {
		s.t.Errorf("close data dir: %v", err)
	}
	s.web = nil
}

// restart stops the server and starts a new one on the same data directory,
// as a process restart does.
func (s *shipped) restart() {
	s.t.Helper()
	s.stop()
	s.start()
}

// settle waits until a thread has no run in progress. A client that read a
// run's stream to its end (or a /runs/wait answer) expects its next request
// on the thread to find it idle; the server may still be handing the thread
// over for a moment after the stream's last frame, so the harness waits for
// that instead of racing it.
func (s *shipped) settle(thread string) {
	if thread == "" || s.srv == nil {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, busy := s.srv.Runs().Busy(thread); !busy {
			return
		}
	}
	s.t.Errorf("thread %s is still busy 10s after its run's stream ended", thread)
}

// threadOf returns the thread a request ran on: the chat endpoints' session
// header, or the id in /threads/{id}/runs….
func threadOf(path string, resp *http.Response) string {
	if id := resp.Header.Get("X-Session-Id"); id != "" {
		return id
	}
	if rest, ok := strings.CutPrefix(path, "/threads/"); ok {
		if id, tail, ok := strings.Cut(rest, "/"); ok && strings.HasPrefix(tail, "runs") {
			return id
		}
	}
	return ""
}

// chatEvent is one `data: {"type", "payload"}` frame of a chat stream.
type chatEvent struct {
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload"`
}

type chatEvents []chatEvent

// of returns the events of one type.
func (evs chatEvents) of(typ string) chatEvents {
	var out chatEvents
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// text is the content of the text events joined: the tokens of a streamed
// reply, or whole texts.
func (evs chatEvents) text() string {
	var b strings.Builder
	for _, e := range evs.of("text") {
		c, _ := e.Payload["content"].(string)
		b.WriteString(c)
	}
	return b.String()
}

// types lists the event types in order.
func (evs chatEvents) types() string {
	var out []string
	for _, e := range evs {
		if len(out) > 0 && out[len(out)-1] == e.Type {
			continue
		}
		out = append(out, e.Type)
	}
	return strings.Join(out, ",")
}

// do sends a JSON request and decodes the JSON answer.
func (s *shipped) do(method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	s.settle(threadOf(path, resp))
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			s.t.Fatalf("%s %s: answer %s: %v", method, path, raw, err)
		}
	}
	if out == nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

// chatPost posts JSON to a chat endpoint and reads its stream.
func (s *shipped) chatPost(path string, body any) (int, chatEvents) {
	s.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.Post(s.url+path, "application/json", bytes.NewReader(b))
	if err != nil {
		s.t.Fatalf("POST %s: %v", path, err)
	}
	return s.readChat(path, resp)
}

// mustChat is chatPost that fails the test unless the answer is a stream.
func (s *shipped) mustChat(path string, body any) chatEvents {
	s.t.Helper()
	code, evs := s.chatPost(path, body)
	if code != http.StatusOK {
		s.t.Fatalf("POST %s: status %d, events %v", path, code, evs)
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != "done" {
		s.t.Fatalf("POST %s: the stream %v does not end with done", path, evs)
	}
	return evs
}

// image uploads an image to /chat/image with the given form fields.
func (s *shipped) image(fields map[string]string, name, ctype string, data []byte) (int, chatEvents) {
	s.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			s.t.Fatal(err)
		}
	}
	if data != nil {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, name)}
		if ctype != "" {
			h["Content-Type"] = []string{ctype}
		}
		fw, err := w.CreatePart(h)
		if err != nil {
			s.t.Fatal(err)
		}
		fw.Write(data)
	}
	w.Close()
	resp, err := http.Post(s.url+"/chat/image", w.FormDataContentType(), &buf)
	if err != nil {
		s.t.Fatalf("POST /chat/image: %v", err)
	}
	return s.readChat("/chat/image", resp)
}

func (s *shipped) readChat(path string, resp *http.Response) (int, chatEvents) {
	s.t.Helper()
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, chatEvents{{Type: "http_error", Payload: map[string]any{"body": string(raw)}}}
	}
	var evs chatEvents
	err := sse.Parse(resp.Body, func(f sse.Frame) error {
		var e chatEvent
		if err := json.Unmarshal(f.Data, &e); err != nil {
			return fmt.Errorf("frame %s: %w", f.Data, err)
		}
		evs = append(evs, e)
		return nil
	})
	if err != nil {
		s.t.Fatalf("POST %s: read stream: %v", path, err)
	}
	s.settle(threadOf(path, resp))
	return resp.StatusCode, evs
}

// state returns a thread's current values (GET /threads/ID/state).
func (s *shipped) state(thread string) map[string]any {
	s.t.Helper()
	code, st := s.do("GET", "/threads/"+thread+"/state", nil)
	if code != http.StatusOK {
		s.t.Fatalf("state of %s: %d %v", thread, code, st)
	}
	vals, _ := st["values"].(map[string]any)
	return vals
}

// conceptEmbeddings serves POST /v1/embeddings, OpenAI's wire format, with
// vectors that carry meaning: each word of a small vocabulary counts for its
// concept ("puppy" and "retriever" are both dog), so texts about one thing in
// different words are close, which a bag of words is not. Other words count
// for themselves with a small weight. Every other request goes to next, the
// chat model.
type conceptEmbeddings struct {
	next   http.Handler
	failed bool

	mu     sync.Mutex
	models []string
	inputs [][]string
}

// concepts maps words to their concept.
var concepts = map[string]string{
	"dog": "dog", "dogs": "dog", "puppy": "dog", "pup": "dog", "retriever": "dog", "labrador": "dog", "canine": "dog", "vet": "dog",
	"tea": "tea", "oolong": "tea", "matcha": "tea", "sencha": "tea",
	"allergic": "allergy", "allergy": "allergy", "peanut": "allergy", "peanuts": "allergy", "nuts": "allergy",
	"nurse": "work", "hospital": "work", "job": "work", "shift": "work", "works": "work",
}

var conceptDims = []string{"dog", "tea", "allergy", "work"}

func conceptVector(text string) []float32 {
	const dim = 64
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if c, ok := concepts[w]; ok {
			v[slices.Index(conceptDims, c)] += 1
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[len(conceptDims)+int(h.Sum32()%uint32(dim-len(conceptDims)))] += 0.15
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		for i := range v {
			v[i] /= float32(math.Sqrt(norm))
		}
	}
	return v
}

func (c *conceptEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/embeddings") {
		c.next.ServeHTTP(w, r)
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			http.Error(w, `{"error": {"message": "input must be a string or a list of strings"}}`, http.StatusBadRequest)
			return
		}
		inputs = []string{one}
	}
	c.mu.Lock()
	failed := c.failed
	c.models = append(c.models, req.Model)
	c.inputs = append(c.inputs, inputs)
	c.mu.Unlock()
	if failed {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error": {"message": "embeddings are down", "type": "server_error"}}`)
		return
	}
	data := make([]any, len(inputs))
	for i, in := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": conceptVector(in)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1}})
}

// setFailed makes the embeddings endpoint answer 503 (or work again).
func (c *conceptEmbeddings) setFailed(f bool) {
	c.mu.Lock()
	c.failed = f
	c.mu.Unlock()
}

// calls returns the models and inputs of the embedding requests so far.
func (c *conceptEmbeddings) calls() ([]string, [][]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.models...), append([][]string(nil), c.inputs...)
}

// equalJSON compares a decoded JSON value with want by their encodings.
func equalJSON(got, want any) bool {
	a, err1 := json.Marshal(got)
	b, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
