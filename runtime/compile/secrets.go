package compile

import (
	"fmt"
	"regexp"
	"strings"
)

// CodeInlineSecret is reported for a value that looks like an API key or a
// token written into a graph file: secrets come only from the environment.
const CodeInlineSecret = "inline-secret"

// secretPatterns recognise credentials by their well-known shapes. Each is
// long enough that ordinary words and placeholders ("sk-...", "Bearer TOKEN")
// do not match.
var secretPatterns = []struct {
	what, env string
	re        *regexp.Regexp
	// digit requires a digit in the match, so that a long hyphenated name
	// ("sk-learn-text-classifier-model") is not taken for a key.
	digit bool
}{
	{"an Anthropic API key", "ANTHROPIC_API_KEY", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`), true},
	{"an OpenAI API key", "OPENAI_API_KEY", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), true},
	{"a Tavily API key", "TAVILY_API_KEY", regexp.MustCompile(`\btvly-[A-Za-z0-9_-]{16,}`), true},
	{"a Google API key", "GOOGLE_API_KEY", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`), false},
	{"a GitHub token", "GITHUB_TOKEN", regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`), false},
	{"a Hugging Face token", "HF_TOKEN", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), false},
	{"a Groq API key", "GROQ_API_KEY", regexp.MustCompile(`\bgsk_[A-Za-z0-9]{30,}`), false},
	{"a Slack token", "SLACK_TOKEN", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), false},
	{"an AWS access key", "AWS_ACCESS_KEY_ID", regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), false},
	{"a Telegram bot token", "TELEGRAM_BOT_TOKEN", regexp.MustCompile(`\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b`), false},
	{"a bearer token", "API_TOKEN", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}`), false},
	{"a private key", "PRIVATE_KEY", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), false},
}

// secretHint matches every string that one of secretPatterns can match
// (and more): one scan of each value instead of one per pattern.
var secretHint = regexp.MustCompile(`sk-|tvly-|AIza|gh[pousr]_|github_pat_|hf_|gsk_|xox[abposr]-|AKIA|ASIA|:AA|(?i:bearer)|-----BEGIN `)

// checkInlineSecrets reports credentials written as literal values in node
// configs, graph defaults, vars and field defaults. (Declarative tests are not
// searched: their inputs are made up.)
func (c *compiler) checkInlineSecrets() {
	for _, n := range c.g.Nodes {
		c.walkSecrets(n.Config, "nodes."+n.Name+".config")
	}
	c.walkSecrets(c.g.Defaults.Raw, "defaults")
	c.walkSecrets(c.g.Vars, "vars")
	for _, f := range c.g.State {
		if f.HasDefault {
			c.walkSecrets(f.Default, "state."+f.Name+".default")
		}
	}
}

func (c *compiler) walkSecrets(v any, path string) {
	switch x := v.(type) {
	case string:
		if !secretHint.MatchString(x) {
			return
		}
		for _, p := range secretPatterns {
			loc := p.re.FindStringIndex(x)
			if loc == nil || p.digit && !strings.ContainsAny(x[loc[0]:loc[1]], "0123456789") {
				continue
			}
			c.errorf(c.nearest(path, c.g.PosOf(path)), CodeInlineSecret, path,
				"%s holds what looks like %s (%s): never write a secret into a graph file; put it in an environment variable and write {env: %q} here instead",
				path, p.what, redact(x[loc[0]:loc[1]]), p.env)
			return
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			c.walkSecrets(x[k], path+"."+k)
		}
	case []any:
		for i, item := range x {
			c.walkSecrets(item, fmt.Sprintf("%s.%d", path, i))
		}
	}
}

// redact shows the start of a secret and hides the rest.
func redact(s string) string {
	keep := 6
	if i := strings.IndexAny(s, " \t"); i >= 0 && i < 10 {
		keep = i + 5 // "Bearer abcd…"
	}
	if len(s) <= keep {
		return s
	}
	return s[:keep] + "…"
}
