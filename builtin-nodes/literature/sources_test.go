package literature_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/graphctl/graphctl/builtin-nodes/literature"
	"github.com/graphctl/graphctl/builtin-nodes/literature/littest"
	"github.com/graphctl/graphctl/runtime/graph"
)

func searcherFor(srv *littest.Server) *literature.Searcher {
	return &literature.Searcher{Config: literature.Config{
		PubMedURL: srv.PubMedURL(), EuropePMCURL: srv.EuropePMCURL(), ClinicalTrialsURL: srv.ClinicalTrialsURL(),
	}, Client: &http.Client{}}
}

func ids(list []literature.Evidence) []string {
	out := []string{}
	for _, e := range list {
		out = append(out, e.ID)
	}
	return out
}

func TestSearchSources(t *testing.T) {
	srv := littest.NewServer(t)
	s := searcherFor(srv)
	tests := []struct {
		source, query string
		max           int
		wantIDs       []string
		first         literature.Evidence
		summaryHas    string
	}{
		{source: literature.PubMed, query: "metformin cognitive decline", max: 10,
			wantIDs: []string{"pubmed:39000102", "pubmed:39000103"},
			first: literature.Evidence{ID: "pubmed:39000102", Title: "Metformin and cognitive decline: a randomized trial in adults with mild cognitive impairment",
				URL: "https://pubmed.ncbi.nlm.nih.gov/39000102/", Source: literature.PubMed, Year: 2023},
			summaryHas: "Fixture Clin Trials. 2023 Jan. Chen D, Haddad E"},
		{source: literature.PubMed, query: "metformin", max: 1, wantIDs: []string{"pubmed:39000101"},
			first: literature.Evidence{ID: "pubmed:39000101", Title: "Metformin use and incidence of dementia in older adults with type 2 diabetes: a cohort study",
				URL: "https://pubmed.ncbi.nlm.nih.gov/39000101/", Source: literature.PubMed, Year: 2021},
			summaryHas: "Rivera A"},
		{source: literature.PubMed, query: "zebrafish", max: 10, wantIDs: []string{}},
		{source: literature.EuropePMC, query: "metformin cognitive decline", max: 10,
			wantIDs: []string{"pubmed:39000102", "pubmed:39000103", "pmc:PMC11000104"},
			first: literature.Evidence{ID: "pubmed:39000102", Title: "Metformin and cognitive decline: a randomized trial in adults with mild cognitive impairment",
				URL: "https://europepmc.org/article/MED/39000102", Source: literature.EuropePMC, Year: 2023},
			summaryHas: "did not slow cognitive decline"},
		{source: literature.EuropePMC, query: "metformin dementia incidence", max: 10, wantIDs: []string{"pubmed:39000101"},
			first: literature.Evidence{ID: "pubmed:39000101", Title: "Metformin use and incidence of dementia in older adults with type 2 diabetes: a cohort study",
				URL: "https://europepmc.org/article/MED/39000101", Source: literature.EuropePMC, Year: 2021},
			// Europe PMC's inline markup is removed.
			summaryHas: "Background Metformin has been linked"},
		{source: literature.ClinicalTrials, query: "metformin cognitive decline", max: 10,
			wantIDs: []string{"nct:NCT09000201", "nct:NCT09000202"},
			first: literature.Evidence{ID: "nct:NCT09000201", Title: "Metformin in Amnestic Mild Cognitive Impairment",
				URL: "https://clinicaltrials.gov/study/NCT09000201", Source: literature.ClinicalTrials, Year: 2021},
			summaryHas: "[RECRUITING] A phase 2 trial"},
		{source: literature.ClinicalTrials, query: "prediabetes", max: 10, wantIDs: []string{"nct:NCT09000202"},
			first: literature.Evidence{ID: "nct:NCT09000202", Title: "Metformin for Prevention of Dementia in Prediabetes",
				URL: "https://clinicaltrials.gov/study/NCT09000202", Source: literature.ClinicalTrials, Year: 2019},
			summaryHas: "[COMPLETED]"},
	}
	for _, tt := range tests {
		t.Run(tt.source+"/"+tt.query, func(t *testing.T) {
			got, err := s.Search(context.Background(), tt.source, tt.query, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got); !reflect.DeepEqual(g, tt.wantIDs) {
				t.Fatalf("ids = %v, want %v", g, tt.wantIDs)
			}
			if len(got) == 0 {
				return
			}
			first := got[0]
			if !strings.Contains(first.Summary, tt.summaryHas) {
				t.Errorf("summary %q does not contain %q", first.Summary, tt.summaryHas)
			}
			first.Summary = ""
			if !reflect.DeepEqual(first, tt.first) {
				t.Errorf("first hit = %+v, want %+v", first, tt.first)
			}
		})
	}
}

