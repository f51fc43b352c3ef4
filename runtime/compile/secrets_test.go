package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInlineSecrets checks which literal values are taken for credentials:
// real-looking keys and tokens are errors; placeholders, environment
// references and ordinary names are not.
func TestInlineSecrets(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // "" for no diagnostic
	}{
		{"openai project key", `"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"`, "an OpenAI API key (sk-pro…)"},
		{"openai key in text", `"use sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w please"`, "an OpenAI API key"},
		{"anthropic key", `"sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8t"`, "an Anthropic API key"},
		{"tavily key", `"tvly-Ab3dEf6hIj9kLm2nOp5q"`, "a Tavily API key"},
		{"bearer token", `"Bearer 0123456789abcdefghij"`, "a bearer token (Bearer 0123…)"},
		{"lower-case bearer", `"bearer abcdefghijklmnop1234"`, "a bearer token"},
		{"github token", `"ghp_0123456789abcdefghijABCDEFGHIJ0123"`, "a GitHub token"},
		{"telegram bot token", `"123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8"`, "a Telegram bot token"},
		{"aws key", `"AKIAIOSFODNN7EXAMPLE"`, "an AWS access key"},
		{"aws session key", `"ASIAIOSFODNN7EXAMPLE"`, "an AWS access key"},
		{"google key", `"AIzaSyA0123456789abcdefghijklmnopqrstu"`, "a Google API key"},
		{"github fine-grained token", `"github_pat_0123456789abcdefghijABCDEFGHIJ"`, "a GitHub token"},
		{"hugging face token", `"hf_0123456789abcdefghijABCDEFGHIJ"`, "a Hugging Face token"},
		{"groq key", `"gsk_0123456789abcdefghijABCDEFGHIJ"`, "a Groq API key"},
		{"slack token", `"xoxb-0123456789-abcdef"`, "a Slack token"},
		{"private key", `"-----BEGIN RSA PRIVATE KEY-----"`, "a private key"},
		{"upper-case bearer", `"BEARER abcdefghijklmnop1234"`, "a bearer token"},
		{"nested in a list", `{headers: [{value: "Bearer 0123456789abcdefghij"}]}`, "nodes.a.config.key.headers.0.value"},
		{"placeholder", `"sk-..."`, ""},
		{"short bearer", `"Bearer TOKEN"`, ""},
		{"template bearer", `"Bearer ${token}"`, ""},
		{"environment reference", `{env: "OPENAI_API_KEY"}`, ""},
		{"long name without digits", `"sk-learn-text-classifier-model"`, ""},
		{"word ending in sk", `"task-0123456789abcdefghijklmn"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `dsl_version: "graphctl/v1"
name: "s"
state: count: {type: "int"}
start: "a"
nodes: a: {type: "compiletest_noop", config: key: ` + tt.value + `, next: "END"}
`
			path := filepath.Join(t.TempDir(), "s.cue")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range check(t, path) {
				if d.Code == CodeInlineSecret {
					got = append(got, d.Path+": "+d.Message)
				}
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("unexpected: %v", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("got %v, want one diagnostic containing %q", got, tt.want)
			}
		})
	}
}
