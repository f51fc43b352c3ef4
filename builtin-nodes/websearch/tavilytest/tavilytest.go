// Package tavilytest is a local server speaking Tavily's search API for
// tests: POST /search with the key as a Bearer token (or, as older clients
// send it, api_key in the body), the request fields Tavily validates
// (search_depth, topic, time_range, max_results 0–20, a query of at most 400
// characters), answers of Tavily's shape ({query, answer, images, results:
// [{title, url, content, score, raw_content}], response_time, request_id})
// and errors of its shape ({"detail": {"error": …}}, 401 for a bad key, 400
// for a bad request, 429 with Retry-After when told to fail).
//
// Results come from the pages the test gives it, ranked by how many of the
// query's terms (words, and character pairs of Japanese or Chinese text) a
// page contains, filtered by include/exclude domains and time range.
package tavilytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// Page is a web page the server can find.
type Page struct {
	URL     string
	Title   string
	Content string
	// Published is the page's date; zero means undated (kept by any time range).
	Published time.Time
}

// Request is a search request as the server received it.
type Request struct {
	// Auth is the bearer token or body api_key the request carried.
	Auth string
	// Body is the decoded JSON body.
	Body map[string]any
	// Status is the HTTP status the server answered with.
	Status int
}

// Server is a local Tavily API server.
type Server struct {
	// Key is the only API key accepted.
	Key string
	// Now is the clock time ranges are measured from (default time.Now).
	Now func() time.Time

	srv *httptest.Server

	mu       sync.Mutex
	pages    []Page
	requests []Request
	failN    int
	failCode int
	seq      int
}

// NewServer starts a server accepting key, closed when the test ends.
func NewServer(t testing.TB, key string, pages ...Page) *Server {
	t.Helper()
	s := &Server{Key: key, pages: pages}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server's base URL (for TAVILY_BASE_URL).
func (s *Server) URL() string { return s.srv.URL }

// AddPages adds findable pages.
func (s *Server) AddPages(p ...Page) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages = append(s.pages, p...)
}

// Fail answers the next n searches with status (429 carries Retry-After: 1).
func (s *Server) Fail(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.failCode = n, status
}

// Requests returns every request received.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func detail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"detail": map[string]any{"error": msg}})
}

var (
	depths = map[string]bool{"basic": true, "advanced": true, "fast": true, "ultra-fast": true}
	topics = map[string]bool{"general": true, "news": true, "finance": true}
	ranges = map[string]time.Duration{
		"day": 24 * time.Hour, "d": 24 * time.Hour, "week": 7 * 24 * time.Hour, "w": 7 * 24 * time.Hour,
		"month": 30 * 24 * time.Hour, "m": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour, "y": 365 * 24 * time.Hour,
	}
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/search" || r.Method != http.MethodPost {
		detail(w, http.StatusNotFound, "Not Found")
		return
	}
	var body map[string]any
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		detail(w, http.StatusBadRequest, "Invalid JSON body: "+err.Error())
		return
	}
	auth, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if auth == "" {
		auth, _ = body["api_key"].(string)
	}
	s.mu.Lock()
	rec := Request{Auth: auth, Body: body}
	status, answer := s.answer(&rec)
	rec.Status = status
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	if status != http.StatusOK {
		detail(w, status, answer.(string))
		return
	}
	writeJSON(w, status, answer)
}

