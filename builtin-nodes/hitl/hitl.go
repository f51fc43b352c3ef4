// Package hitl provides the human-in-the-loop node types of ExecutionContract
// graphs: hitl suspends the thread with a form for a pending ecs_request
// contract, and hitl_resume validates the human's answer and completes the
// contract.
//
// A graph routes model → hitl → hitl_resume → model. The hitl node finds the
// first PENDING contract with action_type "ecs_request" (or, when there is
// none, a request object in the declared request_field, for which it creates
// such a contract), moves it to WAITING, and suspends with
// node.InterruptWith: the engine emits an interrupt event and the node also
// emits a "hitl" event carrying the full request (contract_id, title, form
// and the request's other keys). With nothing to ask it routes on.
//
// On resume the engine writes the answer to response_field and runs
// hitl_resume, which checks that a contract is WAITING (else fails with code
// "invalid_state"), checks the answer against the contract's form (every
// field marked required present and non-empty, options respected), and
// writes WAITING → RUNNING → COMPLETED with result set to the answer.
//
// An answer that does not fit the form fails hitl_resume with code
// "invalid_response" naming the missing fields, and the contract stays
// WAITING rather than becoming FAILED: a human's mistake in a form is not a
// failed execution, and the same request can be answered again. A graph
// lets the client answer again by catching the code and routing back to the
// hitl node, which re-asks for a WAITING contract, with "error" in the
// request saying what was wrong with the answer:
//
//	resume: {type: "hitl_resume", config: response_field: "answer",
//	         catch: [{on: ["invalid_response"], to: "ask"}], next: "reason"}
//
// Without such a catch the run ends with the error and the thread stays
// resumable from its last checkpoint.
//
// Forms are objects with a fields list; each field has a name (or key) and
// may set label, type, required and options:
//
//	{fields: [{name: "date", label: "Date", required: true},
//	          {name: "category", options: ["plan", "note"]}]}
package hitl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// EventType is the type of the event carrying the full request.
const EventType = "hitl"

// ActionECSRequest is the action_type of contracts that ask a human.
const ActionECSRequest = "ecs_request"

func init() {
	node.MustRegister(node.Type{
		Name:        "hitl",
		Description: "Suspends the thread with a form for a pending ecs_request contract (PENDING → WAITING).",
		Config: `{
	contracts_field?: *"contracts" | string
	response_field: string
	request_field?: string
	form?: {...}
	title?: string
}`,
		New: newAsk,
	})
	node.MustRegister(node.Type{
		Name:        "hitl_resume",
		Description: "Validates a human's answer against the waiting contract's form and completes it (WAITING → RUNNING → COMPLETED).",
		Config: `{
	contracts_field?: *"contracts" | string
	response_field: string
}`,
		New: newResume,
	})
}

// fields common to both node types.
type common struct {
	name      string
	contracts string
	response  string
}

func (c *common) build(b node.Builder, contracts, response string) {
	c.name, c.contracts, c.response = b.NodeName(), contracts, response
	if c.contracts == "" {
		c.contracts = "contracts"
	}
	if f := check.Field(b, "contracts_field", c.contracts); f != nil && f.Type.Kind != contract.Kind {
		b.Errorf("contracts_field", "invalid-config", "node %q reads ExecutionContracts from %q, which is declared as %s, not contracts",
			c.name, c.contracts, f.Type)
	}
	if response == "" {
		b.Errorf("response_field", "invalid-config", "node %q needs response_field, the state field that receives the answer", c.name)
	} else {
		check.Field(b, "response_field", response)
	}
}

// contracts returns the contracts of the state with the given action type
// and status, in order.
func (c *common) find(state map[string]any, status string) []map[string]any {
	items, _ := state[c.contracts].([]any)
	var out []map[string]any
	for _, item := range items {
		m, ok := item.(map[string]any)
		if ok && m["action_type"] == ActionECSRequest && m["status"] == status {
			out = append(out, m)
		}
	}
	return out
}

type askNode struct {
	common
	request string
	form    map[string]any
	title   node.Template
}

