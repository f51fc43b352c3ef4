package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/workspace"
)

// runFlags are the flags shared by run and resume.
type runFlags struct {
	thread          string
	dataDir         string
	postgres        string
	durability      string
	asJSON          bool
	interruptBefore []string
	interruptAfter  []string
	recursionLimit  int
	llm             string
	// observers of the engine built by engine (audit log, tracing).
	observers *observers
}

func (f *runFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.thread, "thread", "", "thread id (a conversation); a new one is generated when empty")
	cmd.Flags().StringVar(&f.dataDir, "data-dir", "", "directory of the checkpoint and memory database (default $"+workspace.DataDirEnv+" or ./.graphctl)")
	cmd.Flags().StringVar(&f.postgres, "postgres", "", postgresFlagUsage)
	cmd.Flags().StringVar(&f.durability, "durability", "batch", durabilityFlagUsage)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print events as JSON Lines; the last line is done with the thread id, status and final state")
	cmd.Flags().StringSliceVar(&f.interruptBefore, "interrupt-before", nil, "stop before these nodes run (\"*\" for all), for debugging")
	cmd.Flags().StringSliceVar(&f.interruptAfter, "interrupt-after", nil, "stop after these nodes run (\"*\" for all), for debugging")
	cmd.Flags().IntVar(&f.recursionLimit, "recursion-limit", 0, "maximum super-steps per run (default: the graph's recursion_limit, else 25)")
	cmd.Flags().StringVar(&f.llm, "llm", "", "model for every model-using node, provider:model (e.g. openai:gpt-4o-mini, ollama:llama3.2, script:replies.json); overrides the graph and $GRAPHCTL_LLM")
}

// modelServices returns the engine services that carry the model choice:
// the --llm flag, else $GRAPHCTL_LLM, else none (each graph's own).
func modelServices(flag string) node.Extra {
	var extra node.Extra
	if flag == "" {
		flag = os.Getenv("GRAPHCTL_LLM")
	}
	if flag != "" {
		extra = llm.OverrideKey.Bind(extra, flag)
	}
	return extra
}

// engine builds the engine for a run and prepares its nodes; a node that
// cannot be configured (no model, an unreachable tool server) is a
// configuration error, exit status 2.
func (f *runFlags) engine(ctx context.Context, ws *workspace.Workspace, g *compile.Graph) (*engine.Engine, error) {
	extra := modelServices(f.llm)
	obs, err := newObservers(ctx, ws.Store(), func(err error) { fmt.Fprintln(os.Stderr, "graphctl:", err) })
	if err != nil {
		return nil, usageError(err)
	}
	f.observers = obs
	eng := ws.Engine(g, engine.Options{Extra: extra, Observers: obs.list})
	if err := eng.Preflight(ctx); err != nil {
		f.close(eng)
		return nil, usageError(err)
	}
	return eng, nil
}

// durabilityFlagUsage describes --durability wherever a command takes it.
const durabilityFlagUsage = "when data dir writes reach the disk: fsync (every step, slower) or batch (finished and interrupted runs; see docs/durability.md)"

// close closes the engine (its nodes and services) and flushes its traces.
func (f *runFlags) close(eng *engine.Engine) {
	if err := eng.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "graphctl:", err)
	}
	if err := f.observers.close(); err != nil {
		fmt.Fprintln(os.Stderr, "graphctl:", err)
	}
}

// postgresFlagUsage describes --postgres wherever a command takes it.
const postgresFlagUsage = "PostgreSQL URL to keep checkpoints and memory in instead of the data dir (default $" + postgres.URLEnv + ")"

func (f *runFlags) openWorkspace() (*workspace.Workspace, error) {
	ws, err := workspace.OpenConfig(context.Background(), workspace.Config{Dir: f.dataDir, Postgres: f.postgres, Durability: f.durability})
	if err != nil {
		return nil, usageError(err)
	}
	return ws, nil
}

