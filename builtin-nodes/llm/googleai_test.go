package llm_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime/event"
)

// geminiPath is where Gemini serves its OpenAI-compatible API.
const geminiPath = "/v1beta/openai"

// geminiModels is a model cache with GOOGLE_API_KEY set and GOOGLE_BASE_URL
// pointing at srv, a local server under Gemini's OpenAI-compatible path.
func geminiModels(srv *llmtest.Server, key string) *llm.Models {
	env := map[string]string{"GOOGLE_API_KEY": key, "GOOGLE_BASE_URL": srv.URL()}
	return llm.NewModels(func(k string) string { return env[k] })
}

// TestGoogleAIProvider runs the llm node with a googleai: model against a
// local server speaking Gemini's OpenAI-compatible API: every request goes
// to <base>/chat/completions with the model as named and GOOGLE_API_KEY as
// the bearer token, and text (streamed or not), tool calls and images work.
func TestGoogleAIProvider(t *testing.T) {
	const key = "AIza-test-key"
	image := "data:image/png;base64,iVBORw0KGgo="
	tests := []struct {
		name  string
		reply llmtest.Reply
		cfg   map[string]any
		state map[string]any
		check func(t *testing.T, up map[string]any, rec *events, req llmtest.Request)
	}{
		{
			name: "streamed text", reply: llmtest.Text("Hello from Gemini."),
			cfg: map[string]any{}, state: userSays("hi"),
			check: func(t *testing.T, _ map[string]any, rec *events, req llmtest.Request) {
				var streamed strings.Builder
				for _, ev := range rec.of(event.Text) {
					s, _ := ev.Payload["content"].(string)
					streamed.WriteString(s)
				}
				if !req.Stream || streamed.String() != "Hello from Gemini." {
					t.Errorf("stream %v, streamed %q; want the reply streamed", req.Stream, streamed.String())
				}
			},
		},
		{
			name: "text without streaming", reply: llmtest.Text("Hello from Gemini."),
			cfg: map[string]any{"stream": false}, state: userSays("hi"),
			check: func(t *testing.T, up map[string]any, _ *events, req llmtest.Request) {
				msg, _ := up["messages"].(map[string]any)
				if req.Stream || msg["content"] != "Hello from Gemini." {
					t.Errorf("stream %v, message %v; want one unstreamed reply", req.Stream, up["messages"])
				}
			},
		},
		{
			name: "tool call", reply: llmtest.Call("llmtest_weather", map[string]any{"city": "Paris"}),
			cfg:   map[string]any{"tools": []any{"llmtest_weather"}, "contracts_field": "pending"},
			state: userSays("weather in Paris?"),
			check: func(t *testing.T, up map[string]any, _ *events, req llmtest.Request) {
				list, _ := up["pending"].([]any)
				if len(req.Tools) != 1 || req.Tools[0] != "llmtest_weather" || len(list) != 1 {
					t.Fatalf("tools offered %v, contracts %v; want the weather tool offered and called", req.Tools, up["pending"])
				}
				if c := list[0].(map[string]any); c["tool_name"] != "llmtest_weather" || c["arguments"].(map[string]any)["city"] != "Paris" {
					t.Errorf("contract = %v", c)
				}
			},
		},
		{
			name: "image", reply: llmtest.Text("a cat"),
			cfg: map[string]any{},
			state: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "what is this?", "id": "m1",
				"images": []any{image}}}},
			check: func(t *testing.T, _ map[string]any, _ *events, req llmtest.Request) {
				if len(req.Messages) == 0 {
					t.Fatal("no messages sent")
				}
				if imgs := req.Messages[len(req.Messages)-1].Images; len(imgs) != 1 || imgs[0] != image {
					t.Errorf("images sent = %v, want the data URL", imgs)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithBasePath(geminiPath), llmtest.WithReplies(tt.reply))
			g := testGraph(t)
			cfg := map[string]any{"model": "googleai:gemini-2.0-flash"}
			for k, v := range tt.cfg {
				cfg[k] = v
			}
			up, rec, err := run(t, g, build(t, g, cfg), servicesFor(geminiModels(srv, key)), tt.state)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			req := reqs[0]
			if req.Path != geminiPath+"/chat/completions" || req.Authorization != "Bearer "+key || req.Model != "gemini-2.0-flash" {
				t.Errorf("request path %q, auth %q, model %q; want %q, %q, gemini-2.0-flash",
					req.Path, req.Authorization, req.Model, geminiPath+"/chat/completions", "Bearer "+key)
			}
			tt.check(t, up, rec, req)
		})
	}
	if llm.GeminiOpenAIEndpoint != "https://generativelanguage.googleapis.com/v1beta/openai" {
		t.Errorf("Gemini endpoint = %s", llm.GeminiOpenAIEndpoint)
	}
}

