package graphs

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
)

// TestOpenLenientKeepsInvalidFilesOut checks that OpenLenient serves the
// valid graphs of a directory, reports the invalid file in Problems, and
// takes it in once it is fixed; Open refuses the same directory.
func TestOpenLenientKeepsInvalidFilesOut(t *testing.T) {
	dir := t.TempDir()
	db := openBadger(t)
	newEngine := func(g *compile.Graph) (*engine.Engine, error) {
		return engine.New(g, db.Checkpointer(), engine.Options{}), nil
	}
	t0 := time.Unix(1_700_000_000, 0)
	write(t, filepath.Join(dir, "hello.cue"), strings.Replace(graphV1, "REPLY", "one", 1), t0)
	other := strings.Replace(strings.Replace(graphV1, `"hello"`, `"other"`, 1), `next: "END"`, `next: "nowhere"`, 1)
	write(t, filepath.Join(dir, "other.cue"), other, t0)

	if reg, diags, err := Open(dir, newEngine, nil); reg != nil || err != nil || !diags.HasErrors() {
		t.Fatalf("Open of a directory with an invalid file = %v, %v, %v; want no registry and its diagnostics", reg, diags, err)
	}
	reg, _, err := OpenLenient(dir, newEngine, nil)
	if err != nil || reg == nil {
		t.Fatalf("OpenLenient: %v", err)
	}
	defer reg.Close()
	if list := reg.List(); len(list) != 1 || list[0].Name != "hello" {
		t.Fatalf("served %v, want only hello", list)
	}
	probs := reg.Problems()
	if len(probs) == 0 || probs[0].File != filepath.Join(dir, "other.cue") || probs[0].Line == 0 || !strings.Contains(probs[0].Message, "nowhere") {
		t.Fatalf("problems %v, want other.cue's unknown target at its line", probs)
	}
	write(t, filepath.Join(dir, "other.cue"), strings.Replace(other, `"nowhere"`, `"END"`, 1), t0.Add(time.Second))
	if changed, rejected := reg.Reload(); len(changed) != 1 || changed[0] != "other" || len(rejected) != 0 {
		t.Fatalf("reload after the fix: changed %v rejected %v", changed, rejected)
	}
	if probs := reg.Problems(); len(probs) != 0 {
		t.Errorf("problems after the fix: %v", probs)
	}
}
