package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load/evalguard"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
	"github.com/graphctl/graphctl/server/ephemeral"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
)

// apiKeysEnv names the environment variable with the server's API keys.
const apiKeysEnv = "GRAPHCTL_API_KEYS"

// corsOriginsEnv names the environment variable with the browser origins
// allowed to call the server (comma-separated), added to --cors-origin.
const corsOriginsEnv = "GRAPHCTL_CORS_ORIGINS"

type serveFlags struct {
	graphs    string
	addr      string
	dataDir   string
	postgres  string
	durable   string
	llm       string
	chatGraph string
	onRestart string
	maxBody   int64
	rateLimit float64
	grace     time.Duration
	logLevel  string
	// telegramGraph and telegramMode connect a Telegram bot when
	// $TELEGRAM_BOT_TOKEN is set.
	telegramGraph string
	telegramMode  string
	// telegramChats bounds the chats whose messages are answered at once.
	telegramChats int
	// noStudio and noMCP turn off /studio and /mcp.
	noStudio, noMCP bool
	// debug serves profiles and counters under /debug/.
	debug bool
	// lenient serves the valid graphs of a directory that holds invalid ones
	// (the Studio shows their diagnostics); onListen is told the base URL.
	lenient  bool
	onListen func(url string)
	// corsOrigins are the browser origins allowed to call the API.
	corsOrigins []string
	// lease is how long a run claimed by a replica lasts without heartbeats.
	lease time.Duration
}

