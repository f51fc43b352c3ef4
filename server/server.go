// Package server is graphctl's HTTP server (gin): the LangGraph Platform
// (Agent Protocol) subset that the official @langchain/langgraph-sdk client
// speaks — assistants, threads, runs with SSE streaming, the store — and the
// chat endpoints (/chat, /chat/image, /hitl/*, and the answer kinds the
// application adds) over a chat
// graph. Routes, middleware (API keys, rate limit, body limit, panic
// recovery, logs) and the lifecycle live here; SSE framing is server/sse,
// run bookkeeping server/runs, graph loading and hot reload server/graphs.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/ephemeral"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/metrics"
	"github.com/graphctl/graphctl/server/ratelimit"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/sse"
)

// Version is reported by /info.
const Version = "0.1.0"

// Config configures a Server.
type Config struct {
	// Graphs are the graphs served, one assistant each.
	Graphs *graphs.Registry
	// Checkpointer and Store are the server's storage. A Checkpointer that
	// keeps temporary threads in memory (server/ephemeral, also given to
	// the graphs' engines) holds the threads of stateless runs there when
	// there is no RunQueue.
	Checkpointer checkpoint.Checkpointer
	Store        store.Store
	// ItemStore, when set, is the store behind the /store/items and
	// /store/namespaces API instead of Store: the same items, through a store
	// that embeds them for semantic search (the server's own records in
	// Store are not embedded).
	ItemStore store.Store
	// APIKeys, when any, are required as bearer tokens (or x-api-key).
	APIKeys []string
	// MaxBody caps request bodies in bytes (default 10 MiB).
	MaxBody int64
	// RateLimit is requests per second per client (0 = unlimited); RateBurst
	// the bucket size (default the rate).
	RateLimit float64
	RateBurst int
	// ChatGraph is the graph behind /chat, /chat/image, /hitl/* and the
	// endpoints of Answers, chosen by the application; empty serves those
	// endpoints as 404s that say so.
	ChatGraph string
	// Answers are the kinds of answers to the chat graph's interrupts served
	// beside /hitl/*, each at /<name>/respond and /<name>/continue.
	Answers []AnswerKind
	// KeepAlive is the interval of SSE keep-alive comments (default 15s).
	KeepAlive time.Duration
	// Log receives structured logs; nil discards them.
	Log *slog.Logger
	// RetainRuns is how many finished runs keep their stream in memory.
	RetainRuns int
	// Webhooks are inbound integrations mounted outside API-key authentication.
	Webhooks []Webhook
	// Channels are chat integrations (bots) the server wires to their graphs.
	Channels []Channel
	// Debug, when set, is served under /debug/ (profiles, counters), behind
	// the API keys like the rest of the API.
	Debug http.Handler
	// CORSOrigins are the browser origins allowed to call the API: "*", an
	// exact origin, or a pattern such as "http://localhost:*". Empty means
	// DefaultLocalOrigins when there are no API keys, and none otherwise.
	CORSOrigins []string
	// BodyTimeout is how long a request body may take to start arriving;
	// after it the body must keep arriving at 16 KiB/s (default 10s; a
	// negative value disables the check).
	BodyTimeout time.Duration
	// AuthFailures is how many failed API-key checks an address may make
	// per minute before it is refused with 429 for the rest of that minute
	// (default 20).
	AuthFailures int
	// NoStudio and NoMCP turn off the Studio page (/studio) and the MCP
	// endpoint (/mcp).
	NoStudio, NoMCP bool
	// RunQueue, when set, shares runs with the other servers (replicas) on
	// the same database: any replica answers any request (see runs.Queue).
	// Stored assistants and crons are then read from the Store instead of
	// being cached in memory, and CronClaim decides which replica fires a
	// cron.
	RunQueue runs.Queue
	// OwnStore says that no other process writes the Store's records while
	// the server runs (Badger: the data dir is locked): the server then
	// remembers which threads exist and name the graph of their runs
	// instead of reading their records for every run.
	OwnStore bool
	// CronClaim reports whether this replica fires a cron due at a time
	// (the first replica to ask); nil fires every due cron.
	CronClaim func(ctx context.Context, cronID string, due time.Time) (bool, error)
	// ThreadSweepInterval is how often threads whose TTL has passed are
	// deleted (default a minute).
	ThreadSweepInterval time.Duration
}

