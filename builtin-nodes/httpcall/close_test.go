package httpcall_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/httpcall"
	"github.com/graphctl/graphctl/runtime/engine"
)

// Closing the engine closes the http node: the keep-alive connection the
// node's own transport held open is closed, and a later run fails with
// httpcall.ErrClosed instead of opening a new connection.
func TestCloseReleasesConnections(t *testing.T) {
	states := make(chan http.ConnState, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew || s == http.StateClosed {
			states <- s
		}
	}
	srv.Start()
	defer srv.Close()

	out := runGraph(t, graphFile(t, `{url: "`+srv.URL+`/weather", output: "result"}`), nil)
	if out.res.Status != engine.StatusCompleted {
		t.Fatalf("run: %s %v", out.res.Status, out.res.Err)
	}
	if s := <-states; s != http.StateNew {
		t.Fatalf("first connection state %v, want new", s)
	}
	select {
	case s := <-states:
		t.Fatalf("the connection changed to %v before the node was closed", s)
	default:
	}
	if err := out.eng.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case s := <-states:
		if s != http.StateClosed {
			t.Fatalf("after Close the connection is %v, want closed", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the node's connection was not closed by Close")
	}

	_, err := out.eng.Run(context.Background(), engine.Request{ThreadID: "t2", Input: map[string]any{}}, nil)
	if !errors.Is(err, httpcall.ErrClosed) && (err == nil || !strings.Contains(err.Error(), httpcall.ErrClosed.Error())) {
		t.Fatalf("run after close: %v, want %v", err, httpcall.ErrClosed)
	}
	select {
	case s := <-states:
		t.Fatalf("a run after Close opened a connection (%v)", s)
	default:
	}
}
