// Package littest serves the wire formats of PubMed's E-utilities (esearch and
// esummary, JSON), Europe PMC's REST search (JSON, resultType core) and
// ClinicalTrials.gov's API v2 studies endpoint on 127.0.0.1, from a small
// corpus of records, for tests of the literature package and of graphs that
// search. Each source can be made to fail with an HTTP status or a malformed
// body.
package littest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Article is a journal article, served by PubMed and Europe PMC.
type Article struct {
	PMID     string
	PMCID    string
	DOI      string
	Title    string
	Abstract string
	Journal  string
	// PubDate is PubMed's date text, such as "2021 Mar 15".
	PubDate string
	Authors []string
	// EuropePMCOnly keeps the article out of PubMed (a preprint, say).
	EuropePMCOnly bool
}

// Trial is a registered study, served by ClinicalTrials.gov.
type Trial struct {
	NCTID        string
	BriefTitle   string
	BriefSummary string
	// StartDate is "YYYY-MM" or "YYYY-MM-DD".
	StartDate  string
	Status     string
	Conditions []string
}

// Failure makes a source answer every request with Status and Body (a
// malformed body with status 200 tests decoding errors).
type Failure struct {
	Status int
	Body   string
	// Hang, when set, makes the source answer nothing until the request is
	// given up (Status and Body are not used).
	Hang bool
}

// Server is the running server.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	articles []Article
	trials   []Trial
	failures map[string]Failure
	requests []string
}

// Option configures a Server.
type Option func(*Server)

// WithArticles replaces the default corpus's articles.
func WithArticles(a ...Article) Option { return func(s *Server) { s.articles = a } }

// WithTrials replaces the default corpus's trials.
func WithTrials(t ...Trial) Option { return func(s *Server) { s.trials = t } }

// WithFailure makes one source ("pubmed", "europepmc" or "clinicaltrials") fail.
func WithFailure(source string, f Failure) Option {
	return func(s *Server) { s.failures[source] = f }
}

// NewServer starts a server on 127.0.0.1, closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{articles: Articles(), trials: Trials(), failures: map[string]Failure{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pubmed/esearch.fcgi", s.failing("pubmed", s.esearch))
	mux.HandleFunc("GET /pubmed/esummary.fcgi", s.failing("pubmed", s.esummary))
	mux.HandleFunc("GET /europepmc/search", s.failing("europepmc", s.europePMC))
	mux.HandleFunc("GET /ctgov/studies", s.failing("clinicaltrials", s.studies))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// PubMedURL is the E-utilities base URL (pubmed_url).
func (s *Server) PubMedURL() string { return s.srv.URL + "/pubmed" }

// EuropePMCURL is the Europe PMC REST base URL (europepmc_url).
func (s *Server) EuropePMCURL() string { return s.srv.URL + "/europepmc" }

// ClinicalTrialsURL is the API v2 base URL (clinicaltrials_url).
func (s *Server) ClinicalTrialsURL() string { return s.srv.URL + "/ctgov" }

// SetFailure makes a source fail from now on; a zero Failure restores it.
func (s *Server) SetFailure(source string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == (Failure{}) {
		delete(s.failures, source)
		return
	}
	s.failures[source] = f
}

// Requests returns the request URIs served so far, in arrival order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) failing(source string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.RequestURI())
		f, failed := s.failures[source]
		s.mu.Unlock()
		if failed && f.Hang {
			<-r.Context().Done()
			return
		}
		if failed {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.Status)
			fmt.Fprint(w, f.Body)
			return
		}
		h(w, r)
	}
}

// matches reports whether every word of the query (boolean operators and
// field tags aside) occurs in text, case-insensitively.
func matches(query, text string) bool {
	text = strings.ToLower(text)
	words := strings.Fields(strings.ToLower(query))
	n := 0
	for _, w := range words {
		w = strings.Trim(w, `()"`)
		if i := strings.Index(w, "["); i > 0 {
			w = w[:i]
		}
		if w == "" || w == "and" || w == "or" || w == "not" {
			continue
		}
		n++
		if !strings.Contains(text, w) {
			return false
		}
	}
	return n > 0
}

func limit(r *http.Request, key string, def int) int {
	if n, err := strconv.Atoi(r.URL.Query().Get(key)); err == nil && n >= 0 {
		return n
	}
	return def
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": msg})
}

func (s *Server) pubmedArticles() []Article {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Article
	for _, a := range s.articles {
		if !a.EuropePMCOnly && a.PMID != "" {
			out = append(out, a)
		}
	}
	return out
}

func (s *Server) esearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("db") != "pubmed" || q.Get("retmode") != "json" {
		badRequest(w, "db=pubmed and retmode=json are required")
		return
	}
	term := q.Get("term")
	if strings.TrimSpace(term) == "" {
		// E-utilities answer an empty term with 200 and an ERROR member.
		writeJSON(w, map[string]any{
			"header":        map[string]any{"type": "esearch", "version": "0.3"},
			"esearchresult": map[string]any{"ERROR": "Empty term and query_key - nothing todo"},
		})
		return
	}
	var ids []string
	for _, a := range s.pubmedArticles() {
		if matches(term, a.Title+" "+a.Abstract) {
			ids = append(ids, a.PMID)
		}
	}
	count := len(ids)
	if n := limit(r, "retmax", 20); len(ids) > n {
		ids = ids[:n]
	}
	if ids == nil {
		ids = []string{}
	}
	writeJSON(w, map[string]any{
		"header": map[string]any{"type": "esearch", "version": "0.3"},
		"esearchresult": map[string]any{
			"count": strconv.Itoa(count), "retmax": strconv.Itoa(len(ids)), "retstart": "0",
			"idlist": ids, "translationset": []any{}, "querytranslation": term,
		},
	})
}

