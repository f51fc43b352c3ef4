package telegram_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// loadOnBadger loads the graph src (named name) and opens an in-memory
// Badger database closed when the test ends.
func loadOnBadger(t *testing.T, name, src string) (*compile.Graph, *badger.DB) {
	t.Helper()
	g, diags := runtime.LoadSource(name, []byte(src))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph: %v", diags)
	}
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return g, db
}

// postUpdate posts u to a webhook at url in the background; the channel
// receives the answer's status code, or 0 when the request failed.
func postUpdate(url string, u telegram.Update) <-chan int {
	code := make(chan int, 1)
	body, _ := json.Marshal(u)
	go func() {
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			code <- 0
			return
		}
		resp.Body.Close()
		code <- resp.StatusCode
	}()
	return code
}
