package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/graphctl/graphctl/runtime/store"
)

// threadTTLNS is the Store namespace of thread expiries, one item per
// thread that has a TTL ({"expires_at"}), so a sweep reads only those.
var threadTTLNS = []string{"graphctl", "thread_ttl"}

// defaultThreadSweep is how often expired threads are deleted when
// Config.ThreadSweepInterval is not set.
const defaultThreadSweep = time.Minute

// threadTTL is LangGraph's ThreadTTL: the thread is deleted (strategy
// "delete", the only one) ttl minutes from when it was set.
type threadTTL struct {
	Strategy string
	Minutes  float64
}

// parseThreadTTL reads a ttl field: {strategy?, ttl} or a number of
// minutes. A nil value is no TTL.
func parseThreadTTL(v any) (*threadTTL, error) {
	if v == nil {
		return nil, nil
	}
	t := threadTTL{Strategy: "delete"}
	switch x := v.(type) {
	case float64:
		t.Minutes = x
	case map[string]any:
		if s, ok := x["strategy"]; ok && s != nil {
			str, _ := s.(string)
			if str != "delete" {
				return nil, invalid("ttl.strategy must be \"delete\", got %v", s)
			}
		}
		m, ok := x["ttl"].(float64)
		if !ok {
			return nil, invalid("ttl.ttl must be a number of minutes, got %v", x["ttl"])
		}
		t.Minutes = m
	default:
		return nil, invalid("ttl must be an object {strategy: \"delete\", ttl: minutes}, got %v", v)
	}
	if t.Minutes <= 0 {
		return nil, invalid("ttl must be a positive number of minutes, got %v", t.Minutes)
	}
	if t.Minutes > maxTTLMinutes {
		return nil, invalid("ttl must be at most %d minutes (100 years), got %v", maxTTLMinutes, t.Minutes)
	}
	return &t, nil
}

// maxTTLMinutes is the longest TTL (of a thread or a store item) taken:
// 100 years, well inside what a time.Duration holds.
const maxTTLMinutes = 100 * 365 * 24 * 60

// setThreadTTL records a TTL on a thread record (saved by the caller) and
// its expiry in threadTTLNS.
func (s *Server) setThreadTTL(ctx context.Context, id string, rec map[string]any, t *threadTTL) error {
	expires := time.Now().UTC().Add(time.Duration(t.Minutes * float64(time.Minute)))
	rec["ttl"] = map[string]any{"strategy": t.Strategy, "ttl": t.Minutes, "expires_at": expires.Format(time.RFC3339Nano)}
	if err := s.st.Put(ctx, threadTTLNS, id, map[string]any{"expires_at": expires.Format(time.RFC3339Nano)}, store.PutOptions{Index: []string{}}); err != nil {
		return fmt.Errorf("save the ttl of thread %q: %w", id, err)
	}
	return nil
}

// sweepThreads deletes every thread whose TTL has passed, except one whose
// run is active (swept at a later pass). It returns how many it deleted.
func (s *Server) sweepThreads(ctx context.Context, now time.Time) (int, error) {
	items, err := s.st.Search(ctx, threadTTLNS, store.SearchQuery{Limit: 10000000})
	if err != nil {
		return 0, fmt.Errorf("list thread ttls: %w", err)
	}
	n := 0
	for _, it := range items {
		if len(it.Namespace) != len(threadTTLNS) {
			continue
		}
		raw, _ := it.Value["expires_at"].(string)
		expires, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil || expires.After(now) {
			continue
		}
		if _, busy := s.runs.Busy(it.Key); busy {
			continue
		}
		if _, err := s.loadThread(ctx, it.Key); err == nil {
			if err := s.removeThread(ctx, it.Key); err != nil {
				return n, err
			}
			n++
		}
		if err := s.st.Delete(ctx, threadTTLNS, it.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
			return n, fmt.Errorf("delete the ttl of thread %q: %w", it.Key, err)
		}
	}
	return n, nil
}

// runThreadSweeper sweeps expired threads every interval until ctx ends.
func (s *Server) runThreadSweeper(ctx context.Context) {
	defer s.cron.wg.Done()
	every := s.cfg.ThreadSweepInterval
	if every <= 0 {
		every = defaultThreadSweep
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if n, err := s.sweepThreads(ctx, now); err != nil {
				s.log.Warn("thread ttl sweep", "error", err)
			} else if n > 0 {
				s.log.Info("thread ttl sweep", "deleted", n)
			}
		}
	}
}
