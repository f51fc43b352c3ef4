package server

import (
	"bufio"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/server/studio"
)

// mountStudio adds the Studio page (served outside API-key authentication:
// the page itself asks for the key) and GET /graphs, which the page polls
// to show graph files that failed to load.
func (s *Server) mountStudio(r *gin.Engine) {
	r.GET("/graphs", s.listGraphs)
	if s.cfg.NoStudio {
		return
	}
	page := gin.WrapH(studio.Handler())
	r.GET(studio.Prefix, page)
	r.HEAD(studio.Prefix, page)
	r.GET(studio.Prefix+"/*file", page)
	r.HEAD(studio.Prefix+"/*file", page)
}

// isStudioPage reports whether a request is for one of the Studio's files.
func (s *Server) isStudioPage(r *http.Request) bool {
	if s.cfg.NoStudio || r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return r.URL.Path == studio.Prefix || strings.HasPrefix(r.URL.Path, studio.Prefix+"/")
}

// graphDiagnostic is a diagnostic with its source line.
type graphDiagnostic struct {
	diag.Diagnostic
	Source string `json:"source,omitempty"`
}

// listGraphs answers GET /graphs: the graphs served (name, file, version,
// content hash, load time) and the diagnostics of graph files whose last
// load was rejected, each with its source line. A rejected file's previous
// version, if any, is still among the graphs.
func (s *Server) listGraphs(c *gin.Context) {
	out := []gin.H{}
	for _, v := range s.reg.List() {
		out = append(out, gin.H{"graph_id": v.Name, "file": v.File, "version": v.Graph.Spec.Version,
			"description": v.Graph.Spec.Description, "hash": v.ShortHash, "loaded_at": v.LoadedAt.UTC().Format(time.RFC3339Nano)})
	}
	diags := []graphDiagnostic{}
	lines := map[string][]string{}
	for _, d := range s.reg.Problems() {
		gd := graphDiagnostic{Diagnostic: d}
		if _, ok := lines[d.File]; !ok {
			lines[d.File] = readLines(d.File)
		}
		if l := lines[d.File]; d.Line >= 1 && d.Line <= len(l) {
			gd.Source = l[d.Line-1]
		}
		diags = append(diags, gd)
	}
	c.JSON(http.StatusOK, gin.H{"graphs": out, "diagnostics": diags})
}

// readLines reads a graph file's lines (nil when it cannot be read).
func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
