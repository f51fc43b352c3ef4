// Package graphtest runs the declarative test cases of a graph: the engine of
// `graphctl test`. It plays the part Benthos's config unit tests play for
// pipelines: a graph's behaviour is specified beside it, in the same language,
// and checked without writing Go.
//
// Cases live in a graph's tests block or in <graph>_test.cue beside it:
//
//	tests: [{
//		name: "install asks for the model"
//		mocks: {lookup: {update: {part: "PS3406971"}}}        // replace a node: update, error or interrupt
//		llm: ["scripted model reply", ...]                    // for model nodes, under the registry's ScriptKey
//		turns: [{
//			input: "Install PS3406971"                        // a chat message; an object sets fields
//			expect: {
//				status: "completed"
//				path: ["extract", "route_goal", "check_requirements", "ask_info"]
//				state: {part: "PS3406971"}
//				reply: "model number"
//			}
//		}, {
//			restart: true                                     // a new process: reopen the database
//			input: "WDT780SAEM1"
//			expect: visits: ["install"]
//		}]
//	}]
//
// A turn sends input (a string is a user chat message, an object writes state
// fields) or resume (the answer to the pending interrupt, chosen by id or node
// name with interrupt when several are pending). restart closes and reopens
// the case's database and builds a new engine first. expect checks the turn:
// status, the exact node path, nodes visited or not, state fields equal (deep,
// after JSON normalization) or containing a substring or items, boolean
// expressions over the state, the last assistant reply of the turn, events of
// the turn (payload as a subset), and the run's error text. A run error nobody
// expected fails the turn.
//
// Every case runs on its own thread in its own temporary directory with a real
// Badger database, which is removed afterwards, so cases are isolated and a
// restart really reads back what was written to disk.
//
// Check validates cases without running them (so `graphctl validate` reports
// bad tests at their file:line:col), Run runs them, and Report prints results
// in the shape of `go test` output.
package graphtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/jackc/pgx/v5"
)

// Options tune a test run.
type Options struct {
	// Filter selects the cases to run by name; nil runs every case.
	Filter *regexp.Regexp
	// Verbose records a log line per turn (what was sent, the path, the
	// status and the reply) in CaseResult.Log.
	Verbose bool
	// Extra services handed to nodes, as engine.Options.Extra. A case's llm
	// list (its scripted model replies) is added under the script key of the
	// graph's registry (node.Registry.ScriptKey), which the package of the
	// model-calling node types sets.
	Extra node.Extra
	// TempDir is where the per-case data directories are created; empty
	// means the system's temporary directory.
	TempDir string
	// Postgres, when set, runs every case on this PostgreSQL database
	// instead of a Badger data directory: each case in a schema of its
	// own, dropped when the case ends.
	Postgres string
}

// CaseResult is the outcome of one test case.
type CaseResult struct {
	Name   string
	Passed bool
	// Failures name the turn and the expectation, with expected and actual
	// values, one failed expectation per item.
	Failures []string
	// Log holds a line per turn when Options.Verbose is set.
	Log      []string
	Duration time.Duration
	// Pos is where the case is declared.
	Pos diag.Pos
}

// Run runs the test cases of g that match opts.Filter, in declaration order.
// A case whose declaration has problems (see Check) fails with them without
// running.
func Run(ctx context.Context, g *compile.Graph, opts Options) []CaseResult {
	cases, diags := parseCases(g)
	var results []CaseResult
	for _, tc := range cases {
		if opts.Filter != nil && !opts.Filter.MatchString(tc.name) {
			continue
		}
		start := time.Now()
		res := CaseResult{Name: tc.name, Pos: tc.pos}
		if problems := caseDiags(diags, tc.path); len(problems) > 0 {
			for _, d := range problems {
				res.Failures = append(res.Failures, "invalid test: "+d.String())
			}
		} else {
			cr := &caseRun{g: g, tc: tc, opts: opts, res: &res}
			cr.run(ctx)
		}
		res.Passed = len(res.Failures) == 0
		res.Duration = time.Since(start)
		results = append(results, res)
	}
	return results
}

// caseDiags returns the diagnostics about the case at path.
func caseDiags(diags diag.List, path string) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, d := range diags {
		if d.Severity == diag.Error && (d.Path == path || strings.HasPrefix(d.Path, path+".")) {
			out = append(out, d)
		}
	}
	return out
}

