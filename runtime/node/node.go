// Package node defines what a node type is, the Registry of node types and
// of the services their packages share, and the typed store of those
// services (Key, Extra).
//
// A node type is Go code: a name, a one-line description, a CUE schema for its
// config, and a constructor. Packages under builtin-nodes/ register their types in
// init into the default Registry (as Benthos's plugins register into its
// global Environment); the runtime never imports them. An embedder or a test
// that wants its own set of node types builds a Registry value (NewRegistry,
// or Default().Clone()) and hands it to loading and compiling; the engine
// takes it from the compiled graph. At load time the compiler
// hands each node's config to the type's constructor through a Builder, which
// decodes it strictly and compiles its expressions and templates against the
// graph's typed state, reporting problems at the config value's file:line:col.
package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/store"
)

// Update is what a node writes to state: field name to value. Each value is
// merged into state by the field's reducer.
type Update map[string]any

// Node is a configured node instance, built once per compiled graph and run
// concurrently by many threads; implementations must not keep per-run state.
type Node interface {
	Run(ctx context.Context, in *Input) (Update, error)
}

// Func adapts a function to the Node interface.
type Func func(ctx context.Context, in *Input) (Update, error)

// Run calls f.
func (f Func) Run(ctx context.Context, in *Input) (Update, error) { return f(ctx, in) }

// Input is what a node sees when it runs.
type Input struct {
	// Node is the node's name in the graph.
	Node string
	// ThreadID identifies the conversation the run belongs to.
	ThreadID string
	// RunID identifies the run.
	RunID string
	// Step is the super-step number.
	Step int
	// Attempt is 1 on the first try, 2 on the first retry, and so on.
	Attempt int
	// State is the state snapshot the step started from. It must not be modified.
	State map[string]any
	// Scope is the environment expressions and templates evaluate in: every state
	// field, the graph's vars, "state" (the whole state) and, in a map fan-out
	// task, the item under its declared name.
	Scope map[string]any
	// Item is the fan-out item for a task started by a map route, else nil.
	Item any
	// Emit sends an event to the run's stream, tagged with this node's name.
	Emit event.Sink
	// Services gives access to the run's long-term store and other services.
	Services *Services
	// CallRetry is how the node's model and tool calls are retried on a
	// transient failure: the node's call_retry, else the graph's
	// defaults.call_retry, else nil (the calling package's default).
	CallRetry *graph.RetryPolicy
	// Cache is the node cache of this node, for node types that cache their
	// own work under keys they compute; nil when the run has no store.
	Cache Cache
}

// Cache is the node cache as one node sees it: updates stored under keys,
// per graph and node, in the same place and with the same rules as the
// updates of a `cache: {key, ttl}` policy (an update stored by another type
// or config of the node is not reused; a reuse sends a cache_hit event).
type Cache interface {
	// Lookup returns the update stored under key, and whether there is one.
	Lookup(ctx context.Context, key any) (Update, bool, error)
	// Store stores upd under key.
	Store(ctx context.Context, key any, upd Update) error
}

// Services are shared facilities a node can use.
type Services struct {
	// Store is the long-term memory store; nil when the run has none.
	Store store.Store
	// Extra holds the services of node packages (models, tool clients),
	// each under the Key its package declares: read them with Key.Get.
	Extra Extra
}