// TestGoogleAIEmbedder embeds through Gemini's OpenAI-compatible
// embeddings endpoint; without GOOGLE_API_KEY the embedder is not
// configured (ErrNoEmbedder), so nodes with an offline fallback use it.
func TestGoogleAIEmbedder(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithBasePath(geminiPath))
	e, name, err := llm.EmbedderFor(context.Background(), servicesFor(geminiModels(srv, "AIza-test-key")), "googleai:gemini-embedding-001")
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.EmbedDocuments(context.Background(), []string{"the cat sat on the mat", "a cat on a mat", "stock market prices fell"})
	if err != nil {
		t.Fatal(err)
	}
	if name != "googleai:gemini-embedding-001" || len(vecs) != 3 || len(vecs[0]) != 64 {
		t.Fatalf("embedder %q gave %d vectors, want googleai:gemini-embedding-001 and 3 of length 64", name, len(vecs))
	}
	if near, far := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[2]); near <= far {
		t.Errorf("similar texts %.3f not closer than unrelated %.3f", near, far)
	}
	if calls := srv.Embeddings(); len(calls) != 1 || len(calls[0]) != 3 {
		t.Errorf("embedding calls = %v", calls)
	}

	unset := servicesFor(llm.NewModels(func(string) string { return "" }))
	_, _, err = llm.EmbedderFor(context.Background(), unset, "googleai:gemini-embedding-001")
	if !errors.Is(err, llm.ErrNoEmbedder) || !strings.Contains(err.Error(), "GOOGLE_API_KEY is not set") {
		t.Errorf("err = %v, want ErrNoEmbedder saying GOOGLE_API_KEY is not set", err)
	}
}

// TestNoGoogleCloudClientsLinked keeps Google's Cloud and Vertex AI client
// libraries (gRPC clients with large protobuf descriptors, initialised in
// every graphctl command) out of the model layer: googleai: speaks Gemini's
// OpenAI-compatible API through the OpenAI client.
func TestNoGoogleCloudClientsLinked(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the package's dependencies: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"cloud.google.com/", "github.com/google/generative-ai-go/", "github.com/tmc/langchaingo/llms/googleai"} {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("the model layer links %s", pkg)
			}
		}
	}
}

// TestGoogleAISendsImageAddressesInline fetches an image given by http(s)
// address and sends it to Gemini's OpenAI-compatible endpoint as a data
// URL, since that endpoint reads images inline; an address that does not
// serve an image fails the call with an error naming it.
func TestGoogleAISendsImageAddressesInline(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cat.png":
			w.Write(png) // no Content-Type: sniffed from the bytes
		case "/page.html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html></html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer images.Close()
	tests := []struct {
		name, image string
		want        string // the image sent, or the error's text
		wantErr     bool
	}{
		{name: "image address", image: images.URL + "/cat.png", want: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)},
		{name: "data URL unchanged", image: "data:image/png;base64,iVBORw0KGgo=", want: "data:image/png;base64,iVBORw0KGgo="},
		{name: "missing image", image: images.URL + "/gone.png", want: images.URL + "/gone.png: 404", wantErr: true},
		{name: "not an image", image: images.URL + "/page.html", want: "not an image", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithBasePath(geminiPath), llmtest.WithReplies(llmtest.Text("a cat")))
			g := testGraph(t)
			state := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "what is this?", "id": "m1",
				"images": []any{tt.image}}}}
			_, _, err := run(t, g, build(t, g, map[string]any{"model": "googleai:gemini-2.0-flash"}), servicesFor(geminiModels(srv, "AIza-test-key")), state)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want one saying %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || len(reqs[0].Messages) == 0 {
				t.Fatalf("requests = %v, want one with messages", reqs)
			}
			if imgs := reqs[0].Messages[len(reqs[0].Messages)-1].Images; len(imgs) != 1 || imgs[0] != tt.want {
				t.Errorf("images sent = %v, want [%s]", imgs, tt.want)
			}
		})
	}
}