// caseRun is the state of one running case.
type caseRun struct {
	g    *compile.Graph
	tc   *testCase
	opts Options
	res  *CaseResult

	dir    string
	schema string // the case's PostgreSQL schema, with Options.Postgres
	db     caseDB
	eng    *engine.Engine
	thread string
}

func (c *caseRun) failf(format string, args ...any) {
	c.res.Failures = append(c.res.Failures, fmt.Sprintf(format, args...))
}

func (c *caseRun) logf(format string, args ...any) {
	if c.opts.Verbose {
		c.res.Log = append(c.res.Log, fmt.Sprintf(format, args...))
	}
}

func (c *caseRun) run(ctx context.Context) {
	dir, err := os.MkdirTemp(c.opts.TempDir, "graphtest-")
	if err != nil {
		c.failf("create the case's data directory: %v", err)
		return
	}
	c.dir = dir
	c.thread = "test-" + sanitize(c.tc.name)
	if c.opts.Postgres != "" {
		c.schema = "graphtest_" + strings.ToLower(rand.Text())
	}
	defer func() {
		if err := c.dropSchema(); err != nil {
			c.failf("drop the case's PostgreSQL schema %s: %v", c.schema, err)
		}
		if err := c.close(); err != nil {
			c.failf("close the case's database: %v", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			c.failf("remove the case's data directory %s: %v", dir, err)
		}
	}()
	if err := c.open(); err != nil {
		c.failf("%v", err)
		return
	}
	// The nodes are prepared as `graphctl run` and serve prepare them, so a
	// node that cannot be configured fails the case with the same message.
	if err := c.eng.Preflight(ctx); err != nil {
		c.failf("prepare the graph's nodes: %v", err)
		return
	}
	for _, t := range c.tc.turns {
		if err := ctx.Err(); err != nil {
			c.failf("turn %d: not run: %v", t.index, err)
			return
		}
		if t.restart {
			if err := c.close(); err != nil {
				c.failf("turn %d: restart: close the database: %v", t.index, err)
				return
			}
			if err := c.open(); err != nil {
				c.failf("turn %d: restart: %v", t.index, err)
				return
			}
		}
		if !c.turn(ctx, t) {
			return
		}
	}
}

// open opens the case's database and builds a fresh engine over it, as a new
// process would.
func (c *caseRun) open() error {
	extra := c.opts.Extra
	if key, ok := c.g.Registry.OrDefault().ScriptKey(); ok && c.tc.llm != nil {
		// Check reported a case with an llm list on a registry without a
		// script key: such a case does not run.
		extra = key.Bind(extra, c.tc.llm)
	}
	var db caseDB
	var err error
	if c.schema != "" {
		db, err = postgres.Open(context.Background(), c.opts.Postgres, postgres.Options{Schema: c.schema})
	} else {
		db, err = badger.Open(c.dir, badger.Options{})
	}
	if err != nil {
		return fmt.Errorf("open the case's database: %w", err)
	}
	c.db = db
	overrides := make(map[string]node.Node, len(c.tc.mocks))
	for name, m := range c.tc.mocks {
		overrides[name] = m.node()
	}
	c.eng = engine.New(c.g, db.Checkpointer(), engine.Options{Store: db.Store(), Extra: extra, Overrides: overrides})
	return nil
}

// caseDB is the storage a case runs on: Badger, or PostgreSQL.
type caseDB interface {
	Checkpointer() checkpoint.Checkpointer
	Store() store.Store
	Close() error
}

// dropSchema drops the case's PostgreSQL schema, when it has one, while the
// case's database is still open.
func (c *caseRun) dropSchema() error {
	pg, ok := c.db.(*postgres.DB)
	if !ok {
		return nil
	}
	_, err := pg.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{c.schema}.Sanitize()+" CASCADE")
	return err
}

func (c *caseRun) close() error {
	if c.db == nil {
		return nil
	}
	err := errors.Join(c.eng.Close(), c.db.Close())
	c.db, c.eng = nil, nil
	return err
}

// node returns the implementation that stands in for the mocked node.
func (m *mock) node() node.Node {
	return node.Func(func(context.Context, *node.Input) (node.Update, error) {
		switch {
		case m.isErr:
			return nil, node.Errorf(m.errCode, "%s", m.errMsg)
		case m.interrupt:
			return nil, node.Interrupt(m.field, maps.Clone(m.payload))
		}
		return node.Update(deepCopy(m.update).(map[string]any)), nil
	})
}

