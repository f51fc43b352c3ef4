package loadgen

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestModelStreamsTimedTokens: "tokens N INTERVAL" streams N chunks of the
// OpenAI chat stream, each a valid chunk whose content is the time it was
// written, in order, then the end of the stream.
func TestModelStreamsTimedTokens(t *testing.T) {
	m, err := StartModel()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"tokens 5 1ms"}]}`
	start := time.Now().UnixNano()
	resp, err := http.Post(m.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var times []int64
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			break
		}
		var chunk struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if chunk.Object != "chat.completion.chunk" || len(chunk.Choices) != 1 {
			t.Fatalf("chunk %q", data)
		}
		c := chunk.Choices[0].Delta.Content
		if c == "" {
			continue // the role's chunk, and the last one
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(c, " "), 10, 64)
		if err != nil || !strings.HasSuffix(c, " ") {
			t.Fatalf("token %q is not a time followed by a space", c)
		}
		times = append(times, n)
	}
	if !done || len(times) != 5 {
		t.Fatalf("%d timed tokens, end seen %v", len(times), done)
	}
	for i, n := range times {
		if n < start || n > time.Now().UnixNano() || (i > 0 && n <= times[i-1]) {
			t.Fatalf("token times out of order or range: %v (start %d)", times, start)
		}
	}
}
