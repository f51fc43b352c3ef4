package server

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/store"
)

// Reading store items restarts the TTL of those that have one, as LangGraph's
// store does, unless the read says refresh_ttl false: GET /store/items as
// the SDKs' getItem/get_item send refresh_ttl (a query parameter) and POST
// /store/items/search as searchItems/search_items send it (a body field).
func TestStoreReadsRefreshTTL(t *testing.T) {
	var st store.Store
	f := newFixture(t, func(c *Config) { st = c.Store })
	ns := []string{"mem", "u1"}
	expiry := func() time.Time {
		t.Helper()
		it, err := st.Get(context.Background(), ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		return it.ExpiresAt
	}
	if code, body := f.do("PUT", "/store/items", map[string]any{"namespace": ns, "key": "k", "value": map[string]any{"text": "note"}, "ttl": 60}); code != 204 {
		t.Fatalf("put: %d %v", code, body)
	}
	f.do("PUT", "/store/items", map[string]any{"namespace": ns, "key": "kept", "value": map[string]any{"text": "note"}})
	tests := []struct {
		name, method, path string
		body               any
		refreshes          bool
	}{
		{"get", "GET", "/store/items?namespace=mem.u1&key=k", nil, true},
		{"get refresh_ttl=true", "GET", "/store/items?namespace=mem.u1&key=k&refresh_ttl=true", nil, true},
		{"get refresh_ttl=false", "GET", "/store/items?namespace=mem.u1&key=k&refresh_ttl=false", nil, false},
		{"search", "POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"mem"}}, true},
		{"search refresh_ttl null", "POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"mem"}, "refresh_ttl": nil}, true},
		{"search refresh_ttl true", "POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"mem"}, "refresh_ttl": true}, true},
		{"search refresh_ttl false", "POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"mem"}, "refresh_ttl": false}, false},
		{"search past the item", "POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"mem"}, "offset": 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := expiry()
			if code, body := f.do(tt.method, tt.path, tt.body); code != 200 || body == nil {
				t.Fatalf("%s %s: %d %v", tt.method, tt.path, code, body)
			}
			after := expiry()
			if refreshed := after.After(before); refreshed != tt.refreshes {
				t.Errorf("expiry %v → %v: refreshed %v, want %v", before, after, refreshed, tt.refreshes)
			}
			if tt.refreshes && after.Sub(time.Now()) < 59*time.Minute {
				t.Errorf("refreshed expiry %v is not the item's 60 minutes after the read", after)
			}
		})
	}
	if it, err := st.Get(context.Background(), ns, "kept"); err != nil || !it.ExpiresAt.IsZero() {
		t.Errorf("an item without a TTL after reads: %+v, %v; want no expiry", it, err)
	}
}

// A refresh_ttl that is not a boolean is refused with 422 naming it.
func TestStoreRefreshTTLHostile(t *testing.T) {
	f := newFixture(t, nil)
	f.do("PUT", "/store/items", map[string]any{"namespace": []string{"mem"}, "key": "k", "value": map[string]any{}, "ttl": 5})
	for _, tt := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/store/items?namespace=mem&key=k&refresh_ttl=sometimes", nil},
		{"POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"mem"}, "refresh_ttl": "yes"}},
		{"POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"mem"}, "refresh_ttl": 1}},
	} {
		code, body := f.do(tt.method, tt.path, tt.body)
		errBody, _ := body.(map[string]any)
		detail, _ := errBody["detail"].(string)
		if code != 422 || !strings.Contains(detail, "refresh_ttl") {
			t.Errorf("%s %s %v: %d %v, want 422 naming refresh_ttl", tt.method, tt.path, tt.body, code, body)
		}
	}
}

// The official JS client's getItem and searchItems, with refreshTtl or
// without (the default refreshes), refresh the TTL of the items they read
// as the same requests sent by hand do.
func TestLangGraphJSStoreRefreshTTL(t *testing.T) {
	sdk := requireJSClient(t)
	var st store.Store
	f := newFixture(t, func(c *Config) { st = c.Store })
	ns := []string{"mem", "u1"}
	f.do("PUT", "/store/items", map[string]any{"namespace": ns, "key": "k", "value": map[string]any{"text": "note"}, "ttl": 60})
	f.do("PUT", "/store/items", map[string]any{"namespace": ns, "key": "kept", "value": map[string]any{"text": "note"}})
	for _, tt := range []struct {
		op        string
		refreshes bool
	}{{"get-no-refresh", false}, {"get", true}, {"search-no-refresh", false}, {"search", true}} {
		before, err := st.Get(context.Background(), ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sdk.node, "store-ttl.mjs", f.http.URL, tt.op)
		cmd.Dir = sdk.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("node store-ttl.mjs %s: %v\n%s", tt.op, err, out)
		}
		after, err := st.Get(context.Background(), ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		if refreshed := after.ExpiresAt.After(before.ExpiresAt); refreshed != tt.refreshes {
			t.Errorf("%s: expiry %v → %v: refreshed %v, want %v", tt.op, before.ExpiresAt, after.ExpiresAt, refreshed, tt.refreshes)
		}
	}
}
