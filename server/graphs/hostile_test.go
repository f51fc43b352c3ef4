package graphs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/engine"
)

// TestBadFilesOfAGraphsDirectory puts beside a valid graph the files a
// graphs directory should never hold: a symbolic link to itself, a named
// pipe, a link to a device and a second graph of the same name. Each is an
// error at file:line:col with its code: Open refuses the directory with all
// of them at once, OpenLenient serves the valid graph and lists them in
// Problems, and none makes either wait on the pipe or read the device.
func TestBadFilesOfAGraphsDirectory(t *testing.T) {
	dir := t.TempDir()
	db := openBadger(t)
	newEngine := func(g *compile.Graph) (*engine.Engine, error) {
		return engine.New(g, db.Checkpointer(), engine.Options{}), nil
	}
	t0 := time.Unix(1_700_000_000, 0)
	write(t, filepath.Join(dir, "a_hello.cue"), strings.Replace(graphV1, "REPLY", "one", 1), t0)
	write(t, filepath.Join(dir, "b_again.cue"), strings.Replace(graphV1, "REPLY", "two", 1), t0)
	if err := os.Symlink(filepath.Join(dir, "loop.cue"), filepath.Join(dir, "loop.cue")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.cue")); err != nil {
		t.Fatal(err)
	}
	want := []struct{ file, at, code, message string }{
		{"b_again.cue", "2:8", CodeDuplicateGraph, `graph name "hello" is already served from ` + filepath.Join(dir, "a_hello.cue")},
		{"loop.cue", "1:1", CodeUnreadable, "the graph file cannot be read: too many levels of symbolic links"},
		{"pipe.yaml", "1:1", CodeUnreadable, "the graph file cannot be read: not a regular file (a named pipe)"},
		{"zero.cue", "1:1", CodeUnreadable, "the graph file cannot be read: not a regular file (a device)"},
	}
	check := func(what string, diags diag.List) {
		t.Helper()
		if len(diags) != len(want) {
			t.Fatalf("%s: %d diagnostics, want %d:\n%v", what, len(diags), len(want), diags)
		}
		for i, w := range want {
			d := diags[i]
			at := strings.Join([]string{filepath.Join(dir, w.file), w.at}, ":")
			if !strings.HasPrefix(d.String(), at+": ") || d.Code != w.code || !strings.Contains(d.Message, w.message) {
				t.Errorf("%s: diagnostic %d = %s; want at %s [%s] %q", what, i, d, at, w.code, w.message)
			}
		}
	}

	reg, diags, err := Open(dir, newEngine, nil)
	if reg != nil || err != nil {
		t.Fatalf("Open = %v, %v; want no registry and the diagnostics", reg, err)
	}
	check("Open", diags)

	reg, _, err = OpenLenient(dir, newEngine, nil)
	if err != nil || reg == nil {
		t.Fatalf("OpenLenient: %v", err)
	}
	defer reg.Close()
	if list := reg.List(); len(list) != 1 || list[0].File != filepath.Join(dir, "a_hello.cue") {
		t.Fatalf("served %v, want a_hello.cue's graph alone", list)
	}
	check("Problems", reg.Problems())

	// A pipe that appears while the server runs is kept out the same way,
	// once: an unchanged unreadable file is not loaded again every poll.
	if err := syscall.Mkfifo(filepath.Join(dir, "later.cue"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, rejected := reg.Reload()
	if len(changed) != 0 || len(rejected) != 1 || rejected[0].Code != CodeUnreadable || rejected[0].File != filepath.Join(dir, "later.cue") {
		t.Fatalf("Reload with a new pipe: changed %v, rejected %v", changed, rejected)
	}
	if changed, rejected := reg.Reload(); len(changed) != 0 || len(rejected) != 0 {
		t.Fatalf("second Reload: changed %v, rejected %v; want nothing new", changed, rejected)
	}
}