// recorder collects a turn's events; nodes of one step emit concurrently.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) sink(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// turn runs one turn and checks its expectations. It reports whether the
// case can go on.
func (c *caseRun) turn(ctx context.Context, t *turn) bool {
	req := engine.Request{ThreadID: c.thread}
	sent := ""
	switch {
	case t.isText:
		in, err := engine.TextInput(c.g, t.text)
		if err != nil {
			c.failf("turn %d: %v", t.index, err)
			return false
		}
		req.Input = in
		sent = fmt.Sprintf("input %q", t.text)
	case t.hasInput:
		req.Input = deepCopy(t.input).(map[string]any)
		sent = "input " + compact(t.input)
	case t.hasResume:
		r, err := c.resume(ctx, t)
		if err != nil {
			c.failf("turn %d: %v", t.index, err)
			return false
		}
		req.Resume = r
		sent = "resume " + compact(t.resume)
	}
	before, err := c.messageCount(ctx)
	if err != nil {
		c.failf("turn %d: read the thread before the turn: %v", t.index, err)
		return false
	}
	rec := &recorder{}
	res, runErr := c.eng.Run(ctx, req, rec.sink)
	if res == nil {
		res = &engine.Result{ThreadID: c.thread, Status: engine.StatusError, Err: runErr}
	}
	out := &outcome{res: res, events: rec.events, reply: c.lastReply(res, before, rec.events)}
	c.logf("turn %d: %s → %s via %s%s", t.index, sent, res.Status, pathText(res.Path), replyText(out.reply))
	failures := check(c.g, t, out)
	for _, f := range failures {
		c.failf("%s", f)
	}
	return true
}

// resume builds the resume request of a turn, choosing the interrupt named by
// the turn among the thread's pending ones.
func (c *caseRun) resume(ctx context.Context, t *turn) (*engine.Resume, error) {
	r := &engine.Resume{Value: deepCopy(t.resume)}
	if t.interrupt == "" {
		return r, nil
	}
	snap, err := c.eng.Checkpointer().Latest(ctx, c.thread)
	if err != nil {
		return nil, fmt.Errorf("resume: read the thread's pending interrupts: %w", err)
	}
	var ids []string
	for _, in := range snap.Interrupts {
		if in.ID == t.interrupt || in.Node == t.interrupt {
			r.InterruptID = in.ID
			return r, nil
		}
		ids = append(ids, in.ID+" (node "+in.Node+")")
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("resume: interrupt %q: the thread has no pending interrupt", t.interrupt)
	}
	return nil, fmt.Errorf("resume: no pending interrupt has id or node %q; pending: %s", t.interrupt, strings.Join(ids, ", "))
}

// messagesField is the field text input and replies go to, or "".
func messagesField(g *compile.Graph) string {
	in, err := engine.TextInput(g, "")
	if err != nil {
		return ""
	}
	for k := range in {
		return k
	}
	return ""
}

// messageCount is the length of the thread's messages before a turn.
func (c *caseRun) messageCount(ctx context.Context) (int, error) {
	field := messagesField(c.g)
	if field == "" {
		return 0, nil
	}
	snap, err := c.eng.Checkpointer().Latest(ctx, c.thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := decodeBlob(snap.Values[field])
	if err != nil {
		return 0, fmt.Errorf("messages field %q: %w", field, err)
	}
	list, _ := v.([]any)
	return len(list), nil
}

// lastReply is the content of the last assistant message the turn added to
// the messages field; without a messages field, the last text event.
func (c *caseRun) lastReply(res *engine.Result, before int, events []event.Event) *string {
	if field := messagesField(c.g); field != "" {
		list, _ := normalize(res.State[field]).([]any)
		for i := len(list) - 1; i >= before && i >= 0; i-- {
			m, _ := list[i].(map[string]any)
			if m["role"] == "assistant" {
				s, _ := m["content"].(string)
				return &s
			}
		}
		return nil
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == event.Text {
			s, _ := events[i].Payload["content"].(string)
			return &s
		}
	}
	return nil
}

func pathText(path []string) string {
	if len(path) == 0 {
		return "(no nodes)"
	}
	return strings.Join(path, " → ")
}

func replyText(reply *string) string {
	if reply == nil {
		return ""
	}
	s := strings.ReplaceAll(*reply, "\n", " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return fmt.Sprintf("; reply %q", s)
}

var unsafeThreadChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func sanitize(name string) string {
	return strings.Trim(unsafeThreadChars.ReplaceAllString(name, "_"), "_")
}
