package literature

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime/graph"
)

// DefaultsKey is the key of the graph defaults block that configures the
// sources' base URLs.
const DefaultsKey = "literature"

func init() {
	graph.MustRegisterDefaultsKey(graph.DefaultsKey{Name: DefaultsKey, Schema: "{...}",
		Doc: "literature holds the base URLs of the literature sources of lit_search\n" +
			"nodes: pubmed_url, europepmc_url, clinicaltrials_url."})
}

// The public services' base URLs.
const (
	DefaultPubMedURL         = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
	DefaultEuropePMCURL      = "https://www.ebi.ac.uk/europepmc/webservices/rest"
	DefaultClinicalTrialsURL = "https://clinicaltrials.gov/api/v2"
)

// Environment variables that override the graph's base URLs.
const (
	EnvPubMedURL         = "GRAPHCTL_PUBMED_URL"
	EnvEuropePMCURL      = "GRAPHCTL_EUROPEPMC_URL"
	EnvClinicalTrialsURL = "GRAPHCTL_CLINICALTRIALS_URL"
)

// maxBody bounds how much of a response is read.
const maxBody = 8 << 20

// Config holds the sources' base URLs.
type Config struct {
	PubMedURL         string
	EuropePMCURL      string
	ClinicalTrialsURL string
}

// configKeys maps the defaults block's keys to the Config fields and their
// environment variables.
var configKeys = []struct {
	key, env, def string
	field         func(*Config) *string
}{
	{"pubmed_url", EnvPubMedURL, DefaultPubMedURL, func(c *Config) *string { return &c.PubMedURL }},
	{"europepmc_url", EnvEuropePMCURL, DefaultEuropePMCURL, func(c *Config) *string { return &c.EuropePMCURL }},
	{"clinicaltrials_url", EnvClinicalTrialsURL, DefaultClinicalTrialsURL, func(c *Config) *string { return &c.ClinicalTrialsURL }},
}

// ConfigOf reads the base URLs for a graph: the environment, else the graph's
// defaults.literature block, else the public services. A malformed block or
// URL is an error naming the key.
func ConfigOf(g *graph.Graph) (Config, error) {
	var block map[string]any
	if g != nil && g.Defaults.Raw != nil {
		if raw, ok := g.Defaults.Raw[DefaultsKey]; ok && raw != nil {
			m, isMap := raw.(map[string]any)
			if !isMap {
				return Config{}, fmt.Errorf("defaults.%s must be an object {pubmed_url, europepmc_url, clinicaltrials_url}, got %s",
					DefaultsKey, graph.DescribeValue(raw))
			}
			block = m
		}
	}
	known := make([]string, len(configKeys))
	for i, k := range configKeys {
		known[i] = k.key
	}
	var problems []string
	for _, k := range sortedKeys(block) {
		if !containsString(known, k) {
			problems = append(problems, fmt.Sprintf("defaults.%s has no key %q (keys: %s)", DefaultsKey, k, strings.Join(known, ", ")))
		}
	}
	var cfg Config
	for _, k := range configKeys {
		value, where := k.def, ""
		if raw, ok := block[k.key]; ok {
			s, isString := raw.(string)
			if !isString {
				problems = append(problems, fmt.Sprintf("defaults.%s.%s must be a URL string, got %s", DefaultsKey, k.key, graph.DescribeValue(raw)))
				continue
			}
			value, where = s, fmt.Sprintf("defaults.%s.%s", DefaultsKey, k.key)
		}
		if env := os.Getenv(k.env); env != "" {
			value, where = env, "$"+k.env
		}
		if err := checkURL(value); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		*k.field(&cfg) = strings.TrimRight(value, "/")
	}
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return cfg, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid URL %q: want http(s)://host/path", s)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Searcher runs queries against the three sources.
type Searcher struct {
	// Config holds the base URLs.
	Config Config
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
}

// Search runs query against one source and returns at most max hits.
func (s *Searcher) Search(ctx context.Context, source, query string, max int) ([]Evidence, error) {
	switch source {
	case PubMed:
		return s.pubmed(ctx, query, max)
	case EuropePMC:
		return s.europePMC(ctx, query, max)
	case ClinicalTrials:
		return s.clinicalTrials(ctx, query, max)
	}
	return nil, fmt.Errorf("unknown literature source %q (sources: %s)", source, strings.Join(SourceNames, ", "))
}

// getJSON fetches u and decodes its JSON body into v. A non-2xx status is an
// error carrying the status and the start of the body.
func (s *Searcher) getJSON(ctx context.Context, what, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%s: build request: %w", what, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "graphctl-literature")
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%s: read response: %w", what, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode, snippet(body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: response is not the expected JSON: %w (body: %s)", what, err, snippet(body))
	}
	return nil
}