func newAsk(b node.Builder) (node.Node, error) {
	var cfg struct {
		ContractsField string         `json:"contracts_field"`
		ResponseField  string         `json:"response_field"`
		RequestField   string         `json:"request_field"`
		Form           map[string]any `json:"form"`
		Title          *string        `json:"title"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "hitl node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &askNode{request: cfg.RequestField, form: cfg.Form}
	n.build(b, cfg.ContractsField, cfg.ResponseField)
	if n.request != "" {
		if f := check.Field(b, "request_field", n.request); f != nil {
			switch f.Type.Kind {
			case graph.Object, graph.Map, graph.Any:
			default:
				b.Errorf("request_field", "invalid-config", "hitl node %q reads a request object from %q, declared as %s; declare it as object",
					n.name, n.request, f.Type)
			}
		}
	}
	if cfg.Form != nil {
		if _, err := parseForm(cfg.Form); err != nil {
			b.Errorf("form", "invalid-config", "hitl node %q: form: %v", n.name, err)
		}
	}
	if cfg.Title != nil {
		n.title = b.Template("title", *cfg.Title)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Run implements node.Node.
func (n *askNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	var (
		asked  map[string]any
		writes []any
	)
	if pending := n.find(in.State, contract.Pending); len(pending) > 0 {
		asked = pending[0]
	} else if c, ok := n.fromRequestField(in.State); ok {
		asked = c
		writes = append(writes, c)
	} else if waiting := n.find(in.State, contract.Waiting); len(waiting) > 0 {
		// The request is still unanswered (an answer was rejected): ask again,
		// saying what was wrong with the answer.
		payload, _, err := n.payload(in, waiting[0])
		if err != nil {
			return nil, err
		}
		if problem := rejection(payload["form"], in.State[n.response]); problem != "" {
			payload["error"] = problem
		}
		n.emit(in, payload)
		return nil, node.InterruptWith(n.response, payload, nil)
	} else {
		return nil, nil
	}
	payload, waitingEntry, err := n.payload(in, asked)
	if err != nil {
		return nil, err
	}
	writes = append(writes, waitingEntry)
	n.emit(in, payload)
	return nil, node.InterruptWith(n.response, payload, node.Update{n.contracts: writes})
}

// rejection says why an answer does not fit a form ("" when it fits or
// there is no answer).
func rejection(form, answer any) string {
	f, _ := form.(map[string]any)
	fields, err := parseForm(f)
	if answer == nil || err != nil {
		return ""
	}
	if err := validate(fields, answer); err != nil {
		return err.Error()
	}
	return ""
}

func (n *askNode) emit(in *node.Input, payload map[string]any) {
	if in.Emit != nil {
		in.Emit(event.Event{Type: EventType, Payload: maps.Clone(payload)})
	}
}

// fromRequestField builds a PENDING contract for a request object in the
// request field, unless a contract for it exists already. Its id is the
// request's id, else a digest of the request, so that the same request is
// never asked twice.
func (n *askNode) fromRequestField(state map[string]any) (map[string]any, bool) {
	if n.request == "" {
		return nil, false
	}
	req, _ := state[n.request].(map[string]any)
	if len(req) == 0 {
		return nil, false
	}
	id, _ := req["id"].(string)
	if id == "" {
		raw, _ := json.Marshal(req) // map keys are sorted
		sum := sha256.Sum256(raw)
		id = "hitl-" + hex.EncodeToString(sum[:6])
	}
	items, _ := state[n.contracts].([]any)
	for _, item := range items {
		if m, ok := item.(map[string]any); ok && m["id"] == id {
			return nil, false
		}
	}
	args := maps.Clone(req)
	delete(args, "id")
	return map[string]any{"id": id, "action_type": ActionECSRequest, "status": contract.Pending, "arguments": args}, true
}

// payload builds the request shown to the human and the contract entry that
// moves it to WAITING, recording the effective title and form.
func (n *askNode) payload(in *node.Input, asked map[string]any) (map[string]any, map[string]any, error) {
	id, _ := asked["id"].(string)
	if id == "" {
		return nil, nil, node.Errorf("invalid_contract", "hitl node %q: an ecs_request contract has no id: %v", n.name, asked)
	}
	args, _ := asked["arguments"].(map[string]any)
	payload := make(map[string]any, len(args)+4)
	maps.Copy(payload, args)
	title := firstString(asked["title"], args["title"])
	if title == "" && n.title != nil {
		t, err := n.title.Render(in.Scope)
		if err != nil {
			return nil, nil, node.Errorf("template_error", "hitl node %q: title: %w", n.name, err)
		}
		title = t
	}
	form := firstMap(asked["form"], args["form"], n.form)
	if form == nil {
		form = map[string]any{"fields": []any{}}
	}
	if _, err := parseForm(form); err != nil {
		return nil, nil, node.Errorf("invalid_contract", "hitl node %q: contract %q: form: %w", n.name, id, err)
	}
	payload["contract_id"] = id
	payload["title"] = title
	payload["form"] = form
	payload["field"] = n.response
	// The form's fields at the top too, with type "form": the shape of the
	// vision node's memory form, so one client renders both.
	if _, has := payload["fields"]; !has && form["fields"] != nil {
		payload["fields"] = form["fields"]
	}
	if _, has := payload["type"]; !has {
		payload["type"] = "form"
	}
	entry := map[string]any{"id": id, "status": contract.Waiting, "title": title, "form": form}
	return payload, entry, nil
}

func firstString(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func firstMap(vs ...any) map[string]any {
	for _, v := range vs {
		if m, ok := v.(map[string]any); ok && m != nil {
			return m
		}
	}
	return nil
}

type resumeNode struct {
	common
}

func newResume(b node.Builder) (node.Node, error) {
	var cfg struct {
		ContractsField string `json:"contracts_field"`
		ResponseField  string `json:"response_field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "hitl_resume node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &resumeNode{}
	n.build(b, cfg.ContractsField, cfg.ResponseField)
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Run implements node.Node.
func (n *resumeNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	waiting := n.find(in.State, contract.Waiting)
	if len(waiting) == 0 {
		return nil, node.Errorf("invalid_state", "no contract is waiting for a response (node %q, field %q)", n.name, n.contracts)
	}
	answered := waiting[0]
	id, _ := answered["id"].(string)
	response := in.State[n.response]
	form, _ := answered["form"].(map[string]any)
	fields, err := parseForm(form)
	if err != nil {
		return nil, node.Errorf("invalid_contract", "contract %q: form: %w", id, err)
	}
	if err := validate(fields, response); err != nil {
		return nil, node.Errorf("invalid_response", "response to contract %q in %q: %w; the contract is still WAITING", id, n.response, err)
	}
	return node.Update{n.contracts: []any{
		map[string]any{"id": id, "status": contract.Running},
		map[string]any{"id": id, "status": contract.Completed, "result": response},
	}}, nil
}

// field is one field of a form.
type field struct {
	name     string
	required bool
	options  []any
}

// parseForm reads a form's fields: a list of objects with name (or key), or
// a map from name to field object.
func parseForm(form map[string]any) ([]field, error) {
	if form == nil {
		return nil, nil
	}
	raw, has := form["fields"]
	if !has || raw == nil {
		return nil, nil
	}
	var out []field
	add := func(name string, spec map[string]any) error {
		if name == "" {
			return fmt.Errorf("a field has no name (set name or key)")
		}
		f := field{name: name}
		if r, ok := spec["required"]; ok {
			b, isBool := r.(bool)
			if !isBool {
				return fmt.Errorf("field %q: required must be true or false, got %v", name, r)
			}
			f.required = b
		}
		if o, ok := spec["options"]; ok {
			list, isList := o.([]any)
			if !isList {
				return fmt.Errorf("field %q: options must be a list, got %v", name, o)
			}
			f.options = list
		}
		out = append(out, f)
		return nil
	}
	switch fs := raw.(type) {
	case []any:
		for i, item := range fs {
			spec, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("fields[%d] must be an object, got %v", i, item)
			}
			if err := add(firstString(spec["name"], spec["key"]), spec); err != nil {
				return nil, fmt.Errorf("fields[%d]: %w", i, err)
			}
		}
	case map[string]any:
		names := make([]string, 0, len(fs))
		for k := range fs {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			spec, _ := fs[name].(map[string]any)
			if err := add(name, spec); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("fields must be a list or a map, got %v", raw)
	}
	return out, nil
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// validate checks a response against a form's fields.
func validate(fields []field, response any) error {
	if empty(response) {
		return fmt.Errorf("no response was given")
	}
	if len(fields) == 0 {
		return nil
	}
	answers, ok := response.(map[string]any)
	if !ok {
		return fmt.Errorf("the form has fields, so the response must be an object, got %s", graph.DescribeValue(response))
	}
	var missing, problems []string
	for _, f := range fields {
		v, has := answers[f.name]
		if !has || empty(v) {
			if f.required {
				missing = append(missing, f.name)
			}
			continue
		}
		if len(f.options) > 0 && !allowed(f.options, v) {
			problems = append(problems, fmt.Sprintf("field %q: %v is not one of %s", f.name, v, describeOptions(f.options)))
		}
	}
	if len(missing) > 0 {
		problems = append([]string{"missing required fields: " + strings.Join(missing, ", ")}, problems...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func optionValue(o any) any {
	if m, ok := o.(map[string]any); ok {
		return m["value"]
	}
	return o
}

func allowed(options []any, v any) bool {
	for _, o := range options {
		if fmt.Sprint(optionValue(o)) == fmt.Sprint(v) {
			return true
		}
	}
	return false
}

func describeOptions(options []any) string {
	parts := make([]string, len(options))
	for i, o := range options {
		parts[i] = fmt.Sprint(optionValue(o))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
