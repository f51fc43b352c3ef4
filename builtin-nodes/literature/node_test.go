package literature_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/literature"
	"github.com/graphctl/graphctl/builtin-nodes/literature/littest"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// researchGraph declares query and an evidence list with the given reducer,
// pointing the sources at srv.
func researchGraph(t *testing.T, srv *littest.Server, evidenceReducer string) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "query: string", "evidence: list<object>", "notes: list<string>", "count: int")
	if err != nil {
		t.Fatal(err)
	}
	g.Field("evidence").Reducer = evidenceReducer
	if srv != nil {
		g.Defaults.Raw = map[string]any{literature.DefaultsKey: map[string]any{
			"pubmed_url": srv.PubMedURL(), "europepmc_url": srv.EuropePMCURL(), "clinicaltrials_url": srv.ClinicalTrialsURL(),
		}}
	}
	return g
}

func build(t *testing.T, g *graph.Graph, config map[string]any) node.Node {
	t.Helper()
	n, b, err := nodetest.Build(g, "lit_search", "search", config)
	if err != nil {
		t.Fatal(err)
	}
	if n == nil {
		t.Fatalf("build failed: %v", b.Problems())
	}
	return n
}

func TestSearchNode(t *testing.T) {
	tests := []struct {
		name     string
		config   map[string]any
		failures map[string]littest.Failure
		wantIDs  []string
		counts   map[string]any
		errored  []string
	}{
		{name: "all sources, de-duplicated",
			config:  map[string]any{"query": "query"},
			wantIDs: []string{"pubmed:39000102", "pubmed:39000103", "pmc:PMC11000104", "nct:NCT09000201", "nct:NCT09000202"},
			counts:  map[string]any{"pubmed": 2, "europepmc": 3, "clinicaltrials": 2}},
		{name: "selected sources in merge order",
			config:  map[string]any{"query": "query + ' mouse'", "sources": []any{"europepmc", "pubmed"}, "max_results": 1},
			wantIDs: []string{"pubmed:39000103"},
			counts:  map[string]any{"pubmed": 1, "europepmc": 1}},
		{name: "one source failing, the others used",
			config:   map[string]any{"query": "query"},
			failures: map[string]littest.Failure{"pubmed": {Status: 500, Body: `{"error":"internal"}`}},
			wantIDs:  []string{"pubmed:39000102", "pubmed:39000103", "pmc:PMC11000104", "nct:NCT09000201", "nct:NCT09000202"},
			counts:   map[string]any{"europepmc": 3, "clinicaltrials": 2},
			errored:  []string{"pubmed"}},
		{name: "two sources failing",
			config: map[string]any{"query": "query"},
			failures: map[string]littest.Failure{
				"europepmc":      {Status: 200, Body: "{truncated"},
				"clinicaltrials": {Status: 404, Body: "not found"},
			},
			wantIDs: []string{"pubmed:39000102", "pubmed:39000103"},
			counts:  map[string]any{"pubmed": 2},
			errored: []string{"europepmc", "clinicaltrials"}},
		{name: "a source that does not answer in time, the others used",
			config:   map[string]any{"query": "query", "timeout": "300ms"},
			failures: map[string]littest.Failure{"clinicaltrials": {Hang: true}},
			wantIDs:  []string{"pubmed:39000102", "pubmed:39000103", "pmc:PMC11000104"},
			counts:   map[string]any{"pubmed": 2, "europepmc": 3},
			errored:  []string{"clinicaltrials"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []littest.Option
			for src, f := range tt.failures {
				opts = append(opts, littest.WithFailure(src, f))
			}
			srv := littest.NewServer(t, opts...)
			g := researchGraph(t, srv, "merge_by_id")
			n := build(t, g, tt.config)
			up, events, err := nodetest.Run(context.Background(), g, n, "search", map[string]any{"query": "metformin cognitive decline"})
			if err != nil {
				t.Fatal(err)
			}
			items, _ := up["evidence"].([]any)
			var got []string
			for _, it := range items {
				m := it.(map[string]any)
				got = append(got, m["id"].(string))
				for _, k := range []string{"title", "url", "source"} {
					if s, _ := m[k].(string); s == "" {
						t.Errorf("evidence %v has no %s", m["id"], k)
					}
				}
			}
			if !reflect.DeepEqual(got, tt.wantIDs) {
				t.Fatalf("evidence ids = %v, want %v", got, tt.wantIDs)
			}
			if _, ok := up["notes"]; ok {
				t.Errorf("update %v writes notes without ids_into", up)
			}
			if len(events) != 1 || events[0].Type != literature.EventType {
				t.Fatalf("events = %v, want one %s", events, literature.EventType)
			}
			p := events[0].Payload
			if !reflect.DeepEqual(p["counts"], tt.counts) {
				t.Errorf("counts = %v, want %v", p["counts"], tt.counts)
			}
			if p["total"] != len(tt.wantIDs) {
				t.Errorf("total = %v, want %d", p["total"], len(tt.wantIDs))
			}
			errs, _ := p["errors"].([]any)
			var errored []string
			for _, e := range errs {
				m := e.(map[string]any)
				if m["code"] != literature.CodeSourceError || m["message"] == "" {
					t.Errorf("source error %v: want code %s and a message", m, literature.CodeSourceError)
				}
				errored = append(errored, m["source"].(string))
			}
			if len(errored) != len(tt.errored) || (len(errored) > 0 && !reflect.DeepEqual(errored, tt.errored)) {
				t.Errorf("errored sources = %v, want %v", errored, tt.errored)
			}
		})
	}
}

