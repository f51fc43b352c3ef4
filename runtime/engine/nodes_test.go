package engine_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// counters counts executions per "counter" name across a test.
var counters sync.Map // string → *int64 guarded by countersMu

var countersMu sync.Mutex

func bump(name string) int {
	countersMu.Lock()
	defer countersMu.Unlock()
	v, _ := counters.LoadOrStore(name, new(int))
	p := v.(*int)
	*p++
	return *p
}

func count(name string) int {
	countersMu.Lock()
	defer countersMu.Unlock()
	v, ok := counters.Load(name)
	if !ok {
		return 0
	}
	return *v.(*int)
}

type testConfig struct {
	Write     map[string]any    `json:"write"`
	Exprs     map[string]string `json:"exprs"`
	FailTimes int               `json:"fail_times"`
	FailCode  string            `json:"fail_code"`
	Retryable bool              `json:"retryable"`
	Sleep     string            `json:"sleep"`
	Interrupt string            `json:"interrupt"`
	Counter   string            `json:"counter"`
	Emit      string            `json:"emit"`
}

type testNode struct {
	cfg   testConfig
	exprs map[string]node.Expr
	sleep time.Duration
}

func init() {
	node.MustRegister(node.Type{
		Name:        "enginetest",
		Description: "a configurable node for engine tests",
		Config: `{
			write?: {...}
			exprs?: [string]: string
			fail_times?: int
			fail_code?: string
			retryable?: bool
			sleep?: string
			interrupt?: string
			counter?: string
			emit?: string
		}`,
		New: func(b node.Builder) (node.Node, error) {
			n := &testNode{exprs: map[string]node.Expr{}}
			if err := b.Decode(&n.cfg); err != nil {
				return nil, err
			}
			for field, src := range n.cfg.Exprs {
				if e := b.Expr("exprs."+field, src, graph.Any); e != nil {
					n.exprs[field] = e
				}
			}
			if n.cfg.Sleep != "" {
				d, err := time.ParseDuration(n.cfg.Sleep)
				if err != nil {
					return nil, err
				}
				n.sleep = d
			}
			return n, nil
		},
	})
}

func (n *testNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	runs := 0
	if n.cfg.Counter != "" {
		runs = bump(n.cfg.Counter)
	}
	if n.sleep > 0 {
		select {
		case <-time.After(n.sleep):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if n.cfg.FailTimes > 0 && runs <= n.cfg.FailTimes {
		code := n.cfg.FailCode
		if code == "" {
			code = "test_failure"
		}
		err := fmt.Errorf("failure %d of %s", runs, in.Node)
		if n.cfg.Retryable {
			return nil, node.Retryable(code, err)
		}
		return nil, &node.Error{Code: code, Err: err}
	}
	if n.cfg.Emit != "" {
		in.Emit(eventOf(n.cfg.Emit))
	}
	if n.cfg.Interrupt != "" {
		return nil, node.Interrupt(n.cfg.Interrupt, map[string]any{"question": "value for " + n.cfg.Interrupt + "?"})
	}
	upd := node.Update{}
	for k, v := range n.cfg.Write {
		upd[k] = v
	}
	for k, e := range n.exprs {
		v, err := e.Eval(in.Scope)
		if err != nil {
			return nil, err
		}
		upd[k] = v
	}
	return upd, nil
}

func init() {
	node.MustRegister(node.Type{
		Name:   "enginetest_waiting",
		Config: "{}",
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(_ context.Context, in *node.Input) (node.Update, error) {
				in.Emit(event.Event{Type: node.UsageEvent, Payload: map[string]any{"prompt_tokens": 5}})
				in.Emit(event.Event{Type: node.UsageEvent, Payload: map[string]any{"prompt_tokens": 7}})
				return nil, node.InterruptWith("answer", nil, node.Update{"status": "WAITING"})
			}), nil
		},
	})
}
