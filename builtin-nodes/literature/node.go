package literature

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// EventType is the type of the event lit_search emits after every search.
const EventType = "search_result"

// Error codes: a source that failed (reported in the event; the node goes
// on with the others), and a search in which every source failed (the
// node's error, retryable).
const (
	CodeSourceError  = "source_error"
	CodeSearchFailed = "search_failed"
	CodeInvalidQuery = "invalid_query"
)

// DefaultMaxResults is how many hits each source returns when the node does
// not say.
const DefaultMaxResults = 10

// DefaultTimeout bounds one source's search (all its requests) when the node
// does not say: a source that does not answer in time is a source_error,
// and the search goes on with the others.
const DefaultTimeout = 30 * time.Second

func init() {
	node.MustRegister(node.Type{
		Name: "lit_search",
		Description: "Searches PubMed, Europe PMC and ClinicalTrials.gov concurrently; writes de-duplicated evidence " +
			"{id, title, summary, url, source, year, outcome} to a merge_by_id list (and, with ids_into, their ids to a list<string>) and emits search_result counts per source.",
		Config: `{
	query: string
	into?: *"evidence" | string
	ids_into?: string
	sources?: [...("pubmed" | "europepmc" | "clinicaltrials")]
	max_results?: *10 | int & >0 & <=100
	timeout?: *"30s" | string
}`,
		New: newSearchNode,
	})
}

// searchNode is the lit_search node type.
type searchNode struct {
	name     string
	query    node.Expr
	into     string
	idsInto  string
	sources  []string
	max      int
	timeout  time.Duration
	searcher *Searcher
}

