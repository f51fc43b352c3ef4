package literature

import (
	"regexp"
	"strings"
)

// Outcomes a record reports, as Outcome reads them.
const (
	// OutcomeEffect: the record reports an effect or an association (a
	// lower risk, a slowed decline, a reduction).
	OutcomeEffect = "effect"
	// OutcomeNoEffect: the record reports no effect or no association.
	OutcomeNoEffect = "no_effect"
)

// noEffectCues mark a sentence that reports no effect. They are checked
// before the effect cues, so "did not slow" is no effect.
var noEffectCues = regexp.MustCompile(`(?i)\b(?:` + strings.Join([]string{
	`(?:did|does|do|was|were|is|are|has|have) not (?:significantly |meaningfully |substantially )?(?:slow|reduce|lower|improve|affect|change|prevent|delay|alter|differ|decrease|protect|benefit)`,
	`(?:was|were|is|are) not (?:significantly |independently )?(?:associated|linked|related|superior|effective)`,
	`not (?:significantly |independently )?associated`,
	`no (?:significant |statistically significant |clear |meaningful |detectable |clinically meaningful )?(?:effect|difference|benefit|association|improvement|reduction|change|protection|slowing)`,
	`failed to (?:slow|reduce|lower|improve|show|demonstrate|prevent)`,
	`no evidence (?:of|that|for)`,
	`null (?:result|finding|effect)s?`,
	`removes? (?:most of |much of |all of )?the (?:apparent |observed )?association`,
	`(?:similar|comparable) (?:to|with) placebo`,
}, "|") + `)`)

// effectCues mark a sentence that reports an effect.
var effectCues = regexp.MustCompile(`(?i)\b(?:` + strings.Join([]string{
	`associated with (?:a |an )?(?:lower|reduced|decreased|slower|smaller|higher|increased|greater)`,
	`(?:reduced|reduces|lowered|lowers|slowed|slows|improved|improves|decreased|decreases|prevented|prevents|delayed|delays|attenuated|attenuates)`,
	`protect(?:s|ed|ive)?`,
	`(?:lower|reduced|decreased|higher|increased) (?:\w+ )?(?:risk|incidence|rate|odds|hazard)`,
	`linked to (?:a )?(?:lower|reduced|higher|increased)`,
	`significant(?:ly)? (?:lower|reduced|slower|improved|better|fewer)`,
}, "|") + `)`)

var (
	headings       = regexp.MustCompile(`(?is)<h[1-6][^>]*>.*?</h[1-6]>`)
	tags           = regexp.MustCompile(`<[^>]+>`)
	sentenceBreaks = regexp.MustCompile(`[.;!?]\s+|[.;!?]$|\n+`)
)

// Outcome reads what a record reports from its title and summary: effect,
// no_effect, or "" when it reports neither or both (a registered trial
// without results, a record with mixed findings). It is a conservative
// reading of cue phrases ("did not slow", "was associated with a lower
// incidence"), sentence by sentence; questions count for nothing.
func Outcome(title, summary string) string {
	effects, nones := 0, 0
	for _, text := range []string{title, summary} {
		for _, s := range splitSentences(plain(text)) {
			switch {
			case strings.HasSuffix(s, "?"):
			case noEffectCues.MatchString(s):
				nones++
			case effectCues.MatchString(s):
				effects++
			}
		}
	}
	switch {
	case nones > 0 && effects == 0:
		return OutcomeNoEffect
	case effects > 0 && nones == 0:
		return OutcomeEffect
	}
	return ""
}

// OutcomeSentence returns the first sentence of the summary (or title) that
// supports the outcome, for a conflict's description.
func OutcomeSentence(title, summary, outcome string) string {
	for _, text := range []string{summary, title} {
		for _, s := range splitSentences(plain(text)) {
			if strings.HasSuffix(s, "?") {
				continue
			}
			none := noEffectCues.MatchString(s)
			if (outcome == OutcomeNoEffect && none) || (outcome == OutcomeEffect && !none && effectCues.MatchString(s)) {
				return s
			}
		}
	}
	return ""
}

// plain drops markup: section headings (Europe PMC's <h4>Results</h4>) end
// a sentence, other tags are spaces.
func plain(text string) string {
	return tags.ReplaceAllString(headings.ReplaceAllString(text, ". "), " ")
}

// splitSentences splits text into trimmed sentences; a question keeps its
// question mark.
func splitSentences(text string) []string {
	var out []string
	last := 0
	for _, loc := range sentenceBreaks.FindAllStringIndex(text, -1) {
		end := loc[0] + 1
		if end > len(text) {
			end = len(text)
		}
		s := strings.TrimSpace(text[last:end])
		s = strings.TrimRight(s, ".;! ")
		if s != "" {
			out = append(out, strings.Join(strings.Fields(s), " "))
		}
		last = loc[1]
	}
	if s := strings.TrimSpace(text[last:]); s != "" {
		out = append(out, strings.Join(strings.Fields(s), " "))
	}
	return out
}
