package websearch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/builtin-nodes/websearch"
	"github.com/graphctl/graphctl/builtin-nodes/websearch/tavilytest"
	"github.com/graphctl/graphctl/runtime/node"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

var pages = []tavilytest.Page{
	{URL: "https://docs.drift.trade/trading/funding-rates", Title: "Funding Rates | Drift Protocol",
		Content: "Drift perpetual futures settle funding every hour. Funding rates move the perp price toward the oracle.", Published: now.Add(-48 * time.Hour)},
	{URL: "https://solana.com/docs/core/fees", Title: "Transaction Fees | Solana",
		Content: "Every Solana transaction pays a base fee of 5000 lamports per signature.", Published: now.Add(-400 * 24 * time.Hour)},
	{URL: "https://news.example.com/drift-funding", Title: "Drift funding explained",
		Content: "A blog about Drift funding rates and perp markets."},
	{URL: "https://ja.example.jp/drift", Title: "Drift のファンディングレート",
		Content: "Drift のファンディングレートは1時間ごとに精算されます。"},
}

func build(t *testing.T, cfg map[string]any) node.Node {
	t.Helper()
	g, err := nodetest.Graph(nil, "question: string", "web: object")
	if err != nil {
		t.Fatal(err)
	}
	n, b, err := nodetest.Build(g, "web_search", "search", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n == nil {
		t.Fatalf("build: %v", b.Problems())
	}
	return n
}

func run(t *testing.T, n node.Node, question string) (map[string]any, []string, error) {
	t.Helper()
	g, _ := nodetest.Graph(nil, "question: string", "web: object")
	up, events, err := nodetest.Run(context.Background(), g, n, "search", map[string]any{"question": question})
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if err != nil {
		return nil, types, err
	}
	web, _ := up["web"].(map[string]any)
	return web, types, nil
}

func TestSearchSendsTavilyRequestAndNormalizesCitations(t *testing.T) {
	srv := tavilytest.NewServer(t, "tvly-test", pages...)
	srv.Now = func() time.Time { return now }
	t.Setenv(websearch.KeyEnv, "tvly-test")
	t.Setenv(websearch.URLEnv, srv.URL())
	n := build(t, map[string]any{
		"query": "${question}", "search_depth": "advanced", "max_results": 2, "time_range": "month",
		"include_domains": []any{"drift.trade", "solana.com"}, "exclude_domains": []any{"news.example.com"},
	})
	web, _, err := run(t, n, "drift funding rates")
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Auth != "tvly-test" || reqs[0].Status != 200 {
		t.Fatalf("requests %+v", reqs)
	}
	body := reqs[0].Body
	for k, want := range map[string]string{"query": "drift funding rates", "search_depth": "advanced", "time_range": "month"} {
		if body[k] != want {
			t.Errorf("request %s = %v, want %q", k, body[k], want)
		}
	}
	if body["max_results"].(interface{ String() string }).String() != "2" {
		t.Errorf("max_results %v", body["max_results"])
	}
	cites := web["citations"].([]any)
	// solana.com is older than a month; news.example.com is excluded.
	if len(cites) != 1 || web["searched"] != true || web["available"] != true || web["count"] != 1 {
		t.Fatalf("web %v", web)
	}
	c := cites[0].(map[string]any)
	if c["citation_id"] != "web-1" || c["url"] != "https://docs.drift.trade/trading/funding-rates" ||
		c["title"] != "Funding Rates | Drift Protocol" || !strings.Contains(c["snippet"].(string), "every hour") {
		t.Errorf("citation %v", c)
	}
}

func TestNoKeyIsNoWebSearchAvailable(t *testing.T) {
	t.Setenv(websearch.KeyEnv, "")
	n := build(t, map[string]any{"query": "${question}"})
	web, events, err := run(t, n, "drift funding")
	if err != nil {
		t.Fatalf("a missing key must not fail the node: %v", err)
	}
	if web["available"] != false || web["searched"] != false || !strings.Contains(web["reason"].(string), "no web search available") ||
		!strings.Contains(web["reason"].(string), "TAVILY_API_KEY") {
		t.Errorf("web %v", web)
	}
	if len(events) != 1 || events[0] != websearch.EventType {
		t.Errorf("events %v, want one web_search event", events)
	}
}

func TestSearchErrors(t *testing.T) {
	srv := tavilytest.NewServer(t, "tvly-test", pages...)
	t.Setenv(websearch.URLEnv, srv.URL())
	n := build(t, map[string]any{"query": "${question}"})
	for _, tc := range []struct {
		name, key string
		fail      int
		code      string
		retryable bool
		message   string
	}{
		{"bad key", "tvly-wrong", 0, "web_search_error", false, "invalid API key"},
		{"rate limited", "tvly-test", 429, "rate_limit", true, "rate limit"},
		{"server error", "tvly-test", 500, "web_search_error", true, "HTTP 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(websearch.KeyEnv, tc.key)
			if tc.fail != 0 {
				srv.Fail(1, tc.fail)
			}
			_, _, err := run(t, n, "drift")
			var ne *node.Error
			if !errors.As(err, &ne) || ne.Code != tc.code || ne.Retryable != tc.retryable || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %v, want code %s retryable %t mentioning %q", err, tc.code, tc.retryable, tc.message)
			}
		})
	}
}

func TestJapaneseQueryFindsJapanesePage(t *testing.T) {
	srv := tavilytest.NewServer(t, "k", pages...)
	t.Setenv(websearch.KeyEnv, "k")
	t.Setenv(websearch.URLEnv, srv.URL())
	web, _, err := run(t, build(t, map[string]any{"query": "${question}", "max_results": 1}), "Drift のファンディングレートは？")
	if err != nil {
		t.Fatal(err)
	}
	c := web["citations"].([]any)
	if len(c) != 1 || c[0].(map[string]any)["url"] != "https://ja.example.jp/drift" {
		t.Errorf("citations %v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	g, _ := nodetest.Graph(nil, "question: string", "web: string")
	for _, tc := range []struct {
		cfg  map[string]any
		path string
	}{
		{map[string]any{"query": "${question}", "include_domains": []any{"https://drift.trade"}}, "include_domains.0"},
		{map[string]any{"query": "${question}"}, "field"},
	} {
		_, b, err := nodetest.Build(g, "web_search", "search", tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Has(tc.path, "invalid-config") {
			t.Errorf("config %v: problems %v, want invalid-config at %s", tc.cfg, b.Problems(), tc.path)
		}
	}
	if _, b, _ := nodetest.Build(g, "web_search", "search", map[string]any{"query": "q", "max_results": 50}); b == nil || !b.Failed() {
		t.Error("max_results 50 accepted")
	}
}

func TestWebSearchTool(t *testing.T) {
	srv := tavilytest.NewServer(t, "k", pages...)
	t.Setenv(websearch.KeyEnv, "k")
	t.Setenv(websearch.URLEnv, srv.URL())
	tl, ok := tool.Lookup("web_search")
	if !ok {
		t.Fatal("web_search tool not registered")
	}
	res, err := tl.Func(context.Background(), map[string]any{"query": "solana fees", "max_results": float64(1)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "[web-1] Transaction Fees | Solana (https://solana.com/docs/core/fees)") {
		t.Errorf("text %q", res.Text)
	}
	t.Setenv(websearch.KeyEnv, "")
	if _, err := tl.Func(context.Background(), map[string]any{"query": "x"}); !errors.Is(err, websearch.ErrNoKey) {
		t.Errorf("no key: %v", err)
	}
}
