package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
)

// printer writes a run's events: JSON Lines, or text for people. Text goes to
// w as it streams (tokens inline, a line finished at the end of each message);
// notes, node progress and the closing hint go to errw.
type printer struct {
	mu     sync.Mutex
	w      io.Writer
	errw   io.Writer
	asJSON bool
	// midLine is true while streamed text has not ended with a newline.
	midLine bool
	// interactive is true in the chat loop, where the next line answers an interrupt.
	interactive bool
	// progress prints a "▸ node" line on errw as each node starts (when
	// errw is a terminal).
	progress bool
	// cmd describes the command line, for the hints that say how to go on.
	cmd hintCommand
}

// hintCommand is what a hint needs to spell out a working command.
type hintCommand struct {
	graphPath string
	graph     *compile.Graph
	// flags are the options the next command must repeat (--data-dir, --llm, …).
	flags []string
}

func newPrinter(w, errw io.Writer, asJSON bool) *printer {
	return &printer{w: w, errw: errw, asJSON: asJSON, progress: isTerminal(errw)}
}

// hints sets what the printer's hints name: the graph file as given and the
// options a following command must repeat.
func (p *printer) hints(graphPath string, g *compile.Graph, f runFlags) *printer {
	var flags []string
	if f.dataDir != "" {
		flags = append(flags, "--data-dir", f.dataDir)
	}
	if f.postgres != "" {
		pg := f.postgres
		if u, err := url.Parse(pg); err == nil && u.User != nil {
			if _, hasPassword := u.User.Password(); hasPassword {
				pg = "URL" // never print a password; the user knows the URL
			}
		}
		flags = append(flags, "--postgres", pg)
	}
	if f.llm != "" {
		flags = append(flags, "--llm", f.llm)
	}
	p.cmd = hintCommand{graphPath: graphPath, graph: g, flags: flags}
	return p
}

func (p *printer) event(ev event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asJSON {
		if ev.Type == event.Done {
			return // printed by done with the final state
		}
		p.writeJSON(ev)
		return
	}
	switch ev.Type {
	case event.NodeStart:
		p.endLine()
		if p.progress {
			if ev.Namespace != "" {
				fmt.Fprintf(p.errw, "▸ [%s] %s\n", ev.Namespace, ev.Node)
			} else {
				fmt.Fprintf(p.errw, "▸ %s\n", ev.Node)
			}
		}
	case event.NodeEnd:
		p.endLine() // a message streamed by the node is complete
	case event.Text:
		content, _ := ev.Payload["content"].(string)
		if piece, ok := deltaOf(ev.Payload, content); ok {
			if piece == "" {
				return
			}
			fmt.Fprint(p.w, piece)
			p.midLine = !strings.HasSuffix(piece, "\n")
			return
		}
		p.endLine()
		fmt.Fprintln(p.w, content)
	case event.Interrupt:
		if ev.Namespace != "" {
			return // the graph that was run reports its subgraphs' interrupts as its own
		}
		p.endLine()
		payload, _ := ev.Payload["payload"].(map[string]any)
		msg := firstString(payload, "message", "title", "question")
		switch {
		case msg != "":
		case ev.Payload["field"] != nil && ev.Payload["field"] != "":
			msg = fmt.Sprintf("waiting for a value of %v", ev.Payload["field"])
		default:
			msg = "waiting for input"
		}
		fmt.Fprintf(p.w, "? %s  [interrupt %v]\n", msg, ev.Payload["id"])
		p.printForm(payload["form"])
	case event.Done:
		// A breakpoint asks nothing: the run says where it stopped.
		if b, ok := ev.Payload["breakpoint"].(map[string]any); ok {
			nodes, _ := b["nodes"].([]string)
			p.endLine()
			fmt.Fprintf(p.w, "· stopped %v node %s (--interrupt-%v)\n", b["when"], strings.Join(nodes, ", "), b["when"])
		}
	case "emotion":
		p.endLine()
		fmt.Fprintf(p.errw, "· emotion: %v (%v)\n", ev.Payload["primary"], ev.Payload["confidence"])
	case "extract_fallback":
		p.endLine()
		fmt.Fprintf(p.errw, "note: the model could not extract (%v); the rules did\n", ev.Payload["error"])
	case "memory_stored":
		p.endLine()
		fmt.Fprintf(p.errw, "· remembered: %v\n", ev.Payload["keys"])
	case event.Error:
		p.endLine()
		if caught, ok := ev.Payload["caught_by"]; ok {
			fmt.Fprintf(p.errw, "note: node %v failed (%v), handled by %v\n", ev.Payload["node"], ev.Payload["message"], caught)
			return
		}
		fmt.Fprintf(p.errw, "error: %v\n", ev.Payload["message"])
	case "tool_result":
		p.endLine()
		fmt.Fprintf(p.errw, "· tool %v: %v\n", ev.Payload["tool"], ev.Payload["status"])
	}
}