// TestSearchNodeIDsInto: with ids_into, the ids of the evidence found are
// written to a list<string> as well.
func TestSearchNodeIDsInto(t *testing.T) {
	srv := littest.NewServer(t)
	g := researchGraph(t, srv, "merge_by_id")
	n := build(t, g, map[string]any{"query": "query", "ids_into": "notes"})
	up, _, err := nodetest.Run(context.Background(), g, n, "search", map[string]any{"query": "metformin cognitive decline"})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"pubmed:39000102", "pubmed:39000103", "pmc:PMC11000104", "nct:NCT09000201", "nct:NCT09000202"}
	if !reflect.DeepEqual(up["notes"], want) {
		t.Errorf("ids = %v, want %v", up["notes"], want)
	}
}

func TestSearchNodeAllSourcesFail(t *testing.T) {
	bad := littest.Failure{Status: 502, Body: "bad gateway"}
	srv := littest.NewServer(t, littest.WithFailure("pubmed", bad), littest.WithFailure("europepmc", bad), littest.WithFailure("clinicaltrials", bad))
	g := researchGraph(t, srv, "merge_by_id")
	n := build(t, g, map[string]any{"query": "query"})
	up, events, err := nodetest.Run(context.Background(), g, n, "search", map[string]any{"query": "metformin"})
	var ne *node.Error
	if !errors.As(err, &ne) || ne.Code != literature.CodeSearchFailed || !ne.Retryable {
		t.Fatalf("error %v, want a retryable %s node error", err, literature.CodeSearchFailed)
	}
	for _, src := range literature.SourceNames {
		if !strings.Contains(err.Error(), src+":") {
			t.Errorf("error %q does not name source %s", err, src)
		}
	}
	if up != nil {
		t.Errorf("update %v, want none", up)
	}
	if len(events) != 1 || len(events[0].Payload["errors"].([]any)) != 3 {
		t.Errorf("events %v, want one search_result with three errors", events)
	}
}

func TestSearchNodeEmptyQuery(t *testing.T) {
	srv := littest.NewServer(t)
	g := researchGraph(t, srv, "merge_by_id")
	n := build(t, g, map[string]any{"query": "query"})
	_, _, err := nodetest.Run(context.Background(), g, n, "search", map[string]any{"query": "  "})
	if node.CodeOf(err) != literature.CodeInvalidQuery {
		t.Fatalf("error %v, want code %s", err, literature.CodeInvalidQuery)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("an empty query reached the sources: %v", srv.Requests())
	}
}

// TestSearchNodeRepeatedSearchUpdatesInPlace applies two searches through the
// merge_by_id reducer, Europe PMC failing in one of them: evidence found
// again is updated, not duplicated, and keeps Europe PMC's abstract either way.
func TestSearchNodeRepeatedSearchUpdatesInPlace(t *testing.T) {
	for _, failFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "europepmc fails first", false: "europepmc fails second"}[failFirst], func(t *testing.T) {
			testRepeatedSearch(t, failFirst)
		})
	}
}

