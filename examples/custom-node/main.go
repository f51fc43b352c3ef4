// Command custom-node shows how a team adds its own node type in Go and runs a
// graph that uses it: a "word_count" node that counts the words of the last
// user message. The type goes into a registry of the program's own — the
// builtin types (node.Default(), filled by the builtin-nodes packages' init)
// plus word_count — which loading, compiling and the engine use; the default
// registry, and so graphctl, never sees it. A program that wants its types
// everywhere registers them with node.MustRegister in init instead.
//
//	go run ./examples/custom-node "how many words are in this sentence"
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
)

// wordCountConfig is the node's config; its CUE schema is in the registration.
type wordCountConfig struct {
	Field string `json:"field"`
}

// registry returns the node types this program's graphs may use: the
// builtin ones and word_count.
func registry() (*node.Registry, error) {
	reg := node.Default().Clone()
	if err := reg.Register(wordCount); err != nil {
		return nil, fmt.Errorf("register word_count: %w", err)
	}
	return reg, nil
}

// wordCount is the word_count node type.
var wordCount = node.Type{
	Name:        "word_count",
	Description: "Counts the words of the last user message into an int field.",
	Config:      `{field: string}`,
	New: func(b node.Builder) (node.Node, error) {
		var cfg wordCountConfig
		if err := b.Decode(&cfg); err != nil {
			return nil, err
		}
		if f := b.Graph().Field(cfg.Field); f == nil {
			b.Errorf("field", "unknown-field", "state has no field %q", cfg.Field)
			return nil, nil
		}
		return node.Func(func(_ context.Context, in *node.Input) (node.Update, error) {
			messages, _ := in.State["messages"].([]any)
			text := ""
			for i := len(messages) - 1; i >= 0; i-- {
				if m, ok := messages[i].(map[string]any); ok && m["role"] == "user" {
					text, _ = m["content"].(string)
					break
				}
			}
			return node.Update{cfg.Field: len(strings.Fields(text))}, nil
		}), nil
	},
}

const graphSource = `
dsl_version: "graphctl/v1"
name: "counter"
state: {
	messages: {type: "messages"}
	words: {type: "int"}
}
start: "count"
nodes: {
	count: {type: "word_count", config: field: "words", next: "answer"}
	answer: {type: "reply", config: text: "Your message has ${words} word${words == 1 ? '' : 's'}.", next: "END"}
}
`

func main() {
	text := "how many words are in this sentence"
	if len(os.Args) > 1 {
		text = strings.Join(os.Args[1:], " ")
	}
	if err := run(context.Background(), text, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, text string, out io.Writer) error {
	reg, err := registry()
	if err != nil {
		return err
	}
	g, diags := runtime.Loader{Registry: reg}.LoadSource("counter.cue", []byte(graphSource))
	if diags.HasErrors() {
		return diags
	}
	eng := engine.New(g, memory.New(), engine.Options{})
	// The first Run prepares the nodes that implement node.Preparer (call
	// eng.Preflight to report a configuration error before a run); Close
	// closes the nodes that implement node.Closer and the engine's services.
	defer eng.Close()
	input, err := engine.TextInput(g, text)
	if err != nil {
		return err
	}
	res, err := eng.Run(ctx, engine.Request{ThreadID: "demo", Input: input}, func(ev event.Event) {
		if ev.Type == event.Text {
			fmt.Fprintln(out, ev.Payload["content"])
		}
	})
	if err != nil {
		return err
	}
	if res.Status != engine.StatusCompleted {
		return fmt.Errorf("run ended %s", res.Status)
	}
	return nil
}
