package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphctl/graphctl/server/sse"
)

// StreamGraph is the source of a graph whose one llm node asks the model
// "openai:bench": serve it with $OPENAI_BASE_URL pointing at a Model.
const StreamGraph = `dsl_version: "graphctl/v1"
name: "bench_stream"
description: "One model call, streamed (graphctl bench serve)."
state: messages: {type: "messages"}
start: "talk"
nodes: talk: {type: "llm", config: {model: "openai:bench", system: "Answer."}, next: "END"}
`

// StreamGraphName is the name of the graph in StreamGraph.
const StreamGraphName = "bench_stream"

// TokensResult is what a token latency measurement saw.
type TokensResult struct {
	Tokens int           `json:"tokens"`
	P50    time.Duration `json:"p50_ns"`
	P90    time.Duration `json:"p90_ns"`
	P99    time.Duration `json:"p99_ns"`
	Max    time.Duration `json:"max_ns"`
}

// Tokens streams one run of graph (StreamGraph served over model) whose model
// sends n tokens every interval, and measures for each token the time from
// the model server sending it to this client parsing its SSE frame
// (messages-tuple mode).
func Tokens(ctx context.Context, c *Client, graph string, n int, every time.Duration) (TokensResult, error) {
	resp, err := c.do(ctx, http.MethodPost, "/runs/stream", map[string]any{"assistant_id": graph, "stream_mode": []string{"messages-tuple"},
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("tokens %d %s", n, every)}}}})
	if err != nil {
		return TokensResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return TokensResult{}, fmt.Errorf("POST /runs/stream: %s", resp.Status)
	}
	var lat []time.Duration
	var runErr string
	err = sse.Parse(resp.Body, func(f sse.Frame) error {
		now := time.Now()
		switch f.Event {
		case "error":
			runErr = string(f.Data)
		case "messages":
			var tuple []struct {
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(f.Data, &tuple) != nil || len(tuple) == 0 {
				return nil
			}
			var content string
			if json.Unmarshal(tuple[0].Content, &content) != nil {
				return nil
			}
			// A token's frame carries one time stamp; the whole message at the
			// end carries them all and is skipped.
			if ns, err := strconv.ParseInt(strings.TrimSpace(content), 10, 64); err == nil {
				lat = append(lat, now.Sub(time.Unix(0, ns)))
			}
		}
		return nil
	})
	if err != nil {
		return TokensResult{}, fmt.Errorf("read the stream: %w", err)
	}
	if runErr != "" {
		return TokensResult{}, fmt.Errorf("the streamed run failed: %s", runErr)
	}
	if len(lat) == 0 {
		return TokensResult{}, errors.New("the stream carried no token of the model's reply")
	}
	res := TokensResult{Tokens: len(lat)}
	res.P50, res.P90, res.P99, res.Max = Percentile(lat, 0.5), Percentile(lat, 0.9), Percentile(lat, 0.99), lat[len(lat)-1]
	return res, nil
}

// StreamsResult is what an idle-stream measurement saw.
type StreamsResult struct {
	Streams int `json:"streams"`
	// Runs is the number of held runs the streams join.
	Runs int `json:"runs"`
	// RSSBefore is the serve process's resident memory with the held runs
	// but no stream; RSSAfter with every stream open.
	RSSBefore int64 `json:"rss_before_bytes"`
	RSSAfter  int64 `json:"rss_after_bytes"`
}

// IdleStreams starts runs held runs of graph (StreamGraph over model, whose
// model holds the answer) and opens n SSE streams joining them (GET
// /threads/{id}/runs/{run}/stream) from as many connections, then reads the
// resident memory of the serve process pid. The streams stay idle: the runs
// emit nothing until the model is released, which IdleStreams does before
// it returns.
func IdleStreams(ctx context.Context, base, apiKey string, model *Model, graph string, pid, n, runs int) (StreamsResult, error) {
	if runs < 1 || n < runs {
		return StreamsResult{}, fmt.Errorf("need at least one held run and as many streams (%d runs, %d streams)", runs, n)
	}
	c := NewClient(base, apiKey, runs)
	defer c.Close()
	defer model.Release()
	type held struct{ thread, run string }
	heldRuns := make([]held, runs)
	for i := range heldRuns {
		th, err := c.createThread(ctx)
		if err != nil {
			return StreamsResult{}, err
		}
		var run struct {
			RunID string `json:"run_id"`
		}
		err = c.call(ctx, http.MethodPost, "/threads/"+th+"/runs", map[string]any{"assistant_id": graph,
			"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hold"}}}}, &run)
		if err != nil {
			return StreamsResult{}, err
		}
		heldRuns[i] = held{th, run.RunID}
	}
	for model.Holding() < runs {
		select {
		case <-ctx.Done():
			return StreamsResult{}, fmt.Errorf("%d of %d runs reached the model: %w", model.Holding(), runs, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	res := StreamsResult{Streams: n, Runs: runs}
	var err error
	if res.RSSBefore, err = RSS(pid); err != nil {
		return res, err
	}
	// Every stream has a connection of its own.
	streams := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, DisableKeepAlives: true}}
	open := make([]*http.Response, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			h := heldRuns[i%runs]
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/threads/"+h.thread+"/runs/"+h.run+"/stream", nil)
			if err != nil {
				errs <- err
				return
			}
			if apiKey != "" {
				req.Header.Set("Authorization", "Bearer "+apiKey)
			}
			resp, err := streams.Do(req)
			if err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				errs <- fmt.Errorf("stream %d: %s", i, resp.Status)
				return
			}
			open[i] = resp
		}(i)
	}
	wg.Wait()
	defer func() {
		model.Release()
		for _, r := range open {
			if r != nil {
				r.Body.Close()
			}
		}
		streams.CloseIdleConnections()
	}()
	close(errs)
	if err := <-errs; err != nil {
		return res, fmt.Errorf("open %d streams: %w", n, err)
	}
	if model.Holding() < runs {
		return res, fmt.Errorf("only %d of %d held runs still wait for the model", model.Holding(), runs)
	}
	res.RSSAfter, err = RSS(pid)
	return res, err
}