// deltaOf returns the streamed piece of a text event: its content when
// "delta" is true (as model nodes send), or "delta" itself when it is the
// text. ok is false for a whole message.
func deltaOf(payload map[string]any, content string) (string, bool) {
	switch d := payload["delta"].(type) {
	case bool:
		return content, d
	case string:
		return d, true
	}
	return "", false
}

// printForm lists the fields of an interrupt's form, one per line.
func (p *printer) printForm(form any) {
	f, _ := form.(map[string]any)
	fields, _ := f["fields"].([]any)
	if len(fields) == 0 {
		if form != nil {
			b, _ := json.Marshal(form)
			fmt.Fprintf(p.w, "  form: %s\n", b)
		}
		return
	}
	for _, item := range fields {
		field, _ := item.(map[string]any)
		label := firstString(field, "label", "name")
		req := ""
		if r, _ := field["required"].(bool); r {
			req = ", required"
		}
		fmt.Fprintf(p.w, "  %v: %s (%v%s)\n", field["name"], label, field["type"], req)
	}
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func (p *printer) endLine() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

func (p *printer) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(event.Event{Type: event.Error, Payload: map[string]any{"message": "encode event: " + err.Error()}})
	}
	p.w.Write(append(b, '\n'))
}

// done prints the end of a run: in text, a hint with the command that goes on
// from where the thread now is (read back from its checkpoints).
func (p *printer) done(ctx context.Context, eng *engine.Engine, res *engine.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asJSON {
		payload := map[string]any{
			"thread_id": res.ThreadID, "run_id": res.RunID, "status": res.Status,
			"checkpoint_id": res.CheckpointID, "state": res.State,
		}
		if res.Err != nil {
			payload["error"] = res.Err.Error()
		}
		if len(res.Interrupts) > 0 {
			payload["interrupts"] = res.Interrupts
		}
		if b := res.Breakpoint; b != nil && res.Status == engine.StatusInterrupted {
			payload["breakpoint"] = map[string]any{"when": b.When, "nodes": b.Nodes}
		}
		p.writeJSON(event.Event{Type: event.Done, Payload: payload})
		return
	}
	p.endLine()
	if p.interactive {
		if res.Status == engine.StatusInterrupted {
			fmt.Fprintln(p.errw, "[your next line answers]")
		}
		return
	}
	for _, line := range p.hint(ctx, eng, res) {
		fmt.Fprintln(p.errw, line)
	}
}

