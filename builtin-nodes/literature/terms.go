package literature

import (
	"strings"
	"unicode"
)

// questionWords are the words of a question that are no search terms: the
// auxiliaries and interrogatives a question starts with, and function words.
var questionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and of to in on for with by about from as at or
		does do did is are was were be been can could should would will may might must has have had
		what which who whom whose when where why how whether
		there any some this that these those it its their
		i me my we our you your`) {
		questionWords[w] = true
	}
}

// SearchTerms turns a question such as "Does metformin slow cognitive
// decline?" into the terms sent to the sources ("metformin slow cognitive
// decline"): the sources AND every word, so question and function words
// would only narrow the search, and Europe PMC reads "?" as a wildcard. A
// query written in the sources' syntax (quotes, parentheses, field tags,
// AND/OR/NOT) is sent unchanged, and so is anything that would be left
// empty.
func SearchTerms(query string) string {
	q := strings.TrimSpace(query)
	if strings.ContainsAny(q, `"()[]*:`) {
		return q
	}
	for _, op := range []string{" AND ", " OR ", " NOT "} {
		if strings.Contains(q, op) {
			return q
		}
	}
	var terms []string
	for _, w := range strings.Fields(q) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w == "" || questionWords[strings.ToLower(w)] {
			continue
		}
		terms = append(terms, w)
	}
	if len(terms) == 0 {
		return q
	}
	return strings.Join(terms, " ")
}