func TestSearchSendsWireParameters(t *testing.T) {
	srv := littest.NewServer(t)
	s := searcherFor(srv)
	for _, src := range literature.SourceNames {
		if _, err := s.Search(context.Background(), src, "metformin cognitive", 3); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
	want := []string{
		"/pubmed/esearch.fcgi?db=pubmed&retmax=3&retmode=json&sort=relevance&term=metformin+cognitive",
		"/pubmed/esummary.fcgi?db=pubmed&id=39000102%2C39000103&retmode=json",
		"/europepmc/search?format=json&pageSize=3&query=metformin+cognitive&resultType=core",
		"/ctgov/studies?format=json&pageSize=3&query.term=metformin+cognitive",
	}
	if got := srv.Requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSearchErrors(t *testing.T) {
	tests := []struct {
		name, source, query string
		failure             littest.Failure
		want                []string
	}{
		{name: "pubmed rate limit", source: literature.PubMed, query: "metformin",
			failure: littest.Failure{Status: 429, Body: `{"error":"API rate limit exceeded","api-key":"127.0.0.1","count":"4","limit":"3"}`},
			want:    []string{"pubmed esearch", "HTTP 429", "API rate limit exceeded"}},
		{name: "pubmed malformed", source: literature.PubMed, query: "metformin",
			failure: littest.Failure{Status: 200, Body: `{"esearchresult": {"idlist": [`},
			want:    []string{"pubmed esearch", "not the expected JSON"}},
		{name: "pubmed empty term", source: literature.PubMed, query: " ",
			want: []string{"pubmed esearch: Empty term"}},
		{name: "pubmed wrong shape", source: literature.PubMed, query: "metformin",
			failure: littest.Failure{Status: 200, Body: `{"header": {"type": "esearch"}}`},
			want:    []string{"no esearchresult"}},
		{name: "europepmc server error", source: literature.EuropePMC, query: "metformin",
			failure: littest.Failure{Status: 503, Body: "<html><body>Service Unavailable</body></html>"},
			want:    []string{"europepmc search", "HTTP 503", "Service Unavailable"}},
		{name: "europepmc error member", source: literature.EuropePMC, query: "",
			want: []string{"europepmc search: error 400: query parameter must not be empty"}},
		{name: "europepmc html with 200", source: literature.EuropePMC, query: "metformin",
			failure: littest.Failure{Status: 200, Body: "<!DOCTYPE html><p>maintenance</p>"},
			want:    []string{"not the expected JSON", "maintenance"}},
		{name: "clinicaltrials bad request", source: literature.ClinicalTrials, query: "metformin",
			failure: littest.Failure{Status: 400, Body: "pageSize: must be at most 1000"},
			want:    []string{"clinicaltrials studies", "HTTP 400", "pageSize"}},
		{name: "clinicaltrials no studies member", source: literature.ClinicalTrials, query: "metformin",
			failure: littest.Failure{Status: 200, Body: `{"totalCount": 0}`},
			want:    []string{"no studies list"}},
		{name: "long non-ASCII body", source: literature.ClinicalTrials, query: "metformin",
			// 199 ASCII bytes, then 3-byte runes: the 200-byte excerpt ends inside one.
			failure: littest.Failure{Status: 502, Body: strings.Repeat("x", 199) + strings.Repeat("障害", 20)},
			want:    []string{"HTTP 502", strings.Repeat("x", 199) + "…"}},
		{name: "unknown source", source: "scopus", query: "metformin", want: []string{`unknown literature source "scopus"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []littest.Option
			if tt.failure.Status != 0 {
				opts = append(opts, littest.WithFailure(tt.source, tt.failure))
			}
			srv := littest.NewServer(t, opts...)
			_, err := searcherFor(srv).Search(context.Background(), tt.source, tt.query, 5)
			if err == nil {
				t.Fatal("no error")
			}
			if !utf8.ValidString(err.Error()) {
				t.Errorf("error %q is not valid UTF-8", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestSearchUnreachable(t *testing.T) {
	srv := littest.NewServer(t)
	s := searcherFor(srv)
	s.Config.PubMedURL = "http://127.0.0.1:1/eutils"
	_, err := s.Search(context.Background(), literature.PubMed, "metformin", 5)
	if err == nil || !strings.Contains(err.Error(), "pubmed esearch") {
		t.Fatalf("error %v, want a pubmed esearch connection error", err)
	}
}

func TestMerge(t *testing.T) {
	pm := literature.Evidence{ID: "pubmed:1", Title: "T", Summary: "J. 2020", URL: "https://pubmed.ncbi.nlm.nih.gov/1/", Source: literature.PubMed, Year: 2020}
	epmc := literature.Evidence{ID: "pubmed:1", Title: "T", Summary: "A longer abstract of the article.", URL: "https://europepmc.org/article/MED/1", Source: literature.EuropePMC, Year: 2020}
	preprint := literature.Evidence{ID: "pmc:PMC2", Title: "P", Summary: "S", Source: literature.EuropePMC}
	trial := literature.Evidence{ID: "nct:NCT1", Title: "N", Source: literature.ClinicalTrials, Year: 2019}
	tests := []struct {
		name  string
		lists [][]literature.Evidence
		want  []literature.Evidence
	}{
		{name: "same PMID from two sources is one hit with the abstract",
			lists: [][]literature.Evidence{{pm}, {epmc, preprint}, {trial}},
			want: []literature.Evidence{
				{ID: "pubmed:1", Title: "T", Summary: "A longer abstract of the article.", URL: "https://pubmed.ncbi.nlm.nih.gov/1/", Source: literature.PubMed, Sources: []string{"pubmed", "europepmc"}, Year: 2020},
				{ID: "pmc:PMC2", Title: "P", Summary: "S", Source: literature.EuropePMC, Sources: []string{"europepmc"}},
				{ID: "nct:NCT1", Title: "N", Source: literature.ClinicalTrials, Sources: []string{"clinicaltrials"}, Year: 2019},
			}},
		{name: "a repeated hit within one source is dropped",
			lists: [][]literature.Evidence{{trial, trial}},
			want:  []literature.Evidence{{ID: "nct:NCT1", Title: "N", Source: literature.ClinicalTrials, Sources: []string{"clinicaltrials"}, Year: 2019}}},
		{name: "hits without an id are dropped",
			lists: [][]literature.Evidence{{{Title: "no id", Source: literature.PubMed}}},
			want:  nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := literature.Merge(tt.lists...); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Merge =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestConfigOf(t *testing.T) {
	tests := []struct {
		name    string
		block   any
		env     map[string]string
		want    literature.Config
		wantErr []string
	}{
		{name: "public services by default", want: literature.Config{
			PubMedURL: literature.DefaultPubMedURL, EuropePMCURL: literature.DefaultEuropePMCURL, ClinicalTrialsURL: literature.DefaultClinicalTrialsURL}},
		{name: "graph defaults", block: map[string]any{"pubmed_url": "http://127.0.0.1:9/eutils/", "clinicaltrials_url": "https://ct.example/api/v2"},
			want: literature.Config{PubMedURL: "http://127.0.0.1:9/eutils", EuropePMCURL: literature.DefaultEuropePMCURL, ClinicalTrialsURL: "https://ct.example/api/v2"}},
		{name: "environment overrides the graph", block: map[string]any{"europepmc_url": "http://a.example/rest"},
			env:  map[string]string{literature.EnvEuropePMCURL: "http://b.example/rest"},
			want: literature.Config{PubMedURL: literature.DefaultPubMedURL, EuropePMCURL: "http://b.example/rest", ClinicalTrialsURL: literature.DefaultClinicalTrialsURL}},
		{name: "bad URL and unknown key", block: map[string]any{"pubmed_url": "eutils.example", "scopus_url": "http://x"},
			wantErr: []string{`defaults.literature has no key "scopus_url"`, `defaults.literature.pubmed_url: invalid URL "eutils.example"`}},
		{name: "bad environment URL", env: map[string]string{literature.EnvClinicalTrialsURL: "ftp://ct.example"},
			wantErr: []string{"$GRAPHCTL_CLINICALTRIALS_URL: invalid URL"}},
		{name: "not an object", block: "http://x", wantErr: []string{"defaults.literature must be an object"}},
		{name: "not a string", block: map[string]any{"pubmed_url": 3}, wantErr: []string{"defaults.literature.pubmed_url must be a URL string, got"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{literature.EnvPubMedURL, literature.EnvEuropePMCURL, literature.EnvClinicalTrialsURL} {
				t.Setenv(k, tt.env[k])
			}
			g := &graph.Graph{}
			if tt.block != nil {
				g.Defaults.Raw = map[string]any{literature.DefaultsKey: tt.block}
			}
			got, err := literature.ConfigOf(g)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, config %+v", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("config = %+v, want %+v", got, tt.want)
			}
		})
	}
}
