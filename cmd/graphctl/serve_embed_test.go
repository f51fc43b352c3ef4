package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/store/storetest"
)

// conceptEmbeddings is an OpenAI-compatible /v1/embeddings server on
// 127.0.0.1 answering with storetest.ConceptEmbedder's vectors; it records
// the models asked for.
func conceptEmbeddings(t *testing.T) (string, func() []string) {
	var (
		mu     sync.Mutex
		models []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"not an embeddings request"}}`, http.StatusBadRequest)
			return
		}
		var inputs []string
		if json.Unmarshal(req.Input, &inputs) != nil {
			var one string
			_ = json.Unmarshal(req.Input, &one)
			inputs = []string{one}
		}
		mu.Lock()
		models = append(models, req.Model)
		mu.Unlock()
		data := make([]any, len(inputs))
		for i, in := range inputs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": storetest.ConceptEmbedder{}.Vector(in)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), models...)
	}
}

// TestServeStoreSemanticSearch starts `graphctl serve` with an embedder
// ($GRAPHCTL_EMBEDDER, $GRAPHCTL_EMBEDDINGS_URL at a local embeddings
// server): items put through the store API are embedded, and a search with a
// query ranks by cosine similarity, so the item near in meaning comes first
// though it shares no word with the query. Badger, and PostgreSQL when
// $GRAPHCTL_TEST_POSTGRES is set.
func TestServeStoreSemanticSearch(t *testing.T) {
	for _, backend := range []string{"badger", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "echo.cue"), []byte(echoGraph), 0o644)
			args := []string{"serve", "--graphs", dir, "--addr", "127.0.0.1:0", "--log-level", "error"}
			if backend == "postgres" {
				args = append(args, "--postgres", postgresURL(t))
			} else {
				args = append(args, "--data-dir", filepath.Join(dir, "data"))
			}
			embedURL, models := conceptEmbeddings(t)
			t.Setenv(llm.EmbedderEnv, "openai:concepts-1")
			t.Setenv(llm.EmbeddingsURLEnv, embedURL)
			t.Setenv("GRAPHCTL_LLM", "")
			base, stop := startServe(t, args)
			defer stop()

			for key, value := range map[string]map[string]any{
				"car":    {"text": "I drive a sedan to work"},
				"fruit":  {"text": "bananas from the orchard"},
				"drink":  {"text": "an espresso every morning"},
				"titled": {"title": "apples", "body": "a truck"},
			} {
				body := map[string]any{"namespace": []string{"memories", "u1"}, "key": key, "value": value}
				if key == "titled" {
					body["index"] = []string{"title"}
				}
				if code := call(t, "PUT", base+"/store/items", body, nil); code != http.StatusNoContent {
					t.Fatalf("put %s: status %d", key, code)
				}
			}
			var res struct {
				Items []struct {
					Key   string   `json:"key"`
					Score *float64 `json:"score"`
				} `json:"items"`
			}
			if code := call(t, "POST", base+"/store/items/search", map[string]any{"namespace_prefix": []string{"memories"}, "query": "automobile"}, &res); code != http.StatusOK {
				t.Fatalf("search: status %d", code)
			}
			if len(res.Items) != 4 || res.Items[0].Key != "car" || res.Items[0].Score == nil || *res.Items[0].Score < 0.9 {
				t.Fatalf("search for automobile = %+v, want car first with a score near 1", res.Items)
			}
			for _, it := range res.Items[1:] {
				if it.Score == nil || *it.Score >= *res.Items[0].Score/2 {
					t.Errorf("far item %s scores %v, want well below car's %v", it.Key, it.Score, *res.Items[0].Score)
				}
			}
			// Only the title of "titled" was embedded: a query about fruit finds it
			// with the orchard, not a query about vehicles.
			if code := call(t, "POST", base+"/store/items/search", map[string]any{"namespace_prefix": []string{"memories"}, "query": "apple", "limit": 2}, &res); code != http.StatusOK {
				t.Fatalf("search: status %d", code)
			}
			if len(res.Items) != 2 || res.Items[0].Key == "car" || res.Items[1].Key == "car" || res.Items[0].Key == "drink" || res.Items[1].Key == "drink" {
				t.Errorf("search for apple = %+v, want fruit and titled", res.Items)
			}
			// The server's own records (threads here) are not embedded.
			before := len(models())
			if code := call(t, "POST", base+"/threads", map[string]any{}, nil); code != http.StatusOK {
				t.Fatalf("create thread: status %d", code)
			}
			if n := len(models()); n != before {
				t.Errorf("creating a thread made %d embeddings requests", n-before)
			}
			for _, m := range models() {
				if m != "concepts-1" {
					t.Errorf("embeddings server asked for model %q, want concepts-1", m)
				}
			}
			if len(models()) < 6 {
				t.Errorf("embeddings server saw %d requests, want the 4 puts and 2 queries", len(models()))
			}
		})
	}
}

// startServe runs `graphctl serve` with args until the test stops it,
// returning its base URL.
func startServe(t *testing.T, args []string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	addr := regexp.MustCompile(`on (http://\S+)`)
	var url string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && url == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve ended: %v\n%s", err, out.String())
		default:
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("serve did not start: %s", out.String())
	}
	return url, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out.String())
		}
	}
}

// call sends a JSON request and decodes a JSON answer into out (when not nil),
// returning the status.
func call(t *testing.T, method, url string, body, out any) int {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
	return resp.StatusCode
}
