package graphs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

const graphV1 = `dsl_version: "graphctl/v1"
name: "hello"
state: messages: {type: "messages"}
start: "a"
nodes: a: {type: "reply", config: text: "REPLY", next: "END"}
`

func write(t *testing.T, path, text string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, mtime, mtime)
}

// openBadger opens a Badger database in a temporary directory, closed when
// the test ends.
func openBadger(t *testing.T) *badger.DB {
	t.Helper()
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenAndReload(t *testing.T) {
	dir := t.TempDir()
	db := openBadger(t)
	newEngine := func(g *compile.Graph) (*engine.Engine, error) {
		return engine.New(g, db.Checkpointer(), engine.Options{}), nil
	}
	file := filepath.Join(dir, "hello.cue")
	t0 := time.Unix(1_700_000_000, 0)
	write(t, file, strings.Replace(graphV1, "REPLY", "one", 1), t0)

	reg, diags, err := Open(dir, newEngine, nil)
	if err != nil || reg == nil {
		t.Fatalf("open: %v %v", err, diags)
	}
	v1, ok := reg.Get("hello")
	if !ok {
		t.Fatal("graph hello not loaded")
	}
	steps := []struct {
		name        string
		text        string
		wantChanged bool
		wantErrors  bool
	}{
		{"unchanged file", "", false, false},
		{"valid change", strings.Replace(graphV1, "REPLY", "two", 1), true, false},
		{"invalid change keeps the old version", strings.Replace(graphV1, `"END"`, `"nowhere"`, 1), false, true},
	}
	current := v1
	for i, st := range steps {
		if st.text != "" {
			write(t, file, st.text, t0.Add(time.Duration(i+1)*time.Second))
		}
		changed, rejected := reg.Reload()
		if (len(changed) > 0) != st.wantChanged || rejected.HasErrors() != st.wantErrors {
			t.Fatalf("%s: changed %v, rejected %v", st.name, changed, rejected)
		}
		now, _ := reg.Get("hello")
		if st.wantChanged && now.Hash == current.Hash || !st.wantChanged && now != current {
			t.Fatalf("%s: current version %s (was %s)", st.name, now.ShortHash, current.ShortHash)
		}
		current = now
	}
	// A thread written by v1 keeps v1; an unknown hash gets the current version.
	if v, _ := reg.ForThread("hello", v1.ShortHash); v != v1 {
		t.Fatal("thread on v1 does not keep v1")
	}
	if v, _ := reg.ForThread("hello", "0000"); v != current {
		t.Fatal("unknown hash does not get the current version")
	}

	bad := t.TempDir()
	write(t, filepath.Join(bad, "x.cue"), strings.Replace(graphV1, `"END"`, `"nowhere"`, 1), t0)
	if reg, diags, _ := Open(bad, newEngine, nil); reg != nil || !diags.HasErrors() {
		t.Fatal("an invalid graph at start must refuse to open")
	}
}
