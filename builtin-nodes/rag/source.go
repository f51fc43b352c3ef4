package rag

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/net/html"
)

// maxPageBytes bounds one fetched page or file.
const maxPageBytes = 8 << 20

// textExts are the local file extensions ingested from directories.
var textExts = map[string]bool{".md": true, ".markdown": true, ".txt": true, ".text": true}

// Loader reads sources into Documents.
type Loader struct {
	// Client fetches URLs; nil means http.DefaultClient.
	Client *http.Client
	// BaseDir resolves relative file paths; source_url keeps the path as written.
	BaseDir string
	// Validators, when set, returns the ETag and Last-Modified stored for a
	// page URL; they are sent as If-None-Match and If-Modified-Since, and a
	// 304 answer yields a Document marked NotModified.
	Validators func(url string) (etag, lastModified string)
}

// IsURL reports whether a source is an http(s) URL.
func IsURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// Load reads one source: a file, a directory (its markdown and text files,
// recursively, in name order), a page URL, or a sitemap URL (a URL whose path
// ends in .xml: every <loc> it lists, sitemap indexes included).
func (l *Loader) Load(ctx context.Context, src string) ([]Document, error) {
	if IsURL(src) {
		if strings.HasSuffix(strings.ToLower(strings.SplitN(src, "?", 2)[0]), ".xml") {
			return l.loadSitemap(ctx, src, 0)
		}
		d, err := l.fetch(ctx, src)
		if err != nil {
			return nil, err
		}
		return []Document{d}, nil
	}
	return l.loadPath(src)
}

func (l *Loader) resolve(p string) string {
	if filepath.IsAbs(p) || l.BaseDir == "" {
		return p
	}
	return filepath.Join(l.BaseDir, p)
}

func (l *Loader) loadPath(src string) ([]Document, error) {
	full := l.resolve(src)
	info, err := os.Stat(full)
	if err != nil {
		return nil, fmt.Errorf("source %q: %w", src, err)
	}
	if !info.IsDir() {
		d, err := readFile(full, src)
		if err != nil {
			return nil, err
		}
		return []Document{d}, nil
	}
	var files []string
	err = filepath.WalkDir(full, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && textExts[strings.ToLower(filepath.Ext(p))] {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("source directory %q: %w", src, err)
	}
	sort.Strings(files)
	docs := make([]Document, 0, len(files))
	for _, f := range files {
		rel, err := filepath.Rel(full, f)
		if err != nil {
			return nil, fmt.Errorf("source directory %q: %w", src, err)
		}
		d, err := readFile(f, filepath.ToSlash(filepath.Join(src, rel)))
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

func readFile(path, sourceURL string) (Document, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Document{}, fmt.Errorf("source %q: %w", sourceURL, err)
	}
	if len(b) > maxPageBytes {
		return Document{}, fmt.Errorf("source %q: %d bytes is over the %d-byte limit", sourceURL, len(b), maxPageBytes)
	}
	return newDocument(sourceURL, "", string(b)), nil
}

func newDocument(sourceURL, title, text string) Document {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	base := filepath.Base(strings.TrimSuffix(sourceURL, "/"))
	if title == "" {
		title = titleOf(text, strings.TrimSuffix(base, filepath.Ext(base)))
	}
	return Document{ID: DocID(sourceURL), SourceURL: sourceURL, Title: title, ContentHash: Hash(text), Text: text}
}

// page is one fetched URL.
type page struct {
	body         []byte
	ctype        string
	etag         string
	lastModified string
	notModified  bool
}

func (l *Loader) get(ctx context.Context, url string, conditional bool) (page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return page{}, fmt.Errorf("fetch %s: %w", url, err)
	}
	if conditional && l.Validators != nil {
		etag, lm := l.Validators(url)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		if lm != "" {
			req.Header.Set("If-Modified-Since", lm)
		}
	}
	client := l.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return page{}, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	p := page{ctype: resp.Header.Get("Content-Type"), etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
	if resp.StatusCode == http.StatusNotModified && conditional {
		p.notModified = true
		return p, nil
	}
	if resp.StatusCode != http.StatusOK {
		return page{}, fmt.Errorf("fetch %s: HTTP %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return page{}, fmt.Errorf("fetch %s: %w", url, err)
	}
	if len(b) > maxPageBytes {
		return page{}, fmt.Errorf("fetch %s: over the %d-byte limit", url, maxPageBytes)
	}
	p.body = b
	return p, nil
}

func (l *Loader) fetch(ctx context.Context, url string) (Document, error) {
	p, err := l.get(ctx, url, true)
	if err != nil {
		return Document{}, err
	}
	if p.notModified {
		return Document{ID: DocID(url), SourceURL: url, NotModified: true, ETag: p.etag, LastModified: p.lastModified}, nil
	}
	var d Document
	if strings.Contains(p.ctype, "html") {
		title, text, err := htmlToMarkdown(string(p.body))
		if err != nil {
			return Document{}, fmt.Errorf("page %s: %w", url, err)
		}
		d = newDocument(url, title, text)
	} else {
		d = newDocument(url, "", string(p.body))
	}
	d.ETag, d.LastModified = p.etag, p.lastModified
	return d, nil
}

type sitemap struct {
	URLs     []string `xml:"url>loc"`
	Sitemaps []string `xml:"sitemap>loc"`
}

func (l *Loader) loadSitemap(ctx context.Context, url string, depth int) ([]Document, error) {
	if depth > 2 {
		return nil, fmt.Errorf("sitemap %s: sitemap indexes nested more than 2 deep", url)
	}
	p, err := l.get(ctx, url, false)
	if err != nil {
		return nil, err
	}
	var sm sitemap
	if err := xml.Unmarshal(p.body, &sm); err != nil {
		return nil, fmt.Errorf("sitemap %s: %w", url, err)
	}
	var docs []Document
	for _, child := range sm.Sitemaps {
		d, err := l.loadSitemap(ctx, strings.TrimSpace(child), depth+1)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d...)
	}
	for _, u := range sm.URLs {
		d, err := l.fetch(ctx, strings.TrimSpace(u))
		if err != nil {
			return nil, fmt.Errorf("sitemap %s: %w", url, err)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// htmlToMarkdown returns a page's title and its text with h1–h6 as markdown
// headings and block elements as paragraphs; scripts, styles and navigation
// are dropped.
func htmlToMarkdown(src string) (string, string, error) {
	root, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return "", "", err
	}
	var title string
	var sb strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "nav", "footer", "noscript", "svg":
				return
			case "title":
				title = strings.TrimSpace(textOf(n))
				return
			case "h1", "h2", "h3", "h4", "h5", "h6":
				sb.WriteString("\n\n" + strings.Repeat("#", int(n.Data[1]-'0')) + " " + strings.Join(strings.Fields(textOf(n)), " ") + "\n\n")
				return
			case "p", "li", "pre", "tr", "div", "section", "article", "br":
				sb.WriteString("\n")
				defer sb.WriteString("\n")
			}
		}
		if n.Type == html.TextNode {
			if t := strings.Join(strings.Fields(n.Data), " "); t != "" {
				sb.WriteString(t + " ")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	lines := strings.Split(sb.String(), "\n")
	var out []string
	blank := false
	for _, ln := range lines {
		ln = strings.TrimSpace(ln)
		if ln == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, ln)
		blank = false
	}
	return title, strings.TrimSpace(strings.Join(out, "\n")), nil
}

func textOf(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}