func newRunCommand() *cobra.Command {
	var flags runFlags
	var text, inputJSON string
	cmd := &cobra.Command{
		Use:   "run GRAPH",
		Short: "Run one turn of a graph, or chat with it interactively",
		Long: `Run sends one input to a thread of the graph and streams the run's events.
-i TEXT appends a user message to the graph's messages field; --input JSON sets
state fields. Without either, and with a terminal on stdin, run starts an
interactive chat on one thread: each line is a turn, and when the graph asks
for input (an interrupt) the next line answers it. Lines piped or redirected
to stdin are a chat the same way, one turn per line.`,
		Args: runArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := mustLoadWarn(cmd, args[0])
			if err != nil {
				return err
			}
			if err := flags.check(g); err != nil {
				return err
			}
			if text != "" && inputJSON != "" {
				return usageError(errors.New("give either -i TEXT or --input JSON, not both"))
			}
			if strings.TrimSpace(text) == "" && cmd.Flags().Changed("input-text") {
				return usageError(errors.New("-i: the message is empty; give the text of a user message"))
			}
			if strings.TrimSpace(inputJSON) == "" && cmd.Flags().Changed("input") {
				return usageError(errors.New("--input is empty; give a JSON object of state fields, e.g. --input '{\"field\": \"value\"}'"))
			}
			ws, err := flags.openWorkspace()
			if err != nil {
				return err
			}
			defer ws.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			eng, err := flags.engine(ctx, ws, g)
			if err != nil {
				return err
			}
			defer flags.close(eng)
			if flags.thread == "" {
				flags.thread = "thread-" + shortID()
			}
			out := newPrinter(cmd.OutOrStdout(), cmd.ErrOrStderr(), flags.asJSON).hints(args[0], g, flags)
			switch {
			case text != "" || inputJSON != "":
				input, err := buildInput(g, text, inputJSON)
				if err != nil {
					return usageError(err)
				}
				return turn(ctx, eng, out, flags.request(engine.Request{Input: input}))
			case isTerminal(os.Stdin):
				return chat(ctx, eng, g, out, flags, cmd.InOrStdin(), true)
			default:
				return chat(ctx, eng, g, out, flags, cmd.InOrStdin(), false)
			}
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVarP(&text, "input-text", "i", "", "a user message")
	cmd.Flags().StringVar(&inputJSON, "input", "", "input state fields as a JSON object")
	return cmd
}

func newResumeCommand() *cobra.Command {
	var flags runFlags
	var valueJSON, interruptID string
	cmd := &cobra.Command{
		Use:   "resume GRAPH --thread ID",
		Short: "Continue a thread: answer its interrupt, or finish a run that stopped",
		Long: `Resume continues a thread from its last checkpoint. When the thread waits on an
interrupt, --value (JSON; a bare word is taken as a string) answers it; with
several pending interrupts, --interrupt names one. A thread whose run stopped by
an error, a crash or a kill continues with the nodes that had not finished;
nodes that had finished are not run again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if flags.thread == "" {
				return usageError(errors.New("resume needs --thread"))
			}
			g, err := mustLoadWarn(cmd, args[0])
			if err != nil {
				return err
			}
			if err := flags.check(g); err != nil {
				return err
			}
			value, err := parseResumeValue(valueJSON)
			if err != nil && cmd.Flags().Changed("value") {
				return usageError(err)
			}
			ws, err := flags.openWorkspace()
			if err != nil {
				return err
			}
			defer ws.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := existingThread(ctx, ws, flags.thread); err != nil {
				return err
			}
			eng, err := flags.engine(ctx, ws, g)
			if err != nil {
				return err
			}
			defer flags.close(eng)
			req := engine.Request{}
			if snap, err := ws.Checkpointer().Latest(ctx, flags.thread); err == nil {
				waiting := engine.WaitingInterrupts(&snap.Checkpoint)
				if interruptID != "" {
					interruptID = interruptByNode(waiting, interruptID)
				}
				if b := engine.StoppedAt(&snap.Checkpoint); b != nil && len(waiting) == 0 && cmd.Flags().Changed("value") {
					return usageError(fmt.Errorf("thread %q stopped %s node %s for debugging, which takes no answer: resume it without --value",
						flags.thread, b.When, strings.Join(b.Nodes, ", ")))
				}
			}
			if cmd.Flags().Changed("value") || interruptID != "" {
				req.Resume = &engine.Resume{InterruptID: interruptID, Value: value}
			}
			out := newPrinter(cmd.OutOrStdout(), cmd.ErrOrStderr(), flags.asJSON).hints(args[0], g, flags)
			return turn(ctx, eng, out, flags.request(req))
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&valueJSON, "value", "", "the answer to the pending interrupt, as JSON (a bare word is a string)")
	cmd.Flags().StringVar(&interruptID, "interrupt", "", "the interrupt to answer when several are pending: its id, or its node")
	return cmd
}

// interruptByNode returns the id of the pending interrupt that name denotes:
// name itself when it is an id, else the id of the one interrupt pending on
// the node so named (as a test case's interrupt key accepts). Otherwise name
// is returned as it is, for the engine to refuse.
func interruptByNode(pending []checkpoint.Interrupt, name string) string {
	var byNode []string
	for _, in := range pending {
		if in.ID == name {
			return name
		}
		if in.Node == name {
			byNode = append(byNode, in.ID)
		}
	}
	if len(byNode) == 1 {
		return byNode[0]
	}
	return name
}

func (f *runFlags) request(req engine.Request) engine.Request {
	req.ThreadID = f.thread
	req.InterruptBefore = f.interruptBefore
	req.InterruptAfter = f.interruptAfter
	req.RecursionLimit = f.recursionLimit
	return req
}

// runArgs takes the graph file; words after it get the advice to send
// them as a message with -i, which is what they usually are.
func runArgs(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return errors.New("run needs a graph file: graphctl run GRAPH [-i TEXT]")
	case len(args) > 1:
		return fmt.Errorf("run takes one graph file, got %d arguments; to send %q as a message, use -i %q",
			len(args), strings.Join(args[1:], " "), strings.Join(args[1:], " "))
	}
	return nil
}

func buildInput(g *compile.Graph, text, inputJSON string) (map[string]any, error) {
	if text != "" {
		return engine.TextInput(g, text)
	}
	var input map[string]any
	if err := checkpoint.DecodeJSON([]byte(inputJSON), &input); err != nil {
		if t := strings.TrimSpace(inputJSON); t != "" && !strings.ContainsAny(t[:1], "{[\"") {
			return nil, fmt.Errorf("--input must be a JSON object of state fields, such as '{\"goal\": \"fix\"}'; to send a message, use -i %q", inputJSON)
		}
		return nil, fmt.Errorf("--input must be a JSON object: %w", err)
	}
	if err := g.CheckValues(input); err != nil {
		return nil, fmt.Errorf("--input: %w", err)
	}
	return input, nil
}

// parseValue reads a resume value as JSON, or as a plain string when it is not JSON.
func parseValue(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v
	}
	return s
}

// turn runs one request, printing its events, and maps the outcome to an exit code.
func turn(ctx context.Context, eng *engine.Engine, out *printer, req engine.Request) error {
	res, err := eng.Run(ctx, req, out.event)
	if res == nil {
		return failed(err)
	}
	out.done(ctx, eng, res)
	if res.Status == engine.StatusError {
		return silent{code: 1}
	}
	return nil
}

// maxChatLine is the longest line a chat reads as one message.
const maxChatLine = 1 << 20

// errNoInput is a run given no input: no -i or --input, and a stdin that
// is not a terminal and holds no line.
var errNoInput = errors.New("no input: give -i TEXT or --input JSON, lines on stdin, or run with a terminal for an interactive chat")

// chat is the chat loop: one line per turn, answers to interrupts included.
// From a terminal (interactive) it prompts for each line; from a pipe or a
// file it reads the lines as they come, shows each after "> " on stderr as
// a terminal would, and exits 1 when a turn ended in an error.
func chat(ctx context.Context, eng *engine.Engine, g *compile.Graph, out *printer, flags runFlags, in io.Reader, interactive bool) error {
	if interactive {
		fmt.Fprintf(out.errw, "graph %s, thread %s — type a message, Ctrl-D to quit\n", g.Spec.Name, flags.thread)
	}
	out.interactive = interactive
	scanner := bufio.NewScanner(in)
	scanner.Buffer(nil, maxChatLine)
	waiting, turns, failedTurns := false, 0, 0
	for {
		if interactive {
			fmt.Fprint(out.errw, "> ")
		}
		if !scanner.Scan() {
			if interactive {
				fmt.Fprintln(out.errw)
			}
			switch {
			case scanner.Err() != nil:
				return usageError(fmt.Errorf("read stdin: %w", scanner.Err()))
			case !interactive && turns == 0:
				return usageError(errNoInput)
			case failedTurns > 0:
				return silent{code: 1}
			}
			return nil
		}
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		if !interactive {
			fmt.Fprintf(out.errw, "> %s\n", line)
		}
		turns++
		req := engine.Request{}
		if waiting {
			req.Resume = &engine.Resume{Value: parseValue(line)}
		} else {
			input, err := engine.TextInput(g, line)
			if err != nil {
				return usageError(err)
			}
			req.Input = input
		}
		res, err := eng.Run(ctx, flags.request(req), out.event)
		if res == nil {
			return failed(err)
		}
		out.done(ctx, eng, res)
		waiting = res.Status == engine.StatusInterrupted
		if res.Status == engine.StatusError {
			failedTurns++
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}