func testRepeatedSearch(t *testing.T, failFirst bool) {
	srv := littest.NewServer(t)
	g := researchGraph(t, srv, "merge_by_id")
	n := build(t, g, map[string]any{"query": "query"})
	merge, _ := reducer.Lookup("merge_by_id")
	state := []any{}
	for i := 0; i < 2; i++ {
		if (i == 0) == failFirst {
			srv.SetFailure("europepmc", littest.Failure{Status: 503})
		} else {
			srv.SetFailure("europepmc", littest.Failure{})
		}
		up, _, err := nodetest.Run(context.Background(), g, n, "search", map[string]any{"query": "metformin cognitive decline", "evidence": state})
		if err != nil {
			t.Fatal(err)
		}
		res, err := merge.Reduce(state, up["evidence"])
		if err != nil {
			t.Fatal(err)
		}
		state = res.Value.([]any)
	}
	if len(state) != 5 {
		t.Fatalf("after two searches %d evidence items, want 5: %v", len(state), state)
	}
	first := state[0].(map[string]any)
	if first["id"] != "pubmed:39000102" || !strings.Contains(first["summary"].(string), "did not slow cognitive decline") {
		t.Errorf("first item %v: want pubmed:39000102 completed with Europe PMC's abstract", first)
	}
	if !reflect.DeepEqual(first["sources"], []any{"pubmed", "europepmc"}) {
		t.Errorf("sources = %v, want [pubmed europepmc]", first["sources"])
	}
}

func TestSearchNodeConfigErrors(t *testing.T) {
	tests := []struct {
		name     string
		reducer  string
		config   map[string]any
		raw      map[string]any
		path     string
		contains string
	}{
		{name: "evidence without merge_by_id", reducer: "append", config: map[string]any{"query": "query"},
			path: "into", contains: `reducer is "append"; declare reducer: "merge_by_id"`},
		{name: "default reducer", config: map[string]any{"query": "query"}, path: "into", contains: `reducer is "replace"`},
		{name: "into not a list of objects", reducer: "merge_by_id", config: map[string]any{"query": "query", "into": "notes"},
			path: "into", contains: "declare it as list<object>"},
		{name: "into unknown", reducer: "merge_by_id", config: map[string]any{"query": "query", "into": "evidense"},
			path: "into", contains: `did you mean "evidence"`},
		{name: "ids_into not a list of strings", reducer: "merge_by_id", config: map[string]any{"query": "query", "ids_into": "count"},
			path: "ids_into", contains: "declare it as list<string>"},
		{name: "query not a string", reducer: "merge_by_id", config: map[string]any{"query": "count"}, path: "query"},
		{name: "query unknown field", reducer: "merge_by_id", config: map[string]any{"query": "qurey"}, path: "query"},
		{name: "source listed twice", reducer: "merge_by_id", config: map[string]any{"query": "query", "sources": []any{"pubmed", "pubmed"}},
			path: "sources.1", contains: "twice"},
		{name: "timeout not a duration", reducer: "merge_by_id", config: map[string]any{"query": "query", "timeout": "soon"},
			path: "timeout", contains: `timeout "soon" is not a positive duration`},
		{name: "bad base URL", reducer: "merge_by_id", config: map[string]any{"query": "query"},
			raw: map[string]any{"pubmed_url": "not a url"}, path: "", contains: "defaults.literature.pubmed_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := researchGraph(t, nil, tt.reducer)
			if tt.raw != nil {
				g.Defaults.Raw = map[string]any{literature.DefaultsKey: tt.raw}
			}
			n, b, err := nodetest.Build(g, "lit_search", "search", tt.config)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil {
				t.Fatal("built a node from an invalid config")
			}
			found := false
			for _, p := range b.Problems() {
				if p.Path == tt.path && strings.Contains(p.Message, tt.contains) {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem at %q containing %q; got %v", tt.path, tt.contains, b.Problems())
			}
		})
	}
}

func TestSearchNodeSchema(t *testing.T) {
	g := researchGraph(t, nil, "merge_by_id")
	for _, cfg := range []map[string]any{
		{"query": "query", "sources": []any{"scopus"}},
		{"query": "query", "max_results": 0},
		{"query": "query", "limit": 3},
		{},
	} {
		n, b, err := nodetest.Build(g, "lit_search", "search", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if n != nil || !b.Has("", nodetest.CodeSchema) {
			t.Errorf("config %v: want a schema error, got %v", cfg, b.Problems())
		}
	}
}