// telegramSecretEnv names the environment variable with the secret Telegram
// sends with each webhook call (set with setWebhook's secret_token).
const telegramSecretEnv = "TELEGRAM_WEBHOOK_SECRET"

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --graphs DIR [--addr HOST:PORT]",
		Short: "Serve graphs over HTTP: the LangGraph Platform API, SSE streaming and chat endpoints",
		Long: `Serve loads every graph in --graphs (refusing to start if any is invalid) and
serves each as an assistant over HTTP: the LangGraph Platform API that the
@langchain/langgraph-sdk client speaks (assistants, threads, runs with SSE
streaming, the store) and the chat endpoints /chat, /chat/image, /hitl/* and
/ecs/* over the chat graph. Changed graph files are reloaded for new threads.

API keys come from $` + apiKeysEnv + ` (comma-separated bearer tokens); without
any, the server only listens on a loopback address.

Browser pages on other origins (agent-chat-ui, a Vite dev server) may call
the API when their origin is allowed: --cors-origin (repeatable) and
$` + corsOriginsEnv + ` (comma-separated) take an exact origin, a pattern
such as http://localhost:* or https://*.example.com, or *. Without API keys
and without any configured origin, http://localhost:* and http://127.0.0.1:*
are allowed.

With $TELEGRAM_BOT_TOKEN set, the --telegram-graph graph answers the bot's
messages, one thread per user (tg:USER_ID): updates arrive at POST
/webhooks/telegram (checked against $` + telegramSecretEnv + `) or, with
--telegram poll, by long polling.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.graphs, "graphs", "graphs", "directory of graph files to serve")
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8123", "address to listen on")
	fl.StringVar(&f.postgres, "postgres", "", postgresFlagUsage)
	fl.StringVar(&f.durable, "durability", "batch", durabilityFlagUsage)
	fl.StringVar(&f.dataDir, "data-dir", "", "directory of the checkpoint and memory database (default $"+workspace.DataDirEnv+" or ./.graphctl)")
	fl.StringVar(&f.llm, "llm", "", "model for every model-using node, provider:model; overrides the graphs and $GRAPHCTL_LLM")
	fl.StringVar(&f.chatGraph, "chat-graph", "cognitive", "graph behind /chat, /chat/image, /hitl/* and /ecs/*")
	fl.StringVar(&f.onRestart, "on-restart", "resume", "what to do at start with runs a previous process left running: resume or fail")
	fl.Int64Var(&f.maxBody, "max-body", 10<<20, "largest request body in bytes")
	fl.Float64Var(&f.rateLimit, "rate-limit", 0, "requests per second per API key (or client address); 0 = unlimited")
	fl.DurationVar(&f.grace, "shutdown-grace", 30*time.Second, "on SIGTERM, how long running steps may finish")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringVar(&f.telegramGraph, "telegram-graph", "telegram_rag", "graph that answers Telegram messages when $TELEGRAM_BOT_TOKEN is set")
	fl.StringArrayVar(&f.corsOrigins, "cors-origin", nil, "browser origin allowed to call the API (repeatable): exact, a pattern like http://localhost:*, or *; also $"+corsOriginsEnv)
	fl.StringVar(&f.telegramMode, "telegram", "webhook", "how Telegram updates arrive: webhook (POST /webhooks/telegram) or poll (long polling, no public URL needed)")
	fl.IntVar(&f.telegramChats, "telegram-max-chats", telegram.DefaultMaxChats, "how many Telegram chats are answered at once (each chat's messages one after another)")
	fl.BoolVar(&f.noStudio, "no-studio", false, "do not serve the Studio web UI at /studio")
	fl.BoolVar(&f.noMCP, "no-mcp", false, "do not serve the graphs as MCP tools at /mcp")
	fl.BoolVar(&f.debug, "debug", false, "serve Go profiles at /debug/pprof/ and write and allocation counters at /debug/counters (behind the API keys)")
	fl.DurationVar(&f.lease, "run-lease", pgqueue.DefaultLease, "with --postgres: how long a replica's run survives without its heartbeat before another replica resumes it")
	return cmd
}

func serve(cmd *cobra.Command, f serveFlags) error {
	level, err := f.check()
	if err != nil {
		return usageError(err)
	}
	log := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	keys := apiKeys(os.Getenv(apiKeysEnv))
	if err := server.CheckAddress(f.addr, keys); err != nil {
		return usageError(err)
	}
	ws, err := workspace.OpenConfig(cmd.Context(), workspace.Config{Dir: f.dataDir, Postgres: f.postgres, Durability: f.durable})
	if err != nil {
		return usageError(err)
	}
	defer ws.Close()
	var queue *pgqueue.Queue
	if pg := ws.Postgres(); pg != nil {
		// Replicas on one database share their runs through it.
		if queue, err = pgqueue.New(pg.Pool(), pgqueue.Options{Schema: pg.Schema(), Lease: f.lease, Log: log}); err != nil {
			return failed(err)
		}
		defer queue.Close()
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	extra, bot, err := f.services()
	if err != nil {
		return usageError(err)
	}
	items, embedder, err := itemStore(ctx, ws, extra)
	if err != nil {
		return usageError(err)
	}
	if items != nil {
		log.Info("the store API embeds items for semantic search", "embedder", embedder)
	}
	obs, err := newObservers(ctx, ws.Store(), func(err error) { log.Warn("audit log", "error", err.Error()) })
	if err != nil {
		return usageError(err)
	}
	defer func() {
		if err := obs.close(); err != nil {
			log.Warn("tracing", "error", err.Error())
		}
	}()
	if obs.tracer != nil {
		log.Info("tracing runs with OpenTelemetry", "protocol", obs.tracer.Protocol, "endpoint", obs.tracer.Endpoint)
	}
	// Stateless runs keep their temporary threads in memory, unless runs
	// are shared with replicas (one of them may resume another's run).
	cp := ws.Checkpointer()
	if queue == nil {
		cp = ephemeral.New(cp)
	}
	reg, err := openServedGraphs(ctx, cmd, f, log, func(g *compile.Graph) *engine.Engine {
		return engine.New(g, cp, engine.Options{Extra: extra, Observers: obs.list, Store: ws.Store()})
	})
	if err != nil {
		return err
	}
	// Every version a hot reload replaced stays loaded for the threads that
	// run on it; all of them are closed (their nodes too) at shutdown.
	defer func() {
		if err := reg.Close(); err != nil {
			log.Warn("close graphs", "error", err.Error())
		}
	}()

	cfg := server.Config{Graphs: reg, Checkpointer: cp, Store: ws.Store(), ItemStore: items, APIKeys: keys,
		MaxBody: f.maxBody, RateLimit: f.rateLimit, ChatGraph: f.chatGraph, Log: log,
		Answers:  []server.AnswerKind{contractAnswers},
		NoStudio: f.noStudio, NoMCP: f.noMCP, OwnStore: ws.Postgres() == nil,
		CORSOrigins: append(append([]string(nil), f.corsOrigins...), apiKeys(os.Getenv(corsOriginsEnv))...)}
	if bot != nil {
		if _, ok := reg.Get(f.telegramGraph); !ok {
			return usageError(fmt.Errorf("$%s is set but --telegram-graph %q is not among the served graphs", telegram.TokenEnv, f.telegramGraph))
		}
		cfg.Channels = append(cfg.Channels, telegramChannel(bot, f, log))
	}
	if f.debug {
		cfg.Debug = debugHandler(ws)
	}
	if queue != nil {
		cfg.RunQueue, cfg.CronClaim = queue, queue.FireCron
	}
	srv, err := server.New(cfg)
	if err != nil {
		return usageError(err)
	}
	return listenAndServe(ctx, cmd, f, srv, reg, ws.Dir, log, len(keys) == 0)
}

// check validates the flags that need more than their type, returning the
// log level.
func (f serveFlags) check() (slog.Level, error) {
	var level slog.Level
	if f.onRestart != "resume" && f.onRestart != "fail" {
		return level, fmt.Errorf("--on-restart must be resume or fail, got %q", f.onRestart)
	}
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return level, fmt.Errorf("--log-level: %w", err)
	}
	if f.telegramMode != "webhook" && f.telegramMode != "poll" {
		return level, fmt.Errorf("--telegram must be webhook or poll, got %q", f.telegramMode)
	}
	if f.telegramChats < 1 {
		return level, fmt.Errorf("--telegram-max-chats must be at least 1, got %d", f.telegramChats)
	}
	return level, nil
}

// services returns the engine services the flags and environment choose (the
// model override, the Telegram bot) and the bot, nil without
// $TELEGRAM_BOT_TOKEN.
func (f serveFlags) services() (node.Extra, *telegram.Client, error) {
	extra := modelServices(f.llm)
	if os.Getenv(telegram.TokenEnv) == "" {
		return extra, nil, nil
	}
	bot, err := telegram.FromEnv(nil)
	if err != nil {
		return node.Extra{}, nil, err
	}
	extra = telegram.BotKey.Bind(extra, bot)
	return extra, bot, nil
}

// openServedGraphs loads the graphs of --graphs, each load bounded
// (--max-eval-time, --max-eval-memory) and stopped by SIGTERM, printing their
// diagnostics. A graph whose nodes cannot be prepared (no model key, an
// unreachable tool server) is still served, so that one unconfigured graph
// does not keep the others down; its runs fail with the same message, which
// is logged now.
func openServedGraphs(ctx context.Context, cmd *cobra.Command, f serveFlags, log *slog.Logger, newEngine func(*compile.Graph) *engine.Engine) (*graphs.Registry, error) {
	prepared := func(g *compile.Graph) (*engine.Engine, error) {
		eng := newEngine(g)
		if err := eng.Preflight(ctx); err != nil {
			log.Warn("graph is not fully configured; its runs will fail until it is", "graph", g.Spec.Name, "file", g.Spec.File, "error", err.Error())
		}
		return eng, nil
	}
	limits := evalLimits(cmd.Context())
	loadBounded := func(path string) (*compile.Graph, diag.List, error) { return evalguard.Load(ctx, path, limits) }
	reg, diags, err := graphs.OpenWith(f.graphs, prepared, log, graphs.Options{Lenient: f.lenient, Load: loadBounded})
	for _, d := range diags {
		fmt.Fprintln(cmd.ErrOrStderr(), d.String())
	}
	if err != nil {
		return nil, usageError(err)
	}
	if reg == nil {
		return nil, silent{code: 1}
	}
	return reg, nil
}

// telegramGraceMargin is how much longer than --shutdown-grace polling
// waits at shutdown for the turns in progress.
const telegramGraceMargin = 10 * time.Second

// telegramChannel answers the bot's messages with --telegram-graph, its
// updates arriving at the server's webhook or by long polling.
func telegramChannel(bot *telegram.Client, f serveFlags, log *slog.Logger) server.Channel {
	return server.Channel{Name: "telegram", Graph: f.telegramGraph, Bind: func(runs server.ChannelRuns) (http.Handler, func(context.Context) error) {
		onError := func(err error) { log.Warn("telegram update", "error", err.Error()) }
		// On SIGTERM the server lets runs go on for --shutdown-grace and
		// then cuts them, to be resumed at the next start; polling waits a
		// little longer, so that a turn ends with its run rather than
		// cancelling it first.
		a := &telegram.Adapter{Client: bot, Run: runs.Run, Resume: runs.Resume, Pending: runs.Pending, Value: runs.Value, OnError: onError,
			MaxChats: f.telegramChats, ShutdownGrace: f.grace + telegramGraceMargin}
		if f.telegramMode == "poll" {
			return nil, func(ctx context.Context) error { return a.Poll(ctx, 30*time.Second, onError) }
		}
		secret := os.Getenv(telegramSecretEnv)
		if secret == "" {
			log.Warn("the Telegram webhook accepts calls without a secret", "env", telegramSecretEnv)
		}
		return a.Handler(secret), nil
	}}
}

// listenAndServe listens on --addr, handles the runs a previous process left
// (--on-restart), watches the graph files and serves until ctx ends.
func listenAndServe(ctx context.Context, cmd *cobra.Command, f serveFlags, srv *server.Server, reg *graphs.Registry, dir string, log *slog.Logger, open bool) error {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usageError(fmt.Errorf("listen on %s: %w", f.addr, err))
	}
	if open {
		log.Warn("no API keys configured: serving unauthenticated on a loopback address", "addr", ln.Addr().String(), "env", apiKeysEnv)
	}
	n, err := srv.Recover(ctx, f.onRestart == "fail")
	if err != nil {
		log.Error("recover unfinished runs", "error", err)
	} else if n > 0 {
		log.Info("runs left by the previous process handled", "count", n, "on_restart", f.onRestart)
	}
	go reg.Watch(ctx, time.Second)
	names := []string{}
	for _, v := range reg.List() {
		names = append(names, v.Name)
	}
	log.Info("serving", "addr", ln.Addr().String(), "graphs", strings.Join(names, ","), "storage", dir)
	fmt.Fprintf(cmd.OutOrStdout(), "graphctl serving %s on http://%s\n", strings.Join(names, ", "), ln.Addr())
	if !f.noStudio {
		fmt.Fprintf(cmd.OutOrStdout(), "Studio: http://%s/studio/\n", ln.Addr())
	}
	if f.onListen != nil {
		f.onListen("http://" + ln.Addr().String())
	}
	// Serve starts the channels' polling once the runs above are back in
	// line, so that a thread's runs keep their order.
	if err := srv.Serve(ctx, ln, server.ServeOptions{ShutdownGrace: f.grace}); err != nil && !errors.Is(err, context.Canceled) {
		return failed(err)
	}
	return nil
}

func apiKeys(env string) []string {
	var out []string
	for _, k := range strings.Split(env, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// contractAnswers serves answers about ExecutionContracts (a human's answer
// to an ecs_request) at /ecs/respond and /ecs/continue.
var contractAnswers = server.AnswerKind{Name: contract.AnswerName, Pending: contract.PendingAnswer, Waiting: contract.AnswerWaiting}
