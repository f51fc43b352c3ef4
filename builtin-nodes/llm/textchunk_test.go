package llm

import (
	"encoding/json"
	"testing"
)

// textChunkSeeds are chunks of every shape plainTextChunk meets.
var textChunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
	` { "choices" : [ { "index" : 0 , "delta" : { "content" : "a b" } } ] , "usage" : null } `,
	`{"choices":[{"delta":{"content":null}}],"service_tier":"default","obfuscation":"x1","extra":{"a":[1,-2.5e3,true,false,null,{"b":"c\"d"}]}}`,
	"{\"choices\":[{\"delta\":{\"content\":\"é ✓ \u2028\"}}]}",
	`{"choices":[{"delta":{"content":"escaped \u2028"}}]}`,
	"{\"choices\":[{\"delta\":{\"content\":\"bad \xff\"}}]}",
	`{"choices":[{"delta":{"content":"line\nbreak"}}]}`,
	`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`,
	`{"choices":[]}`,
	`{"choices":null}`,
	`{"Choices":[{"delta":{"content":"case"}}]}`,
	`{"choices":[{"Delta":{"content":"case"}}]}`,
	`{"choices":[{"delta":{"CONTENT":"case"}}]}`,
	`{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}`,
	`{"created":1e3,"choices":[{"delta":{"content":"x"}}]}`,
	`{"created":"now","choices":[{"delta":{"content":"x"}}]}`,
	`{"created":1234567890123456789,"choices":[{"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":01,"delta":{"content":"x"}}]}`,
	`{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}`,
	`{"choices":[{"delta":{"content":"x"},"finish_reason":""}]}`,
	`{"choices":[{"delta":{"content":"x","tool_calls":[]}}]}`,
	`{"choices":[{"delta":{"content":"x","tool_calls":null,"function_call":null,"reasoning_content":""}}]}`,
	`{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`,
	`{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}}`,
	`{"choices":[{"delta":{"content":"x"}}],"error":null}`,
	`{"choices":[{"delta":{"content":"x"}}],"error":{"message":"boom"}}`,
	`{"type":"message_stop"}`,
	`{"choices":[{"delta":{"role":7,"content":"x"}}]}`,
	`{"choices":[{"delta":{"content":"x"}}]} trailing`,
	`{"choices":[{"delta":{"content":"x"}}]`,
	`{"choices":[{"delta":{"content":"x"}}],}`,
	`{"choices":[{"delta":{"content":"x"}}],"deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"choices":[{"delta":{"content":"x\u0041"}}]}`,
	`{"choices":[{"delta":{"content":"tab	in"}}]}`,
	`[]`,
	`null`,
	``,
}

// Whenever plainTextChunk reads a chunk, decoding it as the stream guard
// otherwise does gives the same: no error, a chunk of text only, the same
// text.
func FuzzPlainTextChunk(f *testing.F) {
	for _, s := range textChunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPlainTextChunk(t, data)
	})
}

func checkPlainTextChunk(t *testing.T, data []byte) {
	t.Helper()
	text, ok := plainTextChunk(data)
	if !ok {
		return
	}
	var c openaiChunk
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: read as text %q, but it does not decode: %v", data, text, err)
	}
	if c.Type != "" || len(c.Error) > 0 && string(c.Error) != "null" || !c.textOnly() {
		t.Fatalf("%s: read as text %q, but decodes to %+v", data, text, c)
	}
	if got := c.Choices[0].Delta.Content; got != text {
		t.Fatalf("%s: read as text %q, decodes to text %q", data, text, got)
	}
}

// The commonest chunks are read without the decoder; the others are left
// to it.
func TestPlainTextChunk(t *testing.T) {
	tests := []struct {
		chunk string
		text  string
		ok    bool
	}{
		{textChunkSeeds[0], "Hello", true},
		{textChunkSeeds[1], "", true},
		{textChunkSeeds[2], "a b", true},
		{textChunkSeeds[3], "", true},
		{textChunkSeeds[4], "é ✓ \u2028", true},
		{textChunkSeeds[5], "", false},
		{`{"choices":[{"delta":{"content":"line\nbreak"}}]}`, "", false},
		{`{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}`, "", false},
		{`{"Choices":[{"delta":{"content":"case"}}]}`, "", false},
		{`{"choices":[{"delta":{"content":"a","content":"b"}}]}`, "", false},
		{`{"created":1e3,"choices":[{"delta":{"content":"x"}}]}`, "", false},
		{`{"choices":[{"delta":{"content":"x"}}]} trailing`, "", false},
	}
	for _, tt := range tests {
		text, ok := plainTextChunk([]byte(tt.chunk))
		if ok != tt.ok || text != tt.text {
			t.Errorf("%s: %q, %v; want %q, %v", tt.chunk, text, ok, tt.text, tt.ok)
		}
	}
	for _, s := range textChunkSeeds {
		checkPlainTextChunk(t, []byte(s))
	}
}
