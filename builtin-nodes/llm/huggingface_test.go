package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// TestHuggingFaceProvider talks to a local server speaking the API of the
// Hugging Face router and of Text Generation Inference (OpenAI's chat
// completions): the model id goes as given, HF_TOKEN as the bearer token.
func TestHuggingFaceProvider(t *testing.T) {
	const model = "meta-llama/Llama-3.1-8B-Instruct"
	tests := []struct {
		name     string
		env      map[string]string
		spec     string
		wantAuth string
		wantErr  string
	}{
		{name: "router token", env: map[string]string{"HF_TOKEN": "hf_abc"}, spec: "huggingface:" + model, wantAuth: "Bearer hf_abc"},
		{name: "legacy token variable", env: map[string]string{"HUGGINGFACEHUB_API_TOKEN": "hf_old"}, spec: "hf:" + model, wantAuth: "Bearer hf_old"},
		{name: "router provider suffix", env: map[string]string{"HF_TOKEN": "hf_abc"}, spec: "huggingface:" + model + ":novita", wantAuth: "Bearer hf_abc"},
		{name: "own TGI server without token", env: map[string]string{}, spec: "huggingface:tgi", wantAuth: "Bearer unused"},
		{name: "no token", spec: "huggingface:" + model, wantErr: "HF_TOKEN is not set"},
		{name: "no model", env: map[string]string{"HF_TOKEN": "hf_abc"}, spec: "huggingface:", wantErr: "names no model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text("Hello from the hub.")))
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.env != nil {
				// The router's address is replaced by the local server's.
				env["HF_BASE_URL"] = srv.URL()
			}
			models := llm.NewModels(func(k string) string { return env[k] })
			mdl, err := models.Model(context.Background(), tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			resp, err := mdl.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
				llms.WithStreamingFunc(func(_ context.Context, b []byte) error { streamed.Write(b); return nil }))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Choices[0].Content != "Hello from the hub." || streamed.String() != "Hello from the hub." {
				t.Errorf("reply %q, streamed %q", resp.Choices[0].Content, streamed.String())
			}
			req := srv.Requests()[0]
			wantModel := strings.TrimPrefix(strings.TrimPrefix(tt.spec, "huggingface:"), "hf:")
			if req.Model != wantModel || req.Authorization != tt.wantAuth || !req.Stream {
				t.Errorf("request model %q, auth %q, stream %v; want %q, %q, streamed", req.Model, req.Authorization, req.Stream, wantModel, tt.wantAuth)
			}
		})
	}
	if llm.HuggingFaceRouter != "https://router.huggingface.co/v1" {
		t.Errorf("router URL = %s", llm.HuggingFaceRouter)
	}
}
