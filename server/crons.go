package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // cron time zones on machines without a zoneinfo database

	"github.com/gin-gonic/gin"
	"github.com/robfig/cron/v3"

	"github.com/graphctl/graphctl/runtime/store"
)

// Crons are scheduled runs, as in LangGraph: on a thread (each run continues
// it) or stateless (each run gets a new thread, deleted afterwards unless
// on_run_completed is "keep"). They are stored under cronNS, so they
// survive a restart; a run missed while the server was down runs once when
// it starts again. Schedules are cron expressions in UTC (or the cron's
// timezone): five fields, or six with seconds last as croniter reads them.

var cronNS = []string{"graphctl", "crons"}

// cronPoll is how often replicas sharing a database reload the crons.
const cronPoll = 5 * time.Second

// cronRec is a cron as stored and as the API returns it.
type cronRec struct {
	CronID         string         `json:"cron_id"`
	AssistantID    string         `json:"assistant_id"`
	ThreadID       *string        `json:"thread_id"`
	Schedule       string         `json:"schedule"`
	Timezone       string         `json:"timezone,omitempty"`
	EndTime        *time.Time     `json:"end_time"`
	Payload        map[string]any `json:"payload"`
	Metadata       map[string]any `json:"metadata"`
	Enabled        bool           `json:"enabled"`
	OnRunCompleted string         `json:"on_run_completed,omitempty"`
	UserID         *string        `json:"user_id"`
	NextRunDate    *time.Time     `json:"next_run_date"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
}

// cronParser reads schedules with an optional leading seconds field.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSchedule reads a schedule in a time zone (UTC when empty).
func parseSchedule(spec, tz string) (cron.Schedule, error) {
	fields := strings.Fields(spec)
	if len(fields) == 6 {
		// croniter (LangGraph) puts seconds last.
		fields = append([]string{fields[5]}, fields[:5]...)
	}
	if len(fields) != 5 && len(fields) != 6 && !(len(fields) == 1 && strings.HasPrefix(spec, "@")) {
		return nil, invalid("schedule %q must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds last)", spec)
	}
	expr := strings.Join(fields, " ")
	if tz != "" {
		if _, err := time.LoadLocation(tz); err != nil {
			return nil, invalid("timezone %q is not a known time zone", tz)
		}
		expr = "CRON_TZ=" + tz + " " + expr
	}
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return nil, invalid("schedule %q: %v", spec, err)
	}
	return sched, nil
}

// next computes a cron's next run after t; nil when it has ended.
func (r *cronRec) next(t time.Time) *time.Time {
	sched, err := parseSchedule(r.Schedule, r.Timezone)
	if err != nil || !r.Enabled {
		return nil
	}
	n := sched.Next(t).UTC()
	if n.IsZero() || r.EndTime != nil && n.After(*r.EndTime) {
		return nil
	}
	return &n
}

func (r *cronRec) object() map[string]any {
	m := toMap(r)
	if _, ok := m["timezone"]; !ok {
		m["timezone"] = nil // UTC
	}
	for _, k := range []string{"created_at", "updated_at", "end_time", "next_run_date"} {
		if t, ok := m[k].(string); ok {
			if v, err := time.Parse(time.RFC3339Nano, t); err == nil {
				m[k] = v.UTC().Format(timeLayout)
			}
		}
	}
	return m
}

// cronScheduler keeps the crons in memory and runs them when due.
type cronScheduler struct {
	mu    sync.Mutex
	crons map[string]*cronRec
	wake  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

func (cs *cronScheduler) poke() {
	select {
	case cs.wake <- struct{}{}:
	default:
	}
}

// Start loads the stored crons and runs them on schedule, and starts the
// channels' loops, until ctx is done. Serve calls it (after Recover, so a
// thread's runs keep their order); embedders serving Handler themselves call
// it once.
func (s *Server) Start(ctx context.Context) error {
	var err error
	s.cron.once.Do(func() {
		s.cron.wake = make(chan struct{}, 1)
		err = s.loadCrons(ctx)
		s.cron.wg.Add(2)
		go s.runCrons(ctx)
		go s.runThreadSweeper(ctx)
		s.startLoops(ctx)
	})
	return err
}

// Wait blocks until what Start started has stopped.
func (s *Server) Wait() { s.cron.wg.Wait() }

func (s *Server) loadCrons(ctx context.Context) error {
	items, err := s.st.Search(ctx, cronNS, store.SearchQuery{Limit: 10000000})
	if err != nil {
		return fmt.Errorf("load crons: %w", err)
	}
	s.cron.mu.Lock()
	defer s.cron.mu.Unlock()
	if s.cron.crons == nil || s.cfg.RunQueue != nil {
		// Replicas keep what the Store holds: a cron deleted on another
		// replica is gone here too.
		s.cron.crons = map[string]*cronRec{}
	}
	for _, it := range items {
		if len(it.Namespace) != len(cronNS) {
			continue
		}
		r := &cronRec{}
		if err := fromMap(it.Value, r); err != nil {
			s.log.Warn("unreadable cron", "key", it.Key, "error", err)
			continue
		}
		s.cron.crons[r.CronID] = r
	}
	return nil
}

// runCrons is the scheduler loop: it sleeps until the earliest next run,
// runs every cron that is due and computes its next run.
func (s *Server) runCrons(ctx context.Context) {
	defer s.cron.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if s.cfg.RunQueue != nil {
			// Other replicas create, change and fire crons too.
			if err := s.loadCrons(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("reload crons", "error", err)
			}
		}
		now := time.Now().UTC()
		var due []*cronRec
		wait := time.Hour
		if s.cfg.RunQueue != nil {
			wait = cronPoll
		}
		s.cron.mu.Lock()
		for _, r := range s.cron.crons {
			if !r.Enabled || r.NextRunDate == nil {
				continue
			}
			if !r.NextRunDate.After(now) {
				cp := *r
				due = append(due, &cp)
				r.NextRunDate = r.next(now)
				r.UpdatedAt = now
				if r.NextRunDate == nil {
					continue
				}
			}
			if d := r.NextRunDate.Sub(now); d < wait {
				wait = d
			}
		}
		s.cron.mu.Unlock()
		for _, r := range due {
			s.saveCron(ctx, r.CronID)
			if s.cfg.CronClaim != nil {
				mine, err := s.cfg.CronClaim(ctx, r.CronID, *r.NextRunDate)
				if err != nil {
					s.log.Warn("cron", "cron_id", r.CronID, "error", err)
				}
				if !mine {
					continue // another replica fires it
				}
			}
			s.fireCron(ctx, r)
		}
		if len(due) > 0 {
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.cron.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-timer.C:
		}
	}
}

// saveCron writes the in-memory cron to the Store.
func (s *Server) saveCron(ctx context.Context, id string) error {
	s.cron.mu.Lock()
	r, ok := s.cron.crons[id]
	var value map[string]any
	if ok {
		value = toMap(r)
	}
	s.cron.mu.Unlock()
	if !ok {
		return nil
	}
	if err := s.st.Put(context.WithoutCancel(ctx), cronNS, id, value, store.PutOptions{Index: []string{}}); err != nil {
		s.log.Error("save cron", "cron_id", id, "error", err)
		return fmt.Errorf("save cron %s: %w", id, err)
	}
	return nil
}

// fireCron creates one run of a cron through the run endpoints.
func (s *Server) fireCron(ctx context.Context, r *cronRec) {
	body := map[string]any{}
	for k, v := range r.Payload {
		body[k] = v
	}
	body["assistant_id"] = r.AssistantID
	meta := map[string]any{}
	if m, ok := body["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta["cron_id"] = r.CronID
	body["metadata"] = meta
	path := "/runs"
	switch {
	case r.ThreadID != nil:
		path = "/threads/" + *r.ThreadID + "/runs"
		if _, ok := body["multitask_strategy"]; !ok {
			body["multitask_strategy"] = "enqueue"
		}
	case r.OnRunCompleted == "keep":
		path = "/threads/" + newID() + "/runs"
		body["if_not_exists"] = "create"
	}
	b, _ := json.Marshal(body)
	status, resp := s.internalRequest(ctx, http.MethodPost, path, b)
	if status != http.StatusOK {
		s.log.Warn("cron run refused", "cron_id", r.CronID, "status", status, "response", string(resp))
		return
	}
	s.log.Info("cron run created", "cron_id", r.CronID, "path", path)
}

type cronBody struct {
	Schedule        *string        `json:"schedule"`
	AssistantID     string         `json:"assistant_id"`
	Timezone        *string        `json:"timezone"`
	EndTime         cronTime       `json:"end_time"`
	Input           any            `json:"input"`
	Metadata        map[string]any `json:"metadata"`
	Config          map[string]any `json:"config"`
	Context         any            `json:"context"`
	Webhook         any            `json:"webhook"`
	InterruptBefore any            `json:"interrupt_before"`
	InterruptAfter  any            `json:"interrupt_after"`
	Multitask       *string        `json:"multitask_strategy"`
	OnRunCompleted  *string        `json:"on_run_completed"`
	Enabled         *bool          `json:"enabled"`
	StreamMode      any            `json:"stream_mode"`
	IfNotExists     any            `json:"if_not_exists"`
	CheckpointDur   any            `json:"checkpoint_during"`
	Durability      any            `json:"durability"`
}

// payload is the run request a cron makes.
func (b *cronBody) payload(into map[string]any) map[string]any {
	if into == nil {
		into = map[string]any{}
	}
	set := func(k string, v any) {
		if v != nil {
			into[k] = v
		}
	}
	set("input", b.Input)
	set("config", b.Config)
	set("context", b.Context)
	set("interrupt_before", b.InterruptBefore)
	set("interrupt_after", b.InterruptAfter)
	set("stream_mode", b.StreamMode)
	set("webhook", b.Webhook)
	set("durability", b.Durability)
	set("checkpoint_during", b.CheckpointDur)
	if b.Multitask != nil {
		into["multitask_strategy"] = *b.Multitask
	}
	return into
}

// checkCronRun validates what a cron's runs will send, so that mistakes are
// a 4xx now rather than a failed run later.
func (s *Server) checkCronRun(ctx context.Context, assistant string, payload map[string]any) error {
	a, err := s.resolveAssistant(ctx, assistant)
	if err != nil {
		return err
	}
	v, ok := s.reg.Get(a.GraphID)
	if !ok {
		return notFound("assistant %q runs graph %q, which is not loaded", a.AssistantID, a.GraphID)
	}
	var rb runBody
	b, _ := json.Marshal(payload)
	if err := json.Unmarshal(b, &rb); err != nil {
		return invalid("cron payload: %v", err)
	}
	if ms, ok := payload["multitask_strategy"].(string); ok && ms != "reject" && ms != "enqueue" && ms != "interrupt" && ms != "rollback" {
		return invalid("multitask_strategy %q is not one of reject, enqueue, interrupt, rollback", ms)
	}
	if _, err := parseModes(rb.StreamMode); err != nil {
		return err
	}
	if _, err := convertInput(v.Graph, rb.Input); err != nil {
		return err
	}
	if err := checkRunHints(&rb); err != nil {
		return err
	}
	return checkRunNodes(v.Graph, &rb)
}

func (s *Server) createCron(c *gin.Context) {
	var body cronBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	thread := c.Param("thread")
	if body.Schedule == nil || *body.Schedule == "" {
		s.fail(c, invalid("schedule is required (a cron expression, e.g. \"0 9 * * *\")"))
		return
	}
	if body.AssistantID == "" {
		s.fail(c, invalid("assistant_id is required"))
		return
	}
	if err := checkWebhook(body.Webhook); err != nil {
		s.fail(c, err)
		return
	}
	tz := ""
	if body.Timezone != nil {
		tz = *body.Timezone
	}
	if _, err := parseSchedule(*body.Schedule, tz); err != nil {
		s.fail(c, err)
		return
	}
	r := &cronRec{CronID: newID(), AssistantID: body.AssistantID, Schedule: *body.Schedule, Timezone: tz, EndTime: body.EndTime.Time,
		Payload: body.payload(nil), Metadata: body.Metadata, Enabled: true}
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	if body.Enabled != nil {
		r.Enabled = *body.Enabled
	}
	if thread != "" {
		if _, err := s.loadThread(c, thread); err != nil {
			s.fail(c, err)
			return
		}
		r.ThreadID = &thread
		if body.OnRunCompleted != nil {
			s.fail(c, invalid("on_run_completed applies to stateless crons only"))
			return
		}
	} else {
		r.OnRunCompleted = "delete"
		if body.OnRunCompleted != nil {
			if *body.OnRunCompleted != "delete" && *body.OnRunCompleted != "keep" {
				s.fail(c, invalid("on_run_completed %q is not one of delete, keep", *body.OnRunCompleted))
				return
			}
			r.OnRunCompleted = *body.OnRunCompleted
		}
	}
	if err := s.checkCronRun(c, r.AssistantID, r.Payload); err != nil {
		s.fail(c, err)
		return
	}
	now := time.Now().UTC()
	r.CreatedAt, r.UpdatedAt = now, now
	r.NextRunDate = r.next(now)
	s.putCron(r)
	if err := s.saveCron(c, r.CronID); err != nil {
		s.dropCron(r.CronID)
		s.fail(c, err)
		return
	}
	s.cron.poke()
	c.JSON(http.StatusOK, r.object())
}

func (s *Server) putCron(r *cronRec) {
	s.cron.mu.Lock()
	defer s.cron.mu.Unlock()
	if s.cron.crons == nil {
		s.cron.crons = map[string]*cronRec{}
	}
	s.cron.crons[r.CronID] = r
}

func (s *Server) dropCron(id string) {
	s.cron.mu.Lock()
	defer s.cron.mu.Unlock()
	delete(s.cron.crons, id)
}

// cronCopy returns a copy of a cron, or a 404.
func (s *Server) cronCopy(id string) (*cronRec, error) {
	s.cron.mu.Lock()
	defer s.cron.mu.Unlock()
	r, ok := s.cron.crons[id]
	if !ok {
		return nil, notFound("cron %q not found", id)
	}
	cp := *r
	return &cp, nil
}

func (s *Server) updateCron(c *gin.Context) {
	id := c.Param("cron")
	var body cronBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	r, err := s.cronCopy(id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := checkWebhook(body.Webhook); err != nil {
		s.fail(c, err)
		return
	}
	if body.Schedule != nil {
		r.Schedule = *body.Schedule
	}
	if body.Timezone != nil {
		r.Timezone = *body.Timezone
	}
	if _, err := parseSchedule(r.Schedule, r.Timezone); err != nil {
		s.fail(c, err)
		return
	}
	if body.EndTime.Set {
		r.EndTime = body.EndTime.Time // null: the cron no longer ends
	}
	if body.Enabled != nil {
		r.Enabled = *body.Enabled
	}
	if body.Metadata != nil {
		r.Metadata = body.Metadata
	}
	if body.OnRunCompleted != nil {
		if r.ThreadID != nil || *body.OnRunCompleted != "delete" && *body.OnRunCompleted != "keep" {
			s.fail(c, invalid("on_run_completed must be delete or keep, and applies to stateless crons only"))
			return
		}
		r.OnRunCompleted = *body.OnRunCompleted
	}
	payload := map[string]any{}
	for k, v := range r.Payload {
		payload[k] = v
	}
	r.Payload = body.payload(payload)
	if err := s.checkCronRun(c, r.AssistantID, r.Payload); err != nil {
		s.fail(c, err)
		return
	}
	now := time.Now().UTC()
	r.UpdatedAt = now
	r.NextRunDate = r.next(now)
	s.cron.mu.Lock()
	_, still := s.cron.crons[id]
	if still {
		s.cron.crons[id] = r
	}
	s.cron.mu.Unlock()
	if !still {
		s.fail(c, notFound("cron %q not found", id))
		return
	}
	if err := s.saveCron(c, id); err != nil {
		s.fail(c, err)
		return
	}
	s.cron.poke()
	c.JSON(http.StatusOK, r.object())
}

func (s *Server) deleteCron(c *gin.Context) {
	id := c.Param("cron")
	if _, err := s.cronCopy(id); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.removeCron(c, id); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) removeCron(ctx context.Context, id string) error {
	s.dropCron(id)
	if err := s.st.Delete(ctx, cronNS, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete cron %s: %w", id, err)
	}
	return nil
}

// removeThreadCrons deletes the crons of a deleted thread.
func (s *Server) removeThreadCrons(ctx context.Context, thread string) {
	s.cron.mu.Lock()
	var ids []string
	for id, r := range s.cron.crons {
		if r.ThreadID != nil && *r.ThreadID == thread {
			ids = append(ids, id)
		}
	}
	s.cron.mu.Unlock()
	for _, id := range ids {
		if err := s.removeCron(ctx, id); err != nil {
			s.log.Warn("delete cron of a deleted thread", "cron_id", id, "error", err)
		}
	}
}

type cronFilter struct {
	AssistantID string         `json:"assistant_id"`
	ThreadID    string         `json:"thread_id"`
	Enabled     *bool          `json:"enabled"`
	Metadata    map[string]any `json:"metadata"`
}

func (f *cronFilter) match(r *cronRec) bool {
	if f.AssistantID != "" && r.AssistantID != f.AssistantID {
		return false
	}
	if f.ThreadID != "" && (r.ThreadID == nil || *r.ThreadID != f.ThreadID) {
		return false
	}
	if len(f.Metadata) > 0 && !jsonContains(r.Metadata, f.Metadata) {
		return false
	}
	return f.Enabled == nil || *f.Enabled == r.Enabled
}

// cronTime is a cron's end_time in a request: Set when the member is
// there, Time nil when it is null. A time without a zone (what Python's
// datetime.isoformat gives for a naive datetime) is UTC, as schedules are.
type cronTime struct {
	Set  bool
	Time *time.Time
}

// UnmarshalJSON reads null or a time in RFC 3339, with or without its zone.
func (ct *cronTime) UnmarshalJSON(b []byte) error {
	ct.Set = true
	if string(b) == "null" {
		ct.Time = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		kind := map[byte]string{'{': "object", '[': "array", 't': "bool", 'f': "bool"}[b[0]]
		if kind == "" {
			kind = "number"
		}
		return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[string](), Field: "end_time"}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		naive, nerr := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.UTC)
		if nerr != nil {
			return err // a *time.ParseError: 422 naming the value
		}
		t = naive
	}
	t = t.UTC()
	ct.Time = &t
	return nil
}

func (s *Server) matchingCrons(f *cronFilter) []map[string]any {
	s.cron.mu.Lock()
	defer s.cron.mu.Unlock()
	var out []map[string]any
	for _, r := range s.cron.crons {
		if f.match(r) {
			out = append(out, r.object())
		}
	}
	return out
}

func (s *Server) searchCrons(c *gin.Context) {
	var body struct {
		cronFilter
		paging
		SortBy    string   `json:"sort_by"`
		SortOrder string   `json:"sort_order"`
		Select    []string `json:"select"`
	}
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.paging.check(10); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkSort(body.SortBy, body.SortOrder, "cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkSelect(body.Select, cronFields); err != nil {
		s.fail(c, err)
		return
	}
	found := s.matchingCrons(&body.cronFilter)
	by := body.SortBy
	if by == "" {
		by = "created_at"
	}
	sortObjects(found, by, "cron_id", body.SortOrder == "asc")
	page := pageOf(found, body.paging)
	out := make([]map[string]any, len(page))
	for i, o := range page {
		out[i] = pick(o, body.Select)
	}
	setPagination(c, body.paging, len(out), len(found))
	c.JSON(http.StatusOK, out)
}

func (s *Server) countCrons(c *gin.Context) {
	var body cronFilter
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, len(s.matchingCrons(&body)))
}
