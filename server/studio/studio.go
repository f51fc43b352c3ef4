// Package studio is graphctl Studio: a web page, embedded in the binary, for
// seeing, running and debugging the served graphs. It is plain HTML, CSS
// and ES modules served as they are (no build step) and talks to the server
// only through its public HTTP API — the same one the LangGraph SDKs use —
// so everything the page does, a client can do.
//
// Handler serves the page under Prefix; the server mounts it outside API-key
// authentication (the page asks for a key and sends it with its API calls).
package studio

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// Prefix is the path the Studio is served under.
const Prefix = "/studio"

//go:embed ui
var files embed.FS

type asset struct {
	body  []byte
	etag  string
	ctype string
}

// Assets returns the names and sizes of the embedded files (for reports
// and tests).
func Assets() map[string]int {
	out := map[string]int{}
	fs.WalkDir(files, "ui", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := files.ReadFile(p)
			out[strings.TrimPrefix(p, "ui/")] = len(b)
		}
		return nil
	})
	return out
}

// Handler serves the Studio's files under Prefix: Prefix and Prefix+"/"
// serve the page, Prefix+"/NAME" an asset. Assets carry an ETag and are
// revalidated on every load, so a new binary's page is never stale.
func Handler() http.Handler {
	assets := map[string]asset{}
	fs.WalkDir(files, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		switch path.Ext(p) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".html":
			ct = "text/html; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		assets[strings.TrimPrefix(p, "ui/")] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: ct}
		return nil
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if name == "" {
			http.Redirect(w, r, Prefix+"/", http.StatusMovedPermanently)
			return
		}
		name = strings.TrimPrefix(name, "/")
		if name == "" {
			name = "index.html"
		}
		a, ok := assets[name]
		if !ok {
			http.Error(w, "no such Studio file: "+name, http.StatusNotFound)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("ETag", a.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		if match := r.Header.Get("If-None-Match"); match != "" && match == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		w.Write(a.body)
	})
}