// Error is a node failure with a code that retry and catch policies match on.
type Error struct {
	// Code is a short stable identifier such as "timeout" or "tool_error".
	Code string
	// Retryable says whether trying again may succeed.
	Retryable bool
	Err       error
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Code, e.Err) }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a non-retryable node error with a code.
func Errorf(code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Retryable builds a retryable node error with a code.
func Retryable(code string, err error) error {
	return &Error{Code: code, Retryable: true, Err: err}
}

// CodeOf returns the code of a node error: the Code of an *Error in the chain,
// "timeout" for an exceeded deadline, "canceled" for cancellation, else "error".
func CodeOf(err error) string {
	var ne *Error
	switch {
	case errors.As(err, &ne):
		return ne.Code
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// InterruptRequest is returned (as an error) by a node that suspends the thread
// for human input. The value supplied on resume is written to Field and the run
// continues along the node's routes; the node itself does not run again.
type InterruptRequest struct {
	// Field is the state field the resume value is written to.
	Field string `json:"field"`
	// Payload describes what is asked (a question, a form).
	Payload map[string]any `json:"payload,omitempty"`
	// Update is written to state, through the reducers, before the thread
	// suspends (e.g. the record of the request moving to a waiting status).
	Update Update `json:"update,omitempty"`
}

// Error implements error.
func (r *InterruptRequest) Error() string { return "interrupt: waiting for " + r.Field }

// Interrupt suspends the thread, asking for a value to be written to field.
func Interrupt(field string, payload map[string]any) error {
	return &InterruptRequest{Field: field, Payload: payload}
}

// InterruptWith suspends the thread like Interrupt, after writing update.
func InterruptWith(field string, payload map[string]any, update Update) error {
	return &InterruptRequest{Field: field, Payload: payload, Update: update}
}

// Preparer is implemented by nodes that need run-time configuration (a model,
// a tool server) before a run starts. Prepare fails with a message that says
// how to configure what is missing; a caller treats that as a configuration
// error, not as a failed run.
type Preparer interface {
	Prepare(ctx context.Context, services *Services) error
}

// Closer is implemented by nodes that hold resources of their own (client
// sessions, pollers, connections). The engine calls Close once per node,
// prepared or not: when Preflight fails it closes the nodes it prepared (the
// failing one included) at once, and Engine.Close closes the others (when a
// graphctl command ends, when graphctl serve shuts down). graphctl serve keeps serving a graph whose Prepare failed, so a Run
// after Close must fail with a clear error rather than panic.
type Closer interface {
	Close(ctx context.Context) error
}

// UsageEvent is the event type a node emits to report resource use (such as
// model tokens); the engine adds its numeric payload fields to the node's
// entry in the checkpoint's trace.
const UsageEvent = "usage"

// Type is a registered node type.
type Type struct {
	// Name is what graph files write in a node's type.
	Name string
	// Description is one line for `graphctl nodes`.
	Description string
	// Config is the CUE schema of the config block, written as a CUE struct,
	// e.g. `{text: string, role?: *"assistant" | "system"}`. It is closed: unknown
	// keys are errors. An empty Config means the type takes no config.
	Config string
	// New builds a node from its config. It reports problems through the Builder
	// and returns a nil Node (with a nil error) when it reported any.
	New func(b Builder) (Node, error)
}

// Builder is handed to a node type's constructor. Every method that takes a path
// takes it relative to the node's config ("fields.model.pattern"); problems are
// reported at that value's position in the user's file.
type Builder interface {
	// NodeName is the node's name in the graph.
	NodeName() string
	// Graph is the whole graph being compiled.
	Graph() *graph.Graph
	// Config is the node's config as decoded JSON.
	Config() map[string]any
	// Decode decodes the config into v (a pointer to a struct with json tags).
	Decode(v any) error
	// Expr compiles an expression against the graph's typed state. want is the
	// kind the result must have ("" for any). It returns nil after reporting a problem.
	Expr(path, src string, want graph.Kind) Expr
	// Template compiles a text template with ${expr} interpolations. It returns
	// nil after reporting a problem.
	Template(path, src string) Template
	// Errorf reports an error at a config path with a stable code.
	Errorf(path, code, format string, args ...any)
	// Warnf reports a warning at a config path.
	Warnf(path, code, format string, args ...any)
	// Failed reports whether any error has been reported for this node.
	Failed() bool
}

// Expr is a compiled expression.
type Expr interface {
	Eval(scope map[string]any) (any, error)
	Source() string
}

// Template is a compiled template.
type Template interface {
	Render(scope map[string]any) (string, error)
	Source() string
}
