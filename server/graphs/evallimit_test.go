package graphs

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load/evalguard"
)

// TestReloadPastTheEvaluationLimitKeepsTheOldGraph: a changed file whose
// evaluation runs past the limit is rejected with a diagnostic naming the
// limit, and the previous version stays served; the registry answers while
// the file is being evaluated.
func TestReloadPastTheEvaluationLimitKeepsTheOldGraph(t *testing.T) {
	dir := t.TempDir()
	db := openBadger(t)
	newEngine := func(g *compile.Graph) (*engine.Engine, error) {
		return engine.New(g, db.Checkpointer(), engine.Options{}), nil
	}
	lim := evalguard.Limits{Time: 2 * time.Second, Memory: 256 << 20}
	loadBounded := func(path string) (*compile.Graph, diag.List, error) {
		return evalguard.Load(context.Background(), path, lim)
	}
	file := filepath.Join(dir, "hello.cue")
	t0 := time.Unix(1_700_000_000, 0)
	write(t, file, strings.Replace(graphV1, "REPLY", "one", 1), t0)
	reg, diags, err := OpenWith(dir, newEngine, nil, Options{Load: loadBounded})
	if err != nil || reg == nil {
		t.Fatalf("open: %v %v", err, diags)
	}
	before, _ := reg.Get("hello")

	bomb := "import \"list\"\n" + strings.Replace(graphV1, "REPLY", "two", 1) +
		"vars: big: [for i in list.Range(0, 3000, 1) for j in list.Range(0, 3000, 1) {i * j}]\n"
	write(t, file, bomb, t0.Add(time.Minute))
	done := make(chan diag.List, 1)
	go func() {
		_, rejected := reg.Reload()
		done <- rejected
	}()
	// While the file is evaluated, the registry answers.
	if v, ok := reg.Get("hello"); !ok || v != before {
		t.Fatal("the registry lost the graph during a reload")
	}
	rejected := <-done
	if len(rejected) != 1 || rejected[0].Code != "eval-limit" || rejected[0].File != file || rejected[0].Line != 7 {
		t.Fatalf("rejected %v; want one eval-limit diagnostic at %s:7", rejected, file)
	}
	if v, ok := reg.Get("hello"); !ok || v != before {
		t.Fatalf("after the rejected reload the graph is %+v, want the previous version", v)
	}
	if p := reg.Problems(); len(p) != 1 || p[0].Code != "eval-limit" {
		t.Errorf("problems %v, want the eval-limit diagnostic", p)
	}
}
