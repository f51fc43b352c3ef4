package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTutorial walks docs/tutorial.md as a reader would, so that it cannot
// rot: every file it shows is written, every command it shows is run with the
// graphctl under test, and what it says a command prints is checked.
//
// The tutorial's conventions:
//   - <!-- file: NAME --> right before a fenced block: the block is the
//     content of NAME (a later block for the same NAME replaces it).
//   - A ```console block: each "$ COMMAND" line is run with bash in the
//     tutorial's directory; the lines after it are what it prints (stdout and
//     stderr together), each matching a line of the output, in order, with
//     "…" standing for any text. A command fails the test by exiting non-zero
//     unless its expected output has a line "[exit N]" with that status. A
//     command ending in " &" runs in the background until the test ends; its
//     expected lines are waited for.
//   - <!-- output of: COMMAND --> right before a fenced block: the block is
//     exactly what COMMAND prints on stdout (a Mermaid picture, say).
//   - The address 127.0.0.1:8123 is replaced by a free port.
func TestTutorial(t *testing.T) {
	doc := filepath.Join(repoRoot(t), "docs", "tutorial.md")
	steps, err := parseTutorial(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 10 {
		t.Fatalf("the tutorial has only %d steps", len(steps))
	}
	dir := t.TempDir()
	bin := t.TempDir()
	// The graphctl a reader installs, built from this tree.
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "graphctl"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8"}
	for _, s := range steps {
		switch s.kind {
		case "file":
			path := filepath.Join(dir, s.name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(s.body), 0o644); err != nil {
				t.Fatal(err)
			}
		case "command":
			command := strings.ReplaceAll(s.name, "127.0.0.1:8123", port)
			for i, line := range s.expect {
				s.expect[i] = strings.ReplaceAll(line, "127.0.0.1:8123", port)
			}
			if rest, bg := strings.CutSuffix(command, " &"); bg {
				runBackground(t, dir, env, rest, s)
				continue
			}
			out, code := runShell(t, dir, env, command)
			if code != s.exit {
				t.Fatalf("%s: `%s` exited %d, want %d; it printed:\n%s", s.where, command, code, s.exit, out)
			}
			if missing := matchLines(out, s.expect); missing != "" {
				t.Fatalf("%s: `%s` printed\n%s\nwhich lacks the line %q (in the tutorial's order)", s.where, command, out, missing)
			}
		case "output":
			command := strings.ReplaceAll(s.name, "127.0.0.1:8123", port)
			cmd := exec.Command("bash", "-c", command)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: `%s`: %v", s.where, command, err)
			}
			if string(out) != s.body {
				t.Fatalf("%s: the tutorial shows\n%s\nbut `%s` prints\n%s", s.where, s.body, command, out)
			}
		}
	}
}

// tutorialStep is one file to write, command to run or output to compare.
type tutorialStep struct {
	kind   string // file, command or output
	name   string // the file, or the command
	body   string // a file's content, or an output block
	expect []string
	exit   int
	where  string // docs/tutorial.md:LINE
}

var (
	fileMarker   = regexp.MustCompile(`^<!--\s*file:\s*(\S+)\s*-->$`)
	outputMarker = regexp.MustCompile(`^<!--\s*output of:\s*(.+?)\s*-->$`)
	exitLine     = regexp.MustCompile(`^\[exit (\d+)\]$`)
)

func parseTutorial(path string) ([]tutorialStep, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var steps []tutorialStep
	var marker, markerKind string
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if m := fileMarker.FindStringSubmatch(text); m != nil {
			marker, markerKind = m[1], "file"
			continue
		}
		if m := outputMarker.FindStringSubmatch(text); m != nil {
			marker, markerKind = m[1], "output"
			continue
		}
		if !strings.HasPrefix(text, "```") {
			if strings.TrimSpace(text) != "" {
				marker = ""
			}
			continue
		}
		info := strings.TrimSpace(strings.TrimPrefix(text, "```"))
		start := line
		var body []string
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "```" {
				break
			}
			body = append(body, sc.Text())
		}
		where := fmt.Sprintf("%s:%d", filepath.Base(path), start)
		switch {
		case marker != "":
			steps = append(steps, tutorialStep{kind: markerKind, name: marker, body: strings.Join(body, "\n") + "\n", where: where})
		case info == "console":
			for _, b := range body {
				if cmd, ok := strings.CutPrefix(b, "$ "); ok {
					steps = append(steps, tutorialStep{kind: "command", name: cmd, where: where})
					continue
				}
				if len(steps) == 0 || steps[len(steps)-1].kind != "command" {
					return nil, fmt.Errorf("%s: output before any command", where)
				}
				last := &steps[len(steps)-1]
				if m := exitLine.FindStringSubmatch(b); m != nil {
					fmt.Sscan(m[1], &last.exit)
					continue
				}
				if strings.TrimSpace(b) != "" {
					last.expect = append(last.expect, b)
				}
			}
		}
		marker = ""
	}
	return steps, sc.Err()
}

// matchLines returns the first expected line that no later line of out
// matches, or "" when all match in order.
func matchLines(out string, expect []string) string {
	lines := strings.Split(out, "\n")
	i := 0
	for _, want := range expect {
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(strings.TrimRight(want, " ")), "…", ".*") + "\\s*$")
		for ; i < len(lines) && !re.MatchString(lines[i]); i++ {
		}
		if i == len(lines) {
			return want
		}
		i++
	}
	return ""
}

func runShell(t *testing.T, dir string, env []string, command string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("`%s`: %v", command, err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// runBackground starts a command that runs until the test ends and waits for
// its expected lines.
func runBackground(t *testing.T, dir string, env []string, command string, s tutorialStep) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec "+command)
	cmd.Dir, cmd.Env = dir, env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(time.Minute)
	for matchLines(out.String(), s.expect) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("%s: `%s` did not print %q; it printed:\n%s", s.where, command, matchLines(out.String(), s.expect), out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a 127.0.0.1 address no one listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