// Server serves graphs over HTTP. Create it with New.
type Server struct {
	cfg     Config
	log     *slog.Logger
	reg     *graphs.Registry
	cp      checkpoint.Checkpointer
	st      store.Store
	items   store.Store
	runs    *runs.Manager
	metrics *metrics.Registry
	limiter *ratelimit.Limiter
	engine  *gin.Engine
	// corsPolicy says which browser origins may call the API.
	corsPolicy *corsPolicy
	// authFails counts failed API-key checks per address.
	authFails *authFailures
	started   time.Time

	// noted remembers the thread records that need no update for a run
	// (nil unless Config.OwnStore).
	noted *notedThreads
	// pinned maps a thread to the graph version it runs on.
	pinned sync.Map
	// assistants caches stored assistants.
	assistants assistantCache
	// graphAssistants holds the assistant of each loaded graph's current
	// version (graph name → *graphAssistant), built once for its runs.
	graphAssistants sync.Map
	// cron runs the scheduled runs.
	cron cronScheduler
	// loops are the channels' background loops (long polling), run by Start.
	loops []namedLoop
	// answers holds buffers (*[]byte) that final values were encoded into,
	// for the next answers.
	answers sync.Pool
	// temp, when the checkpointer keeps temporary threads in memory (and
	// runs are not shared with other replicas), holds the threads of
	// stateless runs.
	temp temporaryThreads
	// watchers are the open thread streams, told of each run submitted.
	watchers threadWatchers
	// protocol holds the events of the threads driven through the
	// thread-centric protocol (protocol.go).
	protocol protocolThreads
	// hooks calls the webhooks of finished runs.
	hooks runHooks
}

// temporaryThreads is a checkpointer that can keep a thread's checkpoints in
// memory until the thread is deleted (see server/ephemeral).
type temporaryThreads interface {
	Temporary(threadID string)
}

// New builds a server; call Recover to resume unfinished runs before serving.
func New(cfg Config) (*Server, error) {
	if cfg.Graphs == nil || cfg.Checkpointer == nil || cfg.Store == nil {
		return nil, errors.New("server: graphs, checkpointer and store are required")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 10 << 20
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = 10 * time.Second
	}
	if cfg.AuthFailures <= 0 {
		cfg.AuthFailures = 20
	}
	origins := cfg.CORSOrigins
	if len(origins) == 0 && len(cfg.APIKeys) == 0 {
		origins = DefaultLocalOrigins
	}
	policy, err := newCORSPolicy(origins)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := checkAnswerKinds(cfg.Answers); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Log, reg: cfg.Graphs, cp: cfg.Checkpointer, st: cfg.Store, items: cfg.ItemStore,
		metrics: metrics.New(), limiter: ratelimit.New(cfg.RateLimit, cfg.RateBurst, nil), started: time.Now(),
		corsPolicy: policy, authFails: newAuthFailures(cfg.AuthFailures, time.Minute),
		hooks: runHooks{client: &http.Client{Timeout: runHookTimeout}}}
	if s.items == nil {
		s.items = cfg.Store
	}
	if cfg.OwnStore && cfg.RunQueue == nil {
		s.noted = newNotedThreads()
	}
	if t, ok := cfg.Checkpointer.(temporaryThreads); ok && cfg.RunQueue == nil {
		// With replicas, another one may resume a stateless run: its
		// checkpoints stay in the shared database.
		s.temp = t
	}
	s.runs = runs.New(runs.Options{
		Store: cfg.Store, Checkpointer: cfg.Checkpointer, Exec: s.execute, Log: cfg.Log, Retain: cfg.RetainRuns, Queue: cfg.RunQueue,
		StatelessInMemory: s.temp != nil,
		HandHead:          handHead(cfg.Checkpointer),
		OnFinish: func(rec runs.Record, res *engine.Result) {
			s.metrics.RunEnded(rec.Status)
			s.runEnded(rec, res)
			if rec.Stateless {
				s.pinned.Delete(rec.ThreadID)
			}
			if res != nil {
				s.metrics.Steps(res.Steps)
			}
		},
	})
	s.cfg.Webhooks = append([]Webhook(nil), cfg.Webhooks...)
	if err := s.bindChannels(); err != nil {
		return nil, err
	}
	if err := checkWebhooks(s.cfg.Webhooks); err != nil {
		return nil, err
	}
	s.engine = s.routes()
	return s, nil
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.engine }

