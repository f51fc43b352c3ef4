package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/workspace"
)

// unreachableEmbedder is an embedding model whose server cannot be reached.
type unreachableEmbedder struct{}

func (unreachableEmbedder) Name() string { return "embedder-down" }
func (unreachableEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("dial tcp 127.0.0.1:9: connection refused")
}
func (unreachableEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("dial tcp 127.0.0.1:9: connection refused")
}

// A failing embedding model is the server's upstream failing, not the
// client's request: put and search answer 502 with the model's error, while
// a bad request to the same store is still a 4xx.
func TestStoreEmbedderFailureIsBadGateway(t *testing.T) {
	items, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = items.Close() })
	f := newFixture(t, func(c *Config) { c.ItemStore = items.StoreWith(unreachableEmbedder{}) })

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"put of an indexed item", "PUT", "/store/items",
			map[string]any{"namespace": []string{"docs"}, "key": "a", "value": map[string]any{"text": "a red car"}},
			http.StatusBadGateway, "embedding_failed"},
		{"semantic search", "POST", "/store/items/search",
			map[string]any{"namespace_prefix": []string{"docs"}, "query": "car"},
			http.StatusBadGateway, "embedding_failed"},
		{"put of an item that is not indexed", "PUT", "/store/items",
			map[string]any{"namespace": []string{"docs"}, "key": "b", "value": map[string]any{"text": "a red car"}, "index": false},
			http.StatusNoContent, ""},
		{"search with a bad filter", "POST", "/store/items/search",
			map[string]any{"namespace_prefix": []string{"docs"}, "filter": map[string]any{"n": map[string]any{"$near": 1}}},
			http.StatusBadRequest, "bad_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.do(tc.method, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("%s %s = %d %v, want %d", tc.method, tc.path, status, body, tc.status)
			}
			if tc.code == "" {
				return
			}
			m, _ := body.(map[string]any)
			e, _ := m["error"].(map[string]any)
			detail, _ := m["detail"].(string)
			if e["code"] != tc.code || detail == "" {
				t.Fatalf("body = %v, want error code %q and a detail", body, tc.code)
			}
			if tc.status == http.StatusBadGateway && !strings.Contains(detail, "embedder-down") || tc.status == http.StatusBadGateway && !strings.Contains(detail, "connection refused") {
				t.Errorf("detail %q does not name the model and its error", detail)
			}
		})
	}
}
