package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/runtime/workspace"
)

func newStudioCommand() *cobra.Command {
	var f serveFlags
	var noOpen bool
	cmd := &cobra.Command{
		Use:   "studio [GRAPH_DIR]",
		Short: "Serve a directory of graphs and open the Studio web UI in a browser",
		Long: `Studio serves the graphs of GRAPH_DIR (default ./graphs) like serve does and
opens http://ADDR/studio/ in your browser: the graph drawn with its routes,
a chat that streams the run and highlights the running node, threads with
their state, run history and a checkpoint timeline (edit state at a
checkpoint and fork, regenerate the last step), answers to interrupts, and
the long-term memory store.

Unlike serve, a graph file that does not validate does not stop the server:
the valid graphs are served and the page shows the diagnostics of the
invalid files with their source lines; a file joins as soon as it is fixed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.graphs = args[0]
			}
			f.lenient = true
			f.onListen = func(url string) {
				url += "/studio/"
				if noOpen {
					return
				}
				if err := openBrowser(url); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "could not open a browser (%v); open %s\n", err, url)
				}
			}
			return serve(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8123", "address to listen on")
	fl.StringVar(&f.dataDir, "data-dir", "", "directory of the checkpoint and memory database (default $"+workspace.DataDirEnv+" or ./.graphctl)")
	fl.StringVar(&f.llm, "llm", "", "model for every model-using node, provider:model; overrides the graphs and $GRAPHCTL_LLM")
	fl.BoolVar(&noOpen, "no-open", false, "do not open a browser")
	fl.StringVar(&f.logLevel, "log-level", "warn", "debug, info, warn or error")
	f.graphs = "graphs"
	f.chatGraph = "cognitive"
	f.onRestart = "resume"
	f.maxBody = 10 << 20
	f.grace = 5 * time.Second
	f.telegramGraph = "telegram_rag"
	f.telegramMode = "webhook"
	f.telegramChats = telegram.DefaultMaxChats
	return cmd
}

// openBrowser opens url in the desktop's browser.
func openBrowser(url string) error {
	var c *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		c = exec.Command("open", url)
	case "windows":
		c = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		c = exec.Command("xdg-open", url)
	}
	if err := c.Start(); err != nil {
		return err
	}
	go c.Wait()
	return nil
}