// Metrics returns the server's metrics.
func (s *Server) Metrics() *metrics.Registry { return s.metrics }

// Runs returns the run manager.
func (s *Server) Runs() *runs.Manager { return s.runs }

// Recover resumes (or, with fail, marks as errors) the runs that were
// running or queued when the previous process ended.
func (s *Server) Recover(ctx context.Context, fail bool) (int, error) {
	return s.runs.Recover(ctx, fail)
}

func (s *Server) routes() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// A path served under other methods answers 405, as the Agent Server does.
	r.HandleMethodNotAllowed = true
	r.RemoveExtraSlash = true
	r.Use(s.recoverPanics(), s.logRequests(), s.cors(), s.authenticate(), s.limitRate(), s.limitBody())
	r.NoRoute(func(c *gin.Context) {
		s.fail(c, notFound("no route %s %s", c.Request.Method, c.Request.URL.Path))
	})
	r.NoMethod(func(c *gin.Context) {
		s.fail(c, errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not a method of %s (allowed: %s)", c.Request.Method, c.Request.URL.Path, c.Writer.Header().Get("Allow")))
	})

	r.GET("/ok", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) })
	r.GET("/info", s.info)
	r.GET("/metrics", func(c *gin.Context) {
		c.Header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		c.Status(http.StatusOK)
		s.metrics.WriteTo(c.Writer)
	})

	r.POST("/assistants", s.createAssistant)
	r.POST("/assistants/search", s.searchAssistants)
	r.POST("/assistants/count", s.countAssistants)
	r.GET("/assistants/:id", s.getAssistant)
	r.PATCH("/assistants/:id", s.updateAssistant)
	r.DELETE("/assistants/:id", s.deleteAssistant)
	r.GET("/assistants/:id/graph", s.assistantGraph)
	r.GET("/assistants/:id/schemas", s.assistantSchemas)
	r.GET("/assistants/:id/subgraphs", s.assistantSubgraphs)
	r.GET("/assistants/:id/subgraphs/:namespace", s.assistantSubgraphs)
	r.POST("/assistants/:id/versions", s.assistantVersions)
	r.POST("/assistants/:id/latest", s.setLatestAssistant)

	r.POST("/threads", s.createThread)
	r.POST("/threads/search", s.searchThreads)
	r.POST("/threads/count", s.countThreads)
	r.POST("/threads/prune", s.pruneThreads)
	r.GET("/threads/:thread", s.getThread)
	r.PATCH("/threads/:thread", s.patchThread)
	r.DELETE("/threads/:thread", s.deleteThread)
	r.POST("/threads/:thread/copy", s.copyThread)
	r.PATCH("/threads/:thread/state", s.patchState)
	r.GET("/threads/:thread/state", s.getState)
	r.GET("/threads/:thread/log", s.getThreadLog)
	r.GET("/threads/:thread/stream", s.joinThreadStream)
	r.POST("/threads/:thread/commands", s.protocolCommands)
	r.POST("/threads/:thread/stream/events", s.protocolEvents)
	r.GET("/threads/:thread/stream/events", s.protocolWebSocket)
	r.POST("/ui/:assistant", s.uiComponents)
	r.GET("/threads/:thread/state/:checkpoint", s.getState)
	r.POST("/threads/:thread/state", s.updateState)
	r.POST("/threads/:thread/state/checkpoint", s.getStateAt)
	r.POST("/threads/:thread/history", s.history)
	r.GET("/threads/:thread/history", s.historyGet)

	r.POST("/threads/:thread/runs", s.createRun)
	r.POST("/threads/:thread/runs/stream", s.streamRun)
	r.POST("/threads/:thread/runs/wait", s.waitRun)
	r.GET("/threads/:thread/runs", s.listRuns)
	r.GET("/threads/:thread/runs/:run", s.getRun)
	r.GET("/threads/:thread/runs/:run/join", s.joinRun)
	r.GET("/threads/:thread/runs/:run/stream", s.joinStream)
	r.POST("/threads/:thread/runs/:run/cancel", s.cancelRun)
	r.DELETE("/threads/:thread/runs/:run", s.deleteRun)
	r.POST("/threads/:thread/runs/crons", s.createCron)
	r.POST("/runs/crons", s.createCron)
	r.POST("/runs/crons/search", s.searchCrons)
	r.POST("/runs/crons/count", s.countCrons)
	r.PATCH("/runs/crons/:cron", s.updateCron)
	r.DELETE("/runs/crons/:cron", s.deleteCron)
	r.POST("/runs/batch", s.createBatch)
	r.POST("/runs/cancel", s.cancelRuns)
	r.POST("/runs/stream", s.streamRun)
	r.POST("/runs/wait", s.waitRun)
	r.GET("/runs/:run/stream", s.joinStatelessStream)
	r.POST("/runs", s.createRun)

	r.PUT("/store/items", s.putItem)
	r.GET("/store/items", s.getItem)
	r.DELETE("/store/items", s.deleteItem)
	r.POST("/store/items/search", s.searchItems)
	r.POST("/store/namespaces", s.listNamespaces)

	r.POST("/chat", s.chat)
	r.POST("/chat/image", s.chatImage)
	r.POST("/hitl/respond", s.respond(formAnswers))
	r.POST("/hitl/continue", s.continueRun(formAnswers))
	for _, k := range s.cfg.Answers {
		r.POST("/"+k.Name+"/respond", s.respond(responseKind(k.Name)))
		r.POST("/"+k.Name+"/continue", s.continueRun(responseKind(k.Name)))
	}
	if s.cfg.Debug != nil {
		r.Any("/debug/*path", gin.WrapH(s.cfg.Debug))
	}
	s.mountWebhooks(r)
	s.mountStudio(r)
	s.mountMCP(r)
	return r
}

