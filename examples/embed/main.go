// Command embed shows graphctl used as a library: it loads the slot-filling
// graph, opens a data directory, and holds a two-turn conversation on one
// thread, printing the assistant's replies.
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/workspace"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
)

func main() {
	dir, err := os.MkdirTemp("", "graphctl-embed-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	turns := []string{"My dishwasher WDT780SAEM1 is leaking", "I want to fix it"}
	if err := run(context.Background(), "graphs/slot_filling.cue", dir, turns, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, graphFile, dataDir string, turns []string, out io.Writer) error {
	g, diags, err := runtime.Load(graphFile)
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return diags
	}
	ws, err := workspace.Open(dataDir)
	if err != nil {
		return err
	}
	defer ws.Close()
	eng := ws.Engine(g, engine.Options{})
	defer eng.Close()
	for _, text := range turns {
		fmt.Fprintf(out, "> %s\n", text)
		input, err := engine.TextInput(g, text)
		if err != nil {
			return err
		}
		res, err := eng.Run(ctx, engine.Request{ThreadID: "customer-1", Input: input}, func(ev event.Event) {
			if ev.Type == event.Text {
				fmt.Fprintln(out, ev.Payload["content"])
			}
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "(%s via %v)\n", res.Status, res.Path)
	}
	return nil
}