// answer decides the response; s.mu is held.
func (s *Server) answer(rec *Request) (int, any) {
	body := rec.Body
	if rec.Auth != s.Key {
		return http.StatusUnauthorized, "Unauthorized: missing or invalid API key."
	}
	if s.failN > 0 {
		s.failN--
		if s.failCode == http.StatusTooManyRequests {
			return s.failCode, "Your request has been blocked due to excessive requests. Please reduce rate of requests."
		}
		return s.failCode, "Internal Server Error"
	}
	q, msg := parseQuery(body)
	if msg != "" {
		return http.StatusBadRequest, msg
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	hits := s.search(q, now)
	results := make([]any, 0, len(hits))
	for _, h := range hits {
		res := map[string]any{"title": h.p.Title, "url": h.p.URL, "content": h.p.Content, "score": h.score, "raw_content": nil}
		if !h.p.Published.IsZero() {
			res["published_date"] = h.p.Published.UTC().Format(time.RFC1123)
		}
		results = append(results, res)
	}
	var ans any
	if b, _ := body["include_answer"].(bool); b && len(hits) > 0 {
		ans = firstSentence(hits[0].p.Content)
	}
	s.seq++
	return http.StatusOK, map[string]any{
		"query": q.text, "follow_up_questions": nil, "answer": ans, "images": []any{},
		"results": results, "response_time": 0.01, "request_id": fmt.Sprintf("req-%04d", s.seq),
	}
}

// query is a checked search request.
type query struct {
	text             string
	window           time.Duration
	max              int
	include, exclude []string
}

// parseQuery checks a request body as Tavily does; msg is the 400 answer's
// detail when the body is invalid.
func parseQuery(body map[string]any) (q query, msg string) {
	q.text, _ = body["query"].(string)
	switch {
	case strings.TrimSpace(q.text) == "":
		return q, "Query is missing."
	case len([]rune(q.text)) > 400:
		return q, "Query is too long. Max query length is 400 characters."
	}
	for key, allowed := range map[string]map[string]bool{"search_depth": depths, "topic": topics} {
		if v, ok := body[key]; ok {
			if str, _ := v.(string); !allowed[str] {
				return q, fmt.Sprintf("Invalid %s: %v.", key, v)
			}
		}
	}
	if v, ok := body["time_range"]; ok && v != nil {
		str, _ := v.(string)
		if q.window = ranges[str]; q.window == 0 {
			return q, fmt.Sprintf("Invalid time_range: %v. Must be one of day, week, month, year.", v)
		}
	}
	q.max = 5
	if v, ok := body["max_results"]; ok {
		n, err := v.(json.Number).Int64()
		if err != nil || n < 0 || n > 20 {
			return q, "max_results must be between 0 and 20."
		}
		q.max = int(n)
	}
	q.include, q.exclude = domains(body["include_domains"]), domains(body["exclude_domains"])
	return q, ""
}

// hit is a page that matches a query, with the share of its terms it holds.
type hit struct {
	p     Page
	score float64
}

// search returns the best pages for q, at most q.max, best first.
func (s *Server) search(q query, now time.Time) []hit {
	terms := Terms(q.text)
	var hits []hit
	for _, p := range s.pages {
		host := hostOf(p.URL)
		if len(q.include) > 0 && !matchDomain(host, q.include) || matchDomain(host, q.exclude) {
			continue
		}
		if q.window > 0 && !p.Published.IsZero() && now.Sub(p.Published) > q.window {
			continue
		}
		text := strings.ToLower(p.Title + "\n" + p.Content)
		matched := 0
		for _, t := range terms {
			if strings.Contains(text, t) {
				matched++
			}
		}
		if matched == 0 || len(terms) == 0 {
			continue
		}
		hits = append(hits, hit{p, float64(matched) / float64(len(terms))})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) > q.max {
		hits = hits[:q.max]
	}
	return hits
}

func domains(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok && s != "" {
			out = append(out, strings.ToLower(s))
		}
	}
	return out
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

func matchDomain(host string, list []string) bool {
	for _, d := range list {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

func firstSentence(s string) string {
	if i := strings.IndexAny(s, ".。!?！？"); i >= 0 {
		return strings.TrimSpace(s[:i+len(string([]rune(s[i:])[0]))])
	}
	return s
}

// Terms splits a query into lower-case search terms: runs of letters and
// digits, and each pair of adjacent characters in runs of Han, Hiragana or
// Katakana text (which has no spaces between words).
func Terms(q string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	var word, cjk []rune
	flushWord := func() {
		if len(word) > 1 {
			add(strings.ToLower(string(word)))
		}
		word = nil
	}
	flushCJK := func() {
		if len(cjk) == 1 {
			add(string(cjk))
		}
		for i := 0; i+1 < len(cjk); i++ {
			add(string(cjk[i : i+2]))
		}
		cjk = nil
	}
	for _, r := range q {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}