func (s *Server) info(c *gin.Context) {
	names := []string{}
	for _, v := range s.reg.List() {
		names = append(names, v.Name)
	}
	c.JSON(http.StatusOK, gin.H{
		"version": Version, "graphctl": true, "graphs": names,
		"flags":          gin.H{"assistants": true, "crons": true, "langsmith": false},
		"uptime_seconds": int(time.Since(s.started).Seconds()),
	})
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// ShutdownGrace bounds how long running steps may finish after a
	// shutdown signal (default 30s).
	ShutdownGrace time.Duration
	// ReadHeaderTimeout and ReadTimeout bound reading requests (defaults 10s
	// and 60s); there is no write timeout, so SSE streams are never cut.
	ReadHeaderTimeout, ReadTimeout time.Duration
}

// CheckAddress refuses a non-loopback address when no API key is configured.
func CheckAddress(addr string, keys []string) error {
	if len(keys) > 0 {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing to listen on %s without authentication: set GRAPHCTL_API_KEYS or bind to 127.0.0.1", addr)
	}
	return nil
}

// Serve accepts connections on ln until ctx is done, then shuts down
// gracefully: it stops accepting, lets running steps finish up to the grace
// period, and cancels what is left (those runs stay resumable).
func (s *Server) Serve(ctx context.Context, ln net.Listener, opts ServeOptions) error {
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 30 * time.Second
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = 10 * time.Second
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = 60 * time.Second
	}
	hs := &http.Server{
		Handler:           s.engine,
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		ReadTimeout:       opts.ReadTimeout,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// Run streams see their connection, to write tokens from the run.
		ConnContext: sse.ConnContext,
	}
	if err := s.Start(ctx); err != nil {
		s.log.Error("start the cron scheduler", "error", err)
	}
	defer s.Wait()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: no new connections; waiting for running steps", "grace", opts.ShutdownGrace)
	deadline, cancel := context.WithTimeout(context.Background(), opts.ShutdownGrace)
	defer cancel()
	runErr := s.runs.Shutdown(deadline)
	if runErr != nil {
		s.log.Warn("shutdown", "error", runErr)
	}
	if !s.hooks.wait(deadline) {
		s.log.Warn("shutdown: run webhooks still being called are dropped")
	}
	// Streams end once their runs have; give them a moment to flush.
	flush, cancelFlush := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelFlush()
	if err := hs.Shutdown(flush); err != nil {
		hs.Close()
	}
	return nil
}

func jsonDecoder(r io.Reader) *json.Decoder {
	return json.NewDecoder(r)
}

// handHead returns how the run manager hands the head it read where a run
// starts to the run (nil when the checkpointer cannot take it).
func handHead(cp checkpoint.Checkpointer) func(context.Context, string, *checkpoint.Snapshot) context.Context {
	if _, ok := cp.(*ephemeral.Checkpointer); ok {
		return ephemeral.WithHead
	}
	return nil
}
