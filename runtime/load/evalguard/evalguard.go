// Package evalguard bounds the evaluation of graph files. CUE evaluation has
// no limits and cannot be interrupted: a comprehension over two ranges of
// a few thousand items runs for minutes and takes gigabytes. So a graph file
// is first evaluated in a child process — the running binary started again,
// which this package's init turns into the evaluator — that is killed when
// it runs past the time limit, stops itself past the memory limit, and dies
// with its parent (SIGTERM, Ctrl-C). Only a file that evaluates within the
// limits is then loaded in the calling process. A file past a limit gets a
// diagnostic at its first costly expression (a comprehension, a Range or
// Repeat call, a multiplication) naming the limit and the flag that sets it.
//
// A file whose evaluation is bounded by its size (load.Bounded: YAML, or CUE
// without references, comprehensions, imports, operators or calls; a few
// megabytes and some 25,000 fields and list items at most) cannot run away: it is loaded directly, without the
// child process.
//
// A binary uses the guard by importing this package (its init must run in
// the child): cmd/graphctl does. Library users who load trusted files need
// nothing of it.
package evalguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/load"
)

// Limits bound one graph file's evaluation.
type Limits struct {
	// Time is the wall-clock limit; 0 means none.
	Time time.Duration
	// Memory is the heap limit in bytes; 0 means none.
	Memory int64
	// Off skips the guard: the file is evaluated in this process (as it is
	// when neither limit is set).
	Off bool
}

// Default limits: generous for any real graph file, which evaluates in
// milliseconds and a few megabytes.
const (
	DefaultTime   = 10 * time.Second
	DefaultMemory = 512 << 20
)

// DefaultLimits returns the default limits.
func DefaultLimits() Limits { return Limits{Time: DefaultTime, Memory: DefaultMemory} }

// Flag names the limits are set with, named in diagnostics.
const (
	TimeFlag   = "--max-eval-time"
	MemoryFlag = "--max-eval-memory"
)

// childEnv carries the child's job: the files to evaluate and its memory limit.
const childEnv = "GRAPHCTL_EVALGUARD_CHILD"

// exitMemory is the child's exit status when it went past its memory limit.
const exitMemory = 86

type job struct {
	Files  []string `json:"files"`
	Memory int64    `json:"memory"`
}

func init() {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	os.Exit(child(spec))
}

// child evaluates the job's files and exits: 0 when done, exitMemory past
// the memory limit.
func child(spec string) int {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintln(os.Stderr, "evalguard: bad job:", err)
		return 2
	}
	if j.Memory > 0 {
		debug.SetMemoryLimit(j.Memory)
		go watchMemory(j.Memory)
	}
	for _, f := range j.Files {
		load.File(f) // problems are the parent's to report
	}
	return 0
}

// watchMemory ends the process when the live heap goes past limit.
func watchMemory(limit int64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && int64(sample[0].Value.Uint64()) > limit {
			os.Exit(exitMemory)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Check evaluates the graph file at path (with its test files) in a child
// process within lim. It returns a diagnostic when a limit was hit, and an
// error when ctx ended (the child is killed) or the child could not run.
func Check(ctx context.Context, path string, lim Limits) (diag.List, error) {
	if lim.Off || lim.Time <= 0 && lim.Memory <= 0 {
		return nil, nil
	}
	files := append([]string{path}, load.TestFiles(path)...)
	if load.IsTestFile(path) {
		files = []string{path}
	}
	if bounded(files) {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("evaluate %s in a child process: %w", path, err)
	}
	spec, _ := json.Marshal(job{Files: absolute(files), Memory: lim.Memory})
	runCtx := ctx
	if lim.Time > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, lim.Time)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	cmd.SysProcAttr = childAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	switch {
	case err == nil:
		return nil, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("loading %s stopped: %w", path, context.Cause(ctx))
	case runCtx.Err() != nil:
		return limitDiag(path, files, fmt.Sprintf("evaluating the file took longer than the time limit of %s (%s)", lim.Time, TimeFlag)), nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == exitMemory {
		return limitDiag(path, files, fmt.Sprintf("evaluating the file took more than the memory limit of %s (%s)", FormatSize(lim.Memory), MemoryFlag)), nil
	}
	return nil, fmt.Errorf("evaluate %s in a child process (after %s): %v: %s", path, time.Since(start).Round(time.Millisecond), err, strings.TrimSpace(stderr.String()))
}

// bounded reports whether the files can be read and their evaluation cannot
// outgrow their size.
func bounded(files []string) bool {
	srcs := make([]load.SourceFile, 0, len(files))
	for _, f := range files {
		data, d, err := load.ReadFile(f)
		switch {
		case err != nil:
			return false
		case d != nil:
			return true // too large: reported without being parsed
		}
		srcs = append(srcs, load.SourceFile{Name: f, Data: data})
	}
	return load.Bounded(srcs)
}

func absolute(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		if a, err := filepath.Abs(f); err == nil {
			out[i] = a
		} else {
			out[i] = f
		}
	}
	return out
}

// limitDiag is the diagnostic of a file stopped at a limit, at its first
// costly expression (else the top of the file).
func limitDiag(path string, files []string, what string) diag.List {
	var srcs []load.SourceFile
	for _, f := range files {
		if data, d, err := load.ReadFile(f); err == nil && d == nil {
			srcs = append(srcs, load.SourceFile{Name: f, Data: data})
		}
	}
	pos := diag.Pos{File: path, Line: 1, Col: 1}
	where := ""
	if c := load.Costly(srcs); len(c) > 0 {
		pos = c[0]
		where = "; this expression is the first that can grow without bound"
		if len(c) > 1 {
			var more []string
			for _, p := range c[1:min(len(c), 4)] {
				more = append(more, fmt.Sprintf("%d:%d", p.Line, p.Col))
			}
			where += " (others at " + strings.Join(more, ", ") + ")"
		}
	}
	var l diag.List
	l.Errorf(pos, "eval-limit", "", "%s%s", what, where)
	return l
}

// Load checks the graph file at path within lim, then loads, validates and
// compiles it as runtime.Load does.
func Load(ctx context.Context, path string, lim Limits) (*compile.Graph, diag.List, error) {
	if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
		return runtime.Load(path) // the loader reports the missing file, a directory, a pipe
	}
	d, err := Check(ctx, path, lim)
	if err != nil || d.HasErrors() {
		return nil, d, err
	}
	return runtime.Load(path)
}

// ParseSize reads a byte size: a number with an optional unit (B, KB, MB,
// GB, KiB, MiB, GiB; case-insensitive).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	units := []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"b", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (512MiB, 1GB)", s)
	}
	return int64(n * float64(mult)), nil
}

// FormatSize writes a byte size with a binary unit.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
