package evalguard_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/load/evalguard"
)

// bomb's comprehension builds nine million values: minutes and gigabytes
// without a limit.
const bomb = `import "list"

dsl_version: "graphctl/v1"
name:        "bomb"
vars: {
	small: 1
	big: [for i in list.Range(0, 3000, 1) for j in list.Range(0, 3000, 1) {i * j}]
}
state: messages: {type: "messages"}
start: "n"
nodes: n: {type: "reply", config: text: "hi", next: "END"}
`

const fine = `dsl_version: "graphctl/v1"
name:        "fine"
state: messages: {type: "messages"}
start: "n"
nodes: n: {type: "reply", config: text: "hi", next: "END"}
`

func write(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		lim    evalguard.Limits
		want   string // in the diagnostic; "" for none
		wantAt string // line:col
	}{
		{"fine file", fine, evalguard.DefaultLimits(), "", ""},
		// Plain data is not evaluated in a child: no limit can be hit, not
		// even one that no child process could meet.
		{"plain data", fine, evalguard.Limits{Time: time.Nanosecond}, "", ""},
		{"a reference", "n: \"n\"\nstart: n\n" + fine[strings.Index(fine, "state"):], evalguard.Limits{Time: time.Nanosecond}, "time limit of 1ns (--max-eval-time)", ":1:1:"},
		{"time limit", bomb, evalguard.Limits{Time: time.Second}, "time limit of 1s (--max-eval-time)", ":7:8:"},
		{"memory limit", bomb, evalguard.Limits{Memory: 64 << 20}, "memory limit of 64MiB (--max-eval-memory)", ":7:8:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(t, "g.cue", tt.src)
			d, err := evalguard.Check(context.Background(), path, tt.lim)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if tt.want == "" {
				if len(d) != 0 {
					t.Fatalf("diagnostics for a file within the limits: %v", d)
				}
				return
			}
			if len(d) != 1 || d[0].Code != "eval-limit" || !strings.Contains(d[0].String(), tt.want) || !strings.Contains(d[0].String(), path+tt.wantAt) {
				t.Fatalf("diagnostics %v; want one eval-limit at %s%s saying %q", d, path, tt.wantAt, tt.want)
			}
		})
	}
}

func TestCheckStopsWhenItsContextEnds(t *testing.T) {
	path := write(t, "g.cue", bomb)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("SIGTERM")
	time.AfterFunc(200*time.Millisecond, func() { cancel(stop) })
	_, err := evalguard.Check(ctx, path, evalguard.Limits{Time: time.Hour})
	if !errors.Is(err, stop) {
		t.Fatalf("Check after its context ended: %v, want the cause", err)
	}
}

func TestSizes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{{"512MiB", 512 << 20}, {"1GB", 1e9}, {"2gib", 2 << 30}, {"100", 100}, {"0", 0}, {"1.5KiB", 1536}}
	for _, tt := range tests {
		if got, err := evalguard.ParseSize(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "lots", "-1MB"} {
		if _, err := evalguard.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	if got := evalguard.FormatSize(512 << 20); got != "512MiB" {
		t.Errorf("FormatSize = %s", got)
	}
}