func (s *Server) esummary(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("db") != "pubmed" || q.Get("retmode") != "json" || q.Get("id") == "" {
		badRequest(w, "db=pubmed, retmode=json and id are required")
		return
	}
	byID := map[string]Article{}
	for _, a := range s.pubmedArticles() {
		byID[a.PMID] = a
	}
	result := map[string]any{}
	uids := []string{}
	for _, id := range strings.Split(q.Get("id"), ",") {
		a, ok := byID[id]
		if !ok {
			result[id] = map[string]any{"uid": id, "error": "cannot get document summary"}
			continue
		}
		uids = append(uids, id)
		authors := make([]any, len(a.Authors))
		for i, n := range a.Authors {
			authors[i] = map[string]any{"name": n, "authtype": "Author", "clusterid": ""}
		}
		articleIDs := []any{map[string]any{"idtype": "pubmed", "idtypen": 1, "value": a.PMID}}
		if a.DOI != "" {
			articleIDs = append(articleIDs, map[string]any{"idtype": "doi", "idtypen": 3, "value": a.DOI})
		}
		if a.PMCID != "" {
			articleIDs = append(articleIDs, map[string]any{"idtype": "pmc", "idtypen": 8, "value": a.PMCID})
		}
		last := ""
		if len(a.Authors) > 0 {
			last = a.Authors[len(a.Authors)-1]
		}
		result[id] = map[string]any{
			"uid": a.PMID, "pubdate": a.PubDate, "epubdate": "", "source": a.Journal,
			"authors": authors, "lastauthor": last, "title": a.Title, "sorttitle": strings.ToLower(a.Title),
			"volume": "", "issue": "", "pages": "", "lang": []any{"eng"}, "pubtype": []any{"Journal Article"},
			"articleids": articleIDs, "fulljournalname": a.Journal, "elocationid": "doi: " + a.DOI, "pmcrefcount": "",
		}
	}
	result["uids"] = uids
	writeJSON(w, map[string]any{"header": map[string]any{"type": "esummary", "version": "0.3"}, "result": result})
}

func (s *Server) europePMC(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("format") != "json" {
		badRequest(w, "format=json is required")
		return
	}
	query := q.Get("query")
	if strings.TrimSpace(query) == "" {
		writeJSON(w, map[string]any{"version": "6.9", "errCode": 400, "errMsg": "query parameter must not be empty"})
		return
	}
	core := q.Get("resultType") == "core"
	s.mu.Lock()
	articles := append([]Article(nil), s.articles...)
	s.mu.Unlock()
	results := []any{}
	hits := 0
	size := limit(r, "pageSize", 25)
	for _, a := range articles {
		if !matches(query, a.Title+" "+a.Abstract) {
			continue
		}
		hits++
		if len(results) >= size {
			continue
		}
		rec := map[string]any{
			"title": a.Title, "authorString": strings.Join(a.Authors, ", ") + ".",
			"pubYear": yearText(a.PubDate), "isOpenAccess": boolText(a.PMCID != ""), "citedByCount": 0,
			"journalInfo": map[string]any{"journal": map[string]any{"title": a.Journal}},
		}
		switch {
		case a.PMID != "" && !a.EuropePMCOnly:
			rec["id"], rec["source"], rec["pmid"] = a.PMID, "MED", a.PMID
		case a.PMCID != "":
			rec["id"], rec["source"] = a.PMCID, "PMC"
		default:
			rec["id"], rec["source"] = "PPR"+strconv.Itoa(len(a.Title)), "PPR"
		}
		if a.PMCID != "" {
			rec["pmcid"] = a.PMCID
		}
		if a.DOI != "" {
			rec["doi"] = a.DOI
		}
		if core {
			rec["abstractText"] = a.Abstract
		}
		results = append(results, rec)
	}
	writeJSON(w, map[string]any{
		"version": "6.9", "hitCount": hits, "nextCursorMark": "AoIIP4AAACgyOTk=",
		"request":    map[string]any{"queryString": query, "resultType": q.Get("resultType"), "cursorMark": "*", "pageSize": size, "sort": "", "synonym": false},
		"resultList": map[string]any{"result": results},
	})
}

func yearText(date string) string {
	if len(date) >= 4 {
		return date[:4]
	}
	return ""
}

func boolText(b bool) string {
	if b {
		return "Y"
	}
	return "N"
}

func (s *Server) studies(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if f := q.Get("format"); f != "" && f != "json" {
		badRequest(w, "format must be json")
		return
	}
	term := q.Get("query.term")
	s.mu.Lock()
	trials := append([]Trial(nil), s.trials...)
	s.mu.Unlock()
	size := limit(r, "pageSize", 10)
	studies := []any{}
	for _, tr := range trials {
		if len(studies) >= size || !matches(term, tr.BriefTitle+" "+tr.BriefSummary+" "+strings.Join(tr.Conditions, " ")) {
			continue
		}
		studies = append(studies, map[string]any{
			"protocolSection": map[string]any{
				"identificationModule": map[string]any{"nctId": tr.NCTID, "briefTitle": tr.BriefTitle, "organization": map[string]any{"fullName": "Example University", "class": "OTHER"}},
				"statusModule": map[string]any{
					"overallStatus": tr.Status, "startDateStruct": map[string]any{"date": tr.StartDate, "type": "ACTUAL"},
				},
				"descriptionModule": map[string]any{"briefSummary": tr.BriefSummary},
				"conditionsModule":  map[string]any{"conditions": tr.Conditions},
			},
			"hasResults": false,
		})
	}
	writeJSON(w, map[string]any{"studies": studies})
}