func snippet(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > 200 {
		n := 200
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// pubmed runs esearch for PMIDs, then esummary for their citations.
func (s *Searcher) pubmed(ctx context.Context, query string, max int) ([]Evidence, error) {
	q := url.Values{"db": {"pubmed"}, "term": {query}, "retmode": {"json"}, "retmax": {strconv.Itoa(max)}, "sort": {"relevance"}}
	var search struct {
		ESearchResult *struct {
			Count  string   `json:"count"`
			IDList []string `json:"idlist"`
			Error  string   `json:"ERROR"`
		} `json:"esearchresult"`
		Error string `json:"error"`
	}
	if err := s.getJSON(ctx, "pubmed esearch", s.Config.PubMedURL+"/esearch.fcgi?"+q.Encode(), &search); err != nil {
		return nil, err
	}
	switch {
	case search.Error != "":
		return nil, fmt.Errorf("pubmed esearch: %s", search.Error)
	case search.ESearchResult == nil:
		return nil, fmt.Errorf("pubmed esearch: the response has no esearchresult")
	case search.ESearchResult.Error != "":
		return nil, fmt.Errorf("pubmed esearch: %s", search.ESearchResult.Error)
	}
	ids := search.ESearchResult.IDList
	if len(ids) > max {
		ids = ids[:max]
	}
	if len(ids) == 0 {
		return nil, nil
	}
	q = url.Values{"db": {"pubmed"}, "id": {strings.Join(ids, ",")}, "retmode": {"json"}}
	var summary struct {
		Result map[string]json.RawMessage `json:"result"`
		Error  string                     `json:"error"`
	}
	if err := s.getJSON(ctx, "pubmed esummary", s.Config.PubMedURL+"/esummary.fcgi?"+q.Encode(), &summary); err != nil {
		return nil, err
	}
	if summary.Error != "" {
		return nil, fmt.Errorf("pubmed esummary: %s", summary.Error)
	}
	if summary.Result == nil {
		return nil, fmt.Errorf("pubmed esummary: the response has no result")
	}
	var out []Evidence
	for _, id := range ids {
		raw, ok := summary.Result[id]
		if !ok {
			continue // withdrawn or unknown PMIDs are left out by esummary
		}
		var doc struct {
			UID     string `json:"uid"`
			PubDate string `json:"pubdate"`
			Source  string `json:"source"`
			Title   string `json:"title"`
			Error   string `json:"error"`
			Authors []struct {
				Name string `json:"name"`
			} `json:"authors"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("pubmed esummary: record %s: %w", id, err)
		}
		if doc.Error != "" || doc.Title == "" {
			continue
		}
		var authors []string
		for _, a := range doc.Authors {
			if a.Name != "" {
				authors = append(authors, a.Name)
			}
		}
		cite := doc.Source
		if doc.PubDate != "" {
			cite = strings.TrimSpace(cite + ". " + doc.PubDate)
		}
		if len(authors) > 0 {
			cite = strings.TrimSpace(cite + ". " + strings.Join(authors, ", "))
		}
		out = append(out, Evidence{
			ID: "pubmed:" + id, Title: doc.Title, Summary: cite,
			URL: "https://pubmed.ncbi.nlm.nih.gov/" + id + "/", Source: PubMed, Year: yearOf(doc.PubDate),
		})
	}
	return out, nil
}

// europePMC runs a core search (abstracts included).
func (s *Searcher) europePMC(ctx context.Context, query string, max int) ([]Evidence, error) {
	q := url.Values{"query": {query}, "format": {"json"}, "resultType": {"core"}, "pageSize": {strconv.Itoa(max)}}
	var resp struct {
		HitCount   *int `json:"hitCount"`
		ResultList *struct {
			Result []struct {
				ID           string `json:"id"`
				Source       string `json:"source"`
				PMID         string `json:"pmid"`
				PMCID        string `json:"pmcid"`
				DOI          string `json:"doi"`
				Title        string `json:"title"`
				AbstractText string `json:"abstractText"`
				PubYear      string `json:"pubYear"`
			} `json:"result"`
		} `json:"resultList"`
		ErrCode    int    `json:"errCode"`
		ErrMessage string `json:"errMsg"`
	}
	if err := s.getJSON(ctx, "europepmc search", s.Config.EuropePMCURL+"/search?"+q.Encode(), &resp); err != nil {
		return nil, err
	}
	if resp.ErrMessage != "" {
		return nil, fmt.Errorf("europepmc search: error %d: %s", resp.ErrCode, resp.ErrMessage)
	}
	if resp.ResultList == nil {
		return nil, fmt.Errorf("europepmc search: the response has no resultList")
	}
	var out []Evidence
	for _, r := range resp.ResultList.Result {
		if len(out) == max {
			break
		}
		e := Evidence{Title: strings.TrimSpace(r.Title), Summary: stripTags(r.AbstractText), Source: EuropePMC, Year: yearOf(r.PubYear)}
		switch {
		case r.PMID != "":
			e.ID, e.URL = "pubmed:"+r.PMID, "https://europepmc.org/article/MED/"+r.PMID
		case r.PMCID != "":
			e.ID, e.URL = "pmc:"+r.PMCID, "https://europepmc.org/article/PMC/"+r.PMCID
		case r.ID != "" && r.Source != "":
			e.ID, e.URL = "europepmc:"+r.Source+":"+r.ID, "https://europepmc.org/article/"+r.Source+"/"+r.ID
		default:
			continue
		}
		if e.Title == "" {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// stripTags removes the inline markup (<h4>, <i>, <sup>) Europe PMC keeps in
// abstracts and collapses white space.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// clinicalTrials searches studies with the v2 API.
func (s *Searcher) clinicalTrials(ctx context.Context, query string, max int) ([]Evidence, error) {
	q := url.Values{"query.term": {query}, "pageSize": {strconv.Itoa(max)}, "format": {"json"}}
	var resp struct {
		Studies *[]struct {
			ProtocolSection struct {
				IdentificationModule struct {
					NCTID         string `json:"nctId"`
					BriefTitle    string `json:"briefTitle"`
					OfficialTitle string `json:"officialTitle"`
				} `json:"identificationModule"`
				StatusModule struct {
					OverallStatus   string `json:"overallStatus"`
					StartDateStruct struct {
						Date string `json:"date"`
					} `json:"startDateStruct"`
				} `json:"statusModule"`
				DescriptionModule struct {
					BriefSummary string `json:"briefSummary"`
				} `json:"descriptionModule"`
			} `json:"protocolSection"`
		} `json:"studies"`
	}
	if err := s.getJSON(ctx, "clinicaltrials studies", s.Config.ClinicalTrialsURL+"/studies?"+q.Encode(), &resp); err != nil {
		return nil, err
	}
	if resp.Studies == nil {
		return nil, fmt.Errorf("clinicaltrials studies: the response has no studies list")
	}
	var out []Evidence
	for _, st := range *resp.Studies {
		if len(out) == max {
			break
		}
		id := st.ProtocolSection.IdentificationModule
		if id.NCTID == "" {
			continue
		}
		title := id.BriefTitle
		if title == "" {
			title = id.OfficialTitle
		}
		summary := strings.Join(strings.Fields(st.ProtocolSection.DescriptionModule.BriefSummary), " ")
		if status := st.ProtocolSection.StatusModule.OverallStatus; status != "" {
			summary = strings.TrimSpace("[" + status + "] " + summary)
		}
		out = append(out, Evidence{
			ID: "nct:" + id.NCTID, Title: title, Summary: summary,
			URL: "https://clinicaltrials.gov/study/" + id.NCTID, Source: ClinicalTrials,
			Year: yearOf(st.ProtocolSection.StatusModule.StartDateStruct.Date),
		})
	}
	return out, nil
}
