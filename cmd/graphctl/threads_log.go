package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/runtime/audit"
)

// newThreadsLogCommand is `graphctl threads log`: the audit log of a thread
// (or of every thread of a user).
func newThreadsLogCommand(flags *runFlags) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "log [THREAD]",
		Short: "Show a thread's audit log: its messages with times and meta, and every node's input, output, duration and retrieval count",
		Long: `log prints what the audit log holds for a thread: the conversation (user,
created and updated times), and for each run the messages it added (role,
content, meta, time) and an observation of each node that ran (input and
output summaries, duration, status, retrieval count, tokens). --user ID
prints the log of every thread of that user (the user_id state field, e.g.
the Telegram user id). The same is served at GET /threads/{thread}/log.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (user != "") {
				return usageError(errors.New("give either a THREAD or --user ID"))
			}
			ws, err := flags.openWorkspace()
			if err != nil {
				return err
			}
			defer ws.Close()
			ctx, st, out := cmd.Context(), ws.Store(), cmd.OutOrStdout()
			threads := args
			if user != "" {
				convs, err := audit.Conversations(ctx, st, user)
				if err != nil {
					return failed(err)
				}
				if len(convs) == 0 {
					return failed(fmt.Errorf("user %q has no conversation in the audit log", user))
				}
				threads = nil
				for _, c := range convs {
					threads = append(threads, c.ThreadID)
				}
			}
			type entry struct {
				Conversation *audit.Conversation `json:"conversation"`
				Runs         []audit.Run         `json:"runs"`
			}
			var all []entry
			for _, th := range threads {
				conv, runs, err := audit.Log(ctx, st, th)
				if err != nil {
					if errors.Is(err, audit.ErrNoLog) {
						return failed(err)
					}
					return err
				}
				all = append(all, entry{conv, runs})
			}
			if flags.asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if user == "" {
					return enc.Encode(all[0])
				}
				return enc.Encode(all)
			}
			for i, e := range all {
				if i > 0 {
					fmt.Fprintln(out)
				}
				printLog(out, e.Conversation, e.Runs)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "show every thread of this user")
	return cmd
}

func printLog(out io.Writer, c *audit.Conversation, runs []audit.Run) {
	user := ""
	if c.UserID != "" {
		user = ", user " + c.UserID
	}
	fmt.Fprintf(out, "thread %s (%s%s): created %s, updated %s, %d runs, %d messages\n",
		c.ThreadID, c.Graph, user, c.CreatedAt, c.UpdatedAt, c.Runs, c.Messages)
	for _, r := range runs {
		resumed := ""
		if r.Resumed {
			resumed = " (resume)"
		}
		fmt.Fprintf(out, "\nrun %s%s  %s  %s  %.1f ms\n", r.RunID, resumed, r.StartedAt, r.Status, r.DurationMS)
		if r.Error != "" {
			fmt.Fprintf(out, "  error: %s\n", r.Error)
		}
		for _, m := range r.Messages {
			if m.Role == "user" || m.Role == "human" {
				fmt.Fprintf(out, "  %s  %s: %s%s\n", m.CreatedAt, m.Role, flat(m.Content), metaText(m.Meta))
			}
		}
		for _, n := range r.Nodes {
			extra := ""
			if n.Retrieved != nil {
				extra += fmt.Sprintf("  retrieved %d", *n.Retrieved)
			}
			if t := n.Tokens["total_tokens"]; t > 0 {
				extra += fmt.Sprintf("  tokens %d", t)
			}
			if n.CaughtBy != "" {
				extra += "  caught by " + n.CaughtBy
			}
			fmt.Fprintf(out, "  node %s (%s) step %d  %s  %.1f ms%s\n", n.Node, n.Type, n.Step, n.Status, n.DurationMS, extra)
			if n.Error != "" {
				fmt.Fprintf(out, "      error: %s\n", flat(n.Error))
			}
			if len(n.Input) > 0 {
				fmt.Fprintf(out, "      in:  %s\n", fields(n.Input))
			}
			if len(n.Output) > 0 {
				fmt.Fprintf(out, "      out: %s\n", fields(n.Output))
			}
		}
		for _, m := range r.Messages {
			if m.Role != "user" && m.Role != "human" {
				fmt.Fprintf(out, "  %s  %s: %s%s\n", m.CreatedAt, m.Role, flat(m.Content), metaText(m.Meta))
			}
		}
	}
}

func fields(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + flat(m[k])
	}
	return strings.Join(parts, "  ")
}

func metaText(meta map[string]any) string {
	if len(meta) == 0 {
		return ""
	}
	b, _ := json.Marshal(meta)
	return "  " + audit.Summary(string(b))
}

func flat(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