// hint says where the thread is after a run and the command that continues
// it: answering its interrupt, running again the nodes a failure stopped, or
// a new turn. It never suggests a resume that would fail or do nothing.
func (p *printer) hint(ctx context.Context, eng *engine.Engine, res *engine.Result) []string {
	thread := res.ThreadID
	var snap *checkpoint.Snapshot
	if eng != nil {
		s, err := eng.Checkpointer().Latest(ctx, thread)
		switch {
		case err == nil:
			snap = s
		case !errors.Is(err, checkpoint.ErrNotFound):
			return []string{fmt.Sprintf("[thread %s: its state cannot be read: %v]", thread, err)}
		}
	}
	if snap == nil {
		if res.Status == engine.StatusError {
			return []string{fmt.Sprintf("[nothing was saved: thread %s does not exist; fix the problem and run again]", thread)}
		}
		return []string{fmt.Sprintf("[thread %s]", thread)}
	}
	if waiting := engine.WaitingInterrupts(&snap.Checkpoint); len(waiting) > 0 {
		what := "waits for input"
		if res.Status == engine.StatusError {
			what = "still waits for input"
		}
		var out []string
		for _, in := range waiting {
			args := []string{"resume", p.cmd.graphPath, "--thread", thread}
			if len(waiting) > 1 {
				args = append(args, "--interrupt", in.ID)
			}
			args = append(args, "--value", "ANSWER")
			line := fmt.Sprintf("[thread %s %s: %s", thread, what, p.command(args))
			if allowed := p.allowed(in.Field); allowed != "" {
				line += "  (ANSWER: " + allowed + ")"
			}
			out = append(out, line+"]")
		}
		return out
	}
	if b := engine.StoppedAt(&snap.Checkpoint); b != nil && res.Status != engine.StatusError {
		// A breakpoint takes no answer: resume goes on from it.
		return []string{fmt.Sprintf("[thread %s stopped %s node %s: %s goes on]", thread, b.When, strings.Join(b.Nodes, ", "),
			p.command([]string{"resume", p.cmd.graphPath, "--thread", thread}))}
	}
	if len(snap.Next) > 0 || len(snap.Pending) > 0 {
		var nodes []string
		for _, t := range snap.Next {
			nodes = appendOnce(nodes, t.Node)
		}
		what := "the nodes that had not finished"
		if len(nodes) > 0 {
			what = strings.Join(nodes, ", ")
		}
		if res.Status == engine.StatusError {
			return []string{fmt.Sprintf("[thread %s stopped; after fixing the cause, %s runs %s again]",
				thread, p.command([]string{"resume", p.cmd.graphPath, "--thread", thread}), what)}
		}
		return []string{fmt.Sprintf("[thread %s has unfinished work: %s runs %s]", thread,
			p.command([]string{"resume", p.cmd.graphPath, "--thread", thread}), what)}
	}
	next := p.command(append([]string{"run", p.cmd.graphPath, "--thread", thread}, p.inputArgs()...))
	if res.Status == engine.StatusError {
		return []string{fmt.Sprintf("[thread %s is as it was before this run; a new turn: %s]", thread, next)}
	}
	return []string{fmt.Sprintf("[thread %s; next turn: %s]", thread, next)}
}

// inputArgs is the input of a new turn: a chat message when the graph has a
// messages field, else state fields.
func (p *printer) inputArgs() []string {
	if g := p.cmd.graph; g != nil {
		if _, err := engine.TextInput(g, "x"); err != nil {
			return []string{"--input", `'{"FIELD": VALUE}'`}
		}
	}
	return []string{"-i", `"MESSAGE"`}
}

// allowed lists the values an interrupt's field accepts, when it has an enum.
func (p *printer) allowed(field string) string {
	if p.cmd.graph == nil {
		return ""
	}
	f, ok := p.cmd.graph.Fields[field]
	if !ok {
		return ""
	}
	if len(f.Spec.Enum) == 0 {
		switch f.Spec.Type.Kind {
		case graph.Bool:
			return "true or false"
		case graph.Int:
			return "a whole number"
		case graph.Float:
			return "a number"
		}
		return ""
	}
	var vals []string
	for _, e := range f.Spec.Enum {
		if s, ok := e.(string); ok {
			if s != "" {
				vals = append(vals, shellQuote(s))
			}
			continue
		}
		b, _ := json.Marshal(e)
		vals = append(vals, string(b))
	}
	if f.Spec.Type.Kind == graph.List {
		return "a JSON list of " + strings.Join(vals, ", ")
	}
	return "one of " + strings.Join(vals, ", ")
}

// command renders a graphctl command line with the options to repeat.
func (p *printer) command(args []string) string {
	parts := []string{"graphctl"}
	for i, a := range args {
		if i == 1 || (i > 0 && args[i-1] == "--thread") {
			a = shellQuote(a)
		}
		parts = append(parts, a)
	}
	for _, f := range p.cmd.flags {
		parts = append(parts, shellQuote(f))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func shellQuote(s string) string {
	if s != "" && plainArg.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// isTerminal reports whether w is a terminal. A character device that is not
// a terminal, such as /dev/null, is not one.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0 && isTTY(f)
}