func newSearchNode(b node.Builder) (node.Node, error) {
	var cfg struct {
		Query      string   `json:"query"`
		Into       string   `json:"into"`
		IDsInto    string   `json:"ids_into"`
		Sources    []string `json:"sources"`
		MaxResults int      `json:"max_results"`
		Timeout    string   `json:"timeout"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "lit_search node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &searchNode{name: b.NodeName(), into: cfg.Into, idsInto: cfg.IDsInto, max: cfg.MaxResults}
	if n.into == "" {
		n.into = "evidence"
	}
	if n.max <= 0 {
		n.max = DefaultMaxResults
	}
	n.timeout = DefaultTimeout
	if cfg.Timeout != "" {
		d, err := time.ParseDuration(cfg.Timeout)
		if err != nil || d <= 0 {
			b.Errorf("timeout", "invalid-config", "lit_search node %q: timeout %q is not a positive duration such as \"30s\"", n.name, cfg.Timeout)
		}
		n.timeout = d
	}
	n.query = b.Expr("query", cfg.Query, graph.String)
	if f := check.Field(b, "into", n.into); f != nil {
		switch {
		case f.Type.Kind != graph.List || f.Type.Elem == nil || (f.Type.Elem.Kind != graph.Object && f.Type.Elem.Kind != graph.Any):
			b.Errorf("into", "invalid-config", "lit_search node %q writes evidence objects to %q, declared as %s; declare it as list<object>",
				n.name, n.into, f.Type)
		case f.Reducer != "merge_by_id":
			b.Errorf("into", "invalid-config", "lit_search node %q writes evidence to %q, whose reducer is %q; declare reducer: \"merge_by_id\" so that a repeated search updates evidence by id instead of losing or duplicating it",
				n.name, n.into, reducerName(f.Reducer))
		}
	}
	if n.idsInto != "" {
		if f := check.Field(b, "ids_into", n.idsInto); f != nil && (f.Type.Kind != graph.List || f.Type.Elem == nil || (f.Type.Elem.Kind != graph.String && f.Type.Elem.Kind != graph.Any)) {
			b.Errorf("ids_into", "invalid-config", "lit_search node %q writes evidence ids to %q, declared as %s; declare it as list<string>",
				n.name, n.idsInto, f.Type)
		}
	}
	seen := map[string]bool{}
	for i, s := range cfg.Sources {
		if seen[s] {
			b.Errorf(fmt.Sprintf("sources.%d", i), "invalid-config", "lit_search node %q lists source %q twice", n.name, s)
		}
		seen[s] = true
		n.sources = append(n.sources, s)
	}
	if len(n.sources) == 0 {
		n.sources = append([]string(nil), SourceNames...)
	} else {
		// Results are merged in a fixed order, whatever order the file lists.
		var ordered []string
		for _, s := range SourceNames {
			if seen[s] {
				ordered = append(ordered, s)
			}
		}
		n.sources = ordered
	}
	conf, err := ConfigOf(b.Graph())
	if err != nil {
		b.Errorf("", "invalid-config", "lit_search node %q: %v", n.name, err)
	}
	if b.Failed() {
		return nil, nil
	}
	n.searcher = &Searcher{Config: conf, Client: &http.Client{}}
	return n, nil
}

func reducerName(r string) string {
	if r == "" {
		return "replace"
	}
	return r
}

// sourceResult is one source's outcome.
type sourceResult struct {
	hits []Evidence
	err  error
}

// Run implements node.Node.
func (n *searchNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	v, err := n.query.Eval(in.Scope)
	if err != nil {
		return nil, node.Errorf(CodeInvalidQuery, "lit_search node %q: query %s: %w", in.Node, n.query.Source(), err)
	}
	question, _ := v.(string)
	if strings.TrimSpace(question) == "" {
		return nil, node.Errorf(CodeInvalidQuery, "lit_search node %q: the query %s is empty", in.Node, n.query.Source())
	}
	query := SearchTerms(question)
	results := make([]sourceResult, len(n.sources))
	var wg sync.WaitGroup
	for i, src := range n.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, n.timeout)
			defer cancel()
			hits, err := n.searcher.Search(sctx, src, query, n.max)
			if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("no answer within the timeout of %s: %w", n.timeout, err)
			}
			results[i] = sourceResult{hits: hits, err: err}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lit_search node %q: %w", in.Node, err)
	}

	counts := map[string]any{}
	var errs []any
	var lists [][]Evidence
	var failures []error
	for i, src := range n.sources {
		r := results[i]
		if r.err != nil {
			errs = append(errs, map[string]any{"source": src, "code": CodeSourceError, "message": r.err.Error()})
			failures = append(failures, fmt.Errorf("%s: %w", src, r.err))
			continue
		}
		counts[src] = len(r.hits)
		lists = append(lists, r.hits)
	}
	merged := keepKnown(Merge(lists...), in.State[n.into])
	payload := map[string]any{"query": query, "counts": counts, "total": len(merged)}
	if len(errs) > 0 {
		payload["errors"] = errs
	}
	emit(event.Event{Type: EventType, Payload: payload})
	if len(failures) == len(n.sources) {
		return nil, node.Retryable(CodeSearchFailed, fmt.Errorf("lit_search node %q: every source failed for %q: %w", in.Node, query, errors.Join(failures...)))
	}
	items := make([]any, len(merged))
	ids := make([]any, len(merged))
	for i, e := range merged {
		e.Outcome = Outcome(e.Title, e.Summary)
		items[i] = e.Map()
		ids[i] = e.ID
	}
	up := node.Update{n.into: items}
	if n.idsInto != "" {
		up[n.idsInto] = ids
	}
	return up, nil
}

// keepKnown completes hits with what earlier searches stored for the same id,
// so that a search in which Europe PMC failed does not replace an abstract
// with PubMed's citation line: the longer summary, a known year, and every
// source that ever returned the record are kept.
func keepKnown(hits []Evidence, stored any) []Evidence {
	items, _ := stored.([]any)
	if len(items) == 0 {
		return hits
	}
	known := make(map[string]map[string]any, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if id, _ := m["id"].(string); id != "" {
				known[id] = m
			}
		}
	}
	for i := range hits {
		old, ok := known[hits[i].ID]
		if !ok {
			continue
		}
		e := &hits[i]
		if s, _ := old["summary"].(string); len(strings.TrimSpace(s)) > len(strings.TrimSpace(e.Summary)) {
			e.Summary = s
		}
		if e.Year == 0 {
			switch y := old["year"].(type) {
			case int:
				e.Year = y
			case int64:
				e.Year = int(y)
			case float64:
				e.Year = int(y)
			}
		}
		had, _ := old["sources"].([]any)
		var all []string
		for _, name := range SourceNames {
			if containsString(e.Sources, name) || containsAny(had, name) {
				all = append(all, name)
			}
		}
		e.Sources = all
	}
	return hits
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
