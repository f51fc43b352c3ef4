package graphs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
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
	s := &shipped{t: t, dataDir: t.TempDir(), chat: chatGraph}
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
	reg, diags, err := graphs.Open(".", func(g *compile.Graph) (*engine.Engine, error) {
		eng := ws.Engine(g, engine.Options{})
		// As serve does, a graph that cannot be prepared is still served.
		_ = eng.Preflight(context.Background())
		return eng, nil
	}, nil)
	if err != nil || reg == nil {
		ws.Close()
		t.Fatalf("serve graphs/: %v\n%v", err, diags)
	}
	srv, err := server.New(server.Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), ChatGraph: s.chat})
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

// text is the content of the text events that are not streamed deltas,
// or the deltas joined when all are deltas.
func (evs chatEvents) text() string {
	var whole, deltas strings.Builder
	for _, e := range evs.of("text") {
		c, _ := e.Payload["content"].(string)
		if e.Payload["delta"] == true {
			deltas.WriteString(c)
		} else {
			whole.WriteString(c)
			whole.WriteString("\n")
		}
	}
	return whole.String() + deltas.String()
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
