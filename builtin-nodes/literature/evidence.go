// Package literature searches the biomedical literature: PubMed (NCBI
// E-utilities esearch + esummary), Europe PMC (REST search) and
// ClinicalTrials.gov (API v2 studies), over their public JSON wire formats.
//
// It registers the lit_search node type, which runs a query against the
// configured sources concurrently, normalizes every hit to an Evidence
// object, removes duplicates (a PubMed record and the Europe PMC record of the
// same PMID are one piece of evidence) and writes the result to a list field
// whose reducer is merge_by_id, so searching again updates evidence in place.
//
// A question ("Does metformin slow cognitive decline?") is searched by its
// terms (see SearchTerms); a query in the sources' own syntax is sent as
// written.
//
// Each piece of evidence also carries its outcome as Outcome reads it from
// the title and summary: "effect" (an effect or association is reported),
// "no_effect" (none is), or nothing. The lit_conflicts node type uses stance
// and outcome to open conflicts structurally: two pieces of evidence cited
// on one hypothesis, one supporting and one contradicting it, or one
// reporting an effect and one none, are an open conflict (id auto-cN)
// unless the pair has a conflict already, open or resolved.
//
// Base URLs are configuration, read in this order: the environment
// (GRAPHCTL_PUBMED_URL, GRAPHCTL_EUROPEPMC_URL, GRAPHCTL_CLINICALTRIALS_URL),
// the graph's defaults.literature block ({pubmed_url, europepmc_url,
// clinicaltrials_url}), then the public services. The littest package serves
// the same wire formats on 127.0.0.1 for tests.
package literature

import (
	"strings"
)

// Source names, as graph files write them and as events report them.
const (
	PubMed         = "pubmed"
	EuropePMC      = "europepmc"
	ClinicalTrials = "clinicaltrials"
)

// SourceNames lists every source in the order results are merged.
var SourceNames = []string{PubMed, EuropePMC, ClinicalTrials}

// Evidence is one normalized search hit.
type Evidence struct {
	// ID identifies the work across sources: "pubmed:PMID" for anything with a
	// PMID, "pmc:PMCID" for a PMC-only record, "nct:NCTID" for a trial, else
	// "europepmc:SOURCE:ID".
	ID string `json:"id"`
	// Title is the article's or the study's title.
	Title string `json:"title"`
	// Summary is the abstract (Europe PMC), the brief summary (a trial), or
	// the journal and authors (PubMed's esummary carries no abstract).
	Summary string `json:"summary"`
	// URL is the record's public page.
	URL string `json:"url"`
	// Source is the first source that returned the record.
	Source string `json:"source"`
	// Sources lists every source that returned it, in SourceNames order.
	Sources []string `json:"sources"`
	// Year is the publication (or study start) year; 0 when unknown.
	Year int `json:"year,omitempty"`
	// Outcome is what the title and summary report, as Outcome reads them:
	// "effect", "no_effect", or "" (neither, both, or no results yet).
	Outcome string `json:"outcome,omitempty"`
}

// Map returns e as a state value (the JSON shape of a list<object> item).
func (e Evidence) Map() map[string]any {
	m := map[string]any{
		"id":      e.ID,
		"title":   e.Title,
		"summary": e.Summary,
		"url":     e.URL,
		"source":  e.Source,
	}
	sources := make([]any, len(e.Sources))
	for i, s := range e.Sources {
		sources[i] = s
	}
	m["sources"] = sources
	if e.Year != 0 {
		m["year"] = e.Year
	}
	if e.Outcome != "" {
		m["outcome"] = e.Outcome
	}
	return m
}

// Merge combines the hits of several sources, given in SourceNames order:
// the first hit of an id keeps its position, and later hits of the same id
// only fill fields it lacks (a Europe PMC abstract completes a PubMed hit) and
// add their source to Sources.
func Merge(lists ...[]Evidence) []Evidence {
	var out []Evidence
	index := map[string]int{}
	for _, list := range lists {
		for _, e := range list {
			if e.ID == "" {
				continue
			}
			if len(e.Sources) == 0 && e.Source != "" {
				e.Sources = []string{e.Source}
			}
			i, seen := index[e.ID]
			if !seen {
				index[e.ID] = len(out)
				e.Sources = append([]string(nil), e.Sources...)
				out = append(out, e)
				continue
			}
			have := &out[i]
			if have.Title == "" {
				have.Title = e.Title
			}
			if len(strings.TrimSpace(have.Summary)) < len(strings.TrimSpace(e.Summary)) && e.Source != have.Source {
				// A longer text from another source is an abstract where the
				// first source had only a citation line.
				have.Summary = e.Summary
			}
			if have.URL == "" {
				have.URL = e.URL
			}
			if have.Year == 0 {
				have.Year = e.Year
			}
			for _, s := range e.Sources {
				if !containsString(have.Sources, s) {
					have.Sources = append(have.Sources, s)
				}
			}
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// yearOf returns the leading four-digit year of a date such as "2021 Mar 15"
// or "2020-03", or 0.
func yearOf(date string) int {
	date = strings.TrimSpace(date)
	if len(date) < 4 {
		return 0
	}
	y := 0
	for _, r := range date[:4] {
		if r < '0' || r > '9' {
			return 0
		}
		y = y*10 + int(r-'0')
	}
	return y
}
