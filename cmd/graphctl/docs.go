package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/rag"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
)

type docsFlags struct {
	graph    string
	node     string
	dataDir  string
	postgres string
	asJSON   bool
}

func newDocsCommand() *cobra.Command {
	var f docsFlags
	cmd := &cobra.Command{
		Use:   "docs",
		Short: "Manage the document sources a graph answers from (add, list, remove, sync)",
		Long: `docs manages the corpus a graph's rag_ingest node keeps in the data dir: the
sources (local files and directories, page URLs, sitemap URLs ending in .xml),
their status and update times, and their documents and chunks.

The graph's own sources (the node's sources) are registered automatically;
docs add registers more. sync reads every source (or the named ones): pages are
fetched with the ETag and Last-Modified of the last fetch, so unchanged pages
answer 304 and are not read again, and only new chunks are embedded. The graph
syncs by itself when the node's schedule (every) says a sync is due.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.graph, "graph", "", "graph file whose rag_ingest node names the corpus (required)")
	pf.StringVar(&f.node, "node", "", "the rag_ingest node, when the graph has several")
	pf.StringVar(&f.dataDir, "data-dir", "", "directory of the checkpoint and memory database (default $"+workspace.DataDirEnv+" or ./.graphctl)")
	pf.StringVar(&f.postgres, "postgres", "", postgresFlagUsage)
	pf.BoolVar(&f.asJSON, "json", false, "print as JSON")

	var noSync bool
	add := &cobra.Command{
		Use:   "add SOURCE...",
		Short: "Register sources (files, directories, page URLs, sitemap URLs) and sync them",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withCorpus(cmd, func(ctx context.Context, c *rag.Corpus, out io.Writer) error {
				var ids []string
				for _, a := range args {
					// A local path is as the user typed it, relative to the
					// working directory, not to the graph file.
					if !rag.IsURL(a) && !filepath.IsAbs(a) {
						abs, err := filepath.Abs(a)
						if err != nil {
							return usageError(err)
						}
						a = abs
					}
					s, added, err := c.Add(ctx, a, rag.OriginCLI)
					if err != nil {
						return failed(err)
					}
					ids = append(ids, s.ID)
					if added {
						fmt.Fprintf(out, "added %s %s (%s)\n", s.ID, s.Root, s.Kind)
					} else {
						fmt.Fprintf(out, "already registered: %s %s\n", s.ID, s.Root)
					}
				}
				if noSync {
					return nil
				}
				return f.sync(ctx, c, out, ids)
			})
		},
	}
	add.Flags().BoolVar(&noSync, "no-sync", false, "only register; the next sync reads them")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the sources with their kind, status, documents, chunks and update times",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.withCorpus(cmd, func(ctx context.Context, c *rag.Corpus, out io.Writer) error {
				sources, err := c.Sources(ctx)
				if err != nil {
					return failed(err)
				}
				st, err := c.State(ctx)
				if err != nil {
					return failed(err)
				}
				if f.asJSON {
					return printJSONTo(out, map[string]any{"sources": sources, "state": st})
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tORIGIN\tSTATUS\tDOCS\tCHUNKS\tUPDATED\tSYNCED\tSOURCE")
				for _, s := range sources {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", s.ID, s.Kind, s.Origin, s.Status, s.Documents, s.Chunks,
						orDash(s.UpdatedAt), orDash(s.SyncedAt), s.Root)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				for _, s := range sources {
					if s.Error != "" {
						fmt.Fprintf(out, "%s: %s\n", s.ID, s.Error)
					}
				}
				fmt.Fprintf(out, "corpus %s: %d documents, %d chunks, embedding model %s, last sync %s\n",
					strings.Join(c.Namespace, "/"), st.Documents, st.Chunks, orDash(st.EmbeddingModel), orDash(st.SyncedAt))
				return nil
			})
		},
	}

	remove := &cobra.Command{
		Use:   "remove SOURCE|ID...",
		Short: "Unregister sources and delete their documents and chunks",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withCorpus(cmd, func(ctx context.Context, c *rag.Corpus, out io.Writer) error {
				for _, a := range args {
					s, docs, chunks, err := c.Remove(ctx, resolveRef(ctx, c, a))
					if err != nil {
						return failed(err)
					}
					note := ""
					if s.Origin == rag.OriginGraph {
						note = " (the graph lists it: it comes back at the next sync unless removed from the graph file)"
					}
					fmt.Fprintf(out, "removed %s %s: %d documents, %d chunks%s\n", s.ID, s.Root, docs, chunks, note)
				}
				return nil
			})
		},
	}

	sync := &cobra.Command{
		Use:   "sync [SOURCE|ID...]",
		Short: "Read the sources again and ingest what changed",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withCorpus(cmd, func(ctx context.Context, c *rag.Corpus, out io.Writer) error {
				refs := make([]string, len(args))
				for i, a := range args {
					refs[i] = resolveRef(ctx, c, a)
				}
				return f.sync(ctx, c, out, refs)
			})
		},
	}
	cmd.AddCommand(add, list, remove, sync)
	return cmd
}

// withCorpus opens the data dir and the graph's corpus (registering the
// graph's own sources) and runs fn.
func (f *docsFlags) withCorpus(cmd *cobra.Command, fn func(ctx context.Context, c *rag.Corpus, out io.Writer) error) error {
	if f.graph == "" {
		return usageError(fmt.Errorf("name the graph whose documents to manage with --graph FILE (e.g. --graph graphs/telegram_rag.cue)"))
	}
	g, err := mustLoad(cmd.Context(), f.graph)
	if err != nil {
		return err
	}
	rf := runFlags{dataDir: f.dataDir, postgres: f.postgres}
	ws, err := rf.openWorkspace()
	if err != nil {
		return err
	}
	defer ws.Close()
	ctx := cmd.Context()
	services := &node.Services{Store: ws.Store(), Extra: llm.ServiceKey.Bind(node.Extra{}, llm.NewModels(nil))}
	errOut := cmd.ErrOrStderr()
	c, graphSources, err := rag.CorpusOf(ctx, g, f.node, services, func(e event.Event) {
		if e.Type == rag.EmbedderFallbackEvent {
			fmt.Fprintf(errOut, "graphctl: embedding with the offline fallback %v instead of %v: %v\n", e.Payload["using"], e.Payload["wanted"], e.Payload["reason"])
		}
	})
	if err != nil {
		return usageError(err)
	}
	if err := c.Reconcile(ctx, graphSources); err != nil {
		return failed(err)
	}
	return fn(ctx, c, cmd.OutOrStdout())
}

func (f *docsFlags) sync(ctx context.Context, c *rag.Corpus, out io.Writer, refs []string) error {
	res, err := c.Sync(ctx, refs...)
	if err != nil {
		return failed(err)
	}
	if f.asJSON {
		if err := printJSONTo(out, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "synced %d sources: %d documents (%d unchanged), %d chunks: %d embedded with %s, %d kept, %d moved, %d removed; %d documents gone\n",
			res.Sources, res.Documents, res.Unchanged, res.Chunks, res.Embedded, orDash(c.EmbedderName), res.Kept, res.Moved, res.Removed, res.RemovedDocuments)
	}
	if len(res.Failed) > 0 {
		roots := make([]string, 0, len(res.Failed))
		for r := range res.Failed {
			roots = append(roots, r)
		}
		sort.Strings(roots)
		var msgs []string
		for _, r := range roots {
			msgs = append(msgs, res.Failed[r])
		}
		return failed(fmt.Errorf("%d of %d sources failed (their last good documents are kept):\n  %s", len(res.Failed), res.Sources, strings.Join(msgs, "\n  ")))
	}
	return nil
}

// resolveRef returns the registered form of a source reference: as written
// when that is registered, else a relative path made absolute (how docs add
// registers it) when that is.
func resolveRef(ctx context.Context, c *rag.Corpus, ref string) string {
	if _, err := c.Find(ctx, ref); err == nil || rag.IsURL(ref) || strings.HasPrefix(ref, "src-") || filepath.IsAbs(ref) {
		return ref
	}
	if abs, err := filepath.Abs(ref); err == nil {
		if _, err := c.Find(ctx, abs); err == nil {
			return abs
		}
	}
	return ref
}

func printJSONTo(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
