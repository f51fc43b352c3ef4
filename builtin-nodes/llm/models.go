// Package llm is graphctl's model layer and its llm node type.
//
// Model access goes through langchaingo (llms.Model, embeddings.Embedder).
// A model is named by a spec "provider:model":
//
//	openai:gpt-4o-mini     OPENAI_API_KEY; OPENAI_BASE_URL points it at any
//	                       OpenAI-compatible server (vLLM, llama.cpp, LM Studio…)
//	ollama:llama3.2        OLLAMA_HOST (default http://127.0.0.1:11434)
//	anthropic:claude-…     ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL optional)
//	huggingface:ORG/MODEL  HF_TOKEN; the Hugging Face router's OpenAI-compatible
//	                       chat endpoint (https://router.huggingface.co/v1), or
//	                       HF_BASE_URL: a Text Generation Inference server's /v1
//	                       (a model suffix ":provider" picks a router provider)
//	googleai:gemini-…      GOOGLE_API_KEY; Gemini's OpenAI-compatible endpoint
//	                       (GeminiOpenAIEndpoint), or GOOGLE_BASE_URL
//	script:FILE            a scripted model replaying the replies in FILE (JSON)
//
// Keys are read only from the environment. Which spec a node uses is decided by
// Model: a test case's scripted replies (ScriptKey) win over all; then
// the --llm flag or $GRAPHCTL_LLM (OverrideKey); then the node's own
// model; then the graph's defaults.llm.
//
// Clients are built once per engine: the package registers the per-engine
// service under ServiceKey (a *Models) that caches them.
//
// The scripted model (see Script) exists for demos and declarative tests: it
// replays declared replies in order, streaming them token by token, and says
// so in its errors.
//
// The llm node type (config: ConfigSchema) renders a system prompt from a
// template and context blocks, adds the last messages of the conversation and
// calls the model. Text replies stream as {"type": "text", "payload":
// {"content": token, "delta": true}} events and are appended to messages when
// complete; JSON replies are parsed, validated against the declared schema
// (with one repair round-trip), written to state fields by JSON path and shown
// through reply_from. Native tool calls, and tool_call / ecs_request objects
// of a JSON reply, become PENDING ExecutionContracts in contracts_field; the
// prompt shows every contract's status, result and error_message. Each call
// emits a usage event. HTTP 429 fails with the retryable code "rate_limit",
// 5xx and timeouts with the retryable "llm_error". Tools are builtin Go tools
// by name or MCP tools as "mcp:<server>/<tool>" and "mcp:<server>/*",
// offered to the model as "<server>__<tool>" (mcp_tool_names); a turn with
// tool calls is written to messages as an AI message with LangChain's
// tool_calls, which the mcp_tool node answers with tool messages.
package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/graphctl/graphctl/builtin-nodes/internal/callretry"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/node"
)

// Keys of the services (node.Services.Extra) this package reads.
var (
	// OverrideKey holds the model spec chosen by the --llm flag or
	// $GRAPHCTL_LLM; it overrides every node's and the graph's model.
	OverrideKey = node.NewKey[string]("llm.override")
	// ScriptKey holds a declarative test case's scripted replies ([]any);
	// when present, every model-using node talks to a Script built from them.
	ScriptKey = node.NewKey[any]("llm.script")
	// ServiceKey is the per-engine service holding the client cache (*Models).
	ServiceKey = node.NewKey[*Models]("llm.models")
)

// ErrNoModel is returned (wrapped) when no model is configured anywhere.
var ErrNoModel = errors.New("no model configured")

// configureHint says every way a model can be configured.
const configureHint = "set one with the --llm flag (e.g. --llm openai:gpt-4o-mini), " +
	"the GRAPHCTL_LLM environment variable, the node's model setting, or the graph's defaults.llm; " +
	"providers: openai (OPENAI_API_KEY, OPENAI_BASE_URL), ollama (OLLAMA_HOST), " +
	"anthropic (ANTHROPIC_API_KEY), googleai (GOOGLE_API_KEY, GOOGLE_BASE_URL), huggingface (HF_TOKEN, HF_BASE_URL), script:FILE"

func init() {
	if err := node.RegisterService(ServiceKey, func() *Models { return NewModels(nil) }); err != nil {
		panic(err)
	}
	// Declarative tests hand a case's scripted replies to model nodes
	// under ScriptKey.
	if err := node.SetScriptKey(ScriptKey); err != nil {
		panic(err)
	}
}

// Models is the per-engine cache of model clients and embedders, keyed by
// spec. It is safe for concurrent use.
type Models struct {
	getenv func(string) string

	mu        sync.Mutex
	models    map[string]llms.Model
	embedders map[string]embeddings.Embedder
	script    *Script
	scriptSrc []any
	// scriptModel replays script per thread (see threadScript).
	scriptModel llms.Model
}

// NewModels returns an empty cache reading keys and base URLs with getenv
// (os.Getenv when nil).
func NewModels(getenv func(string) string) *Models {
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Models{getenv: getenv, models: map[string]llms.Model{}, embedders: map[string]embeddings.Embedder{}}
}

// Close releases the cached clients that hold resources (those that are
// io.Closers) and empties the cache.
func (m *Models) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for spec, mdl := range m.models {
		if c, ok := mdl.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close model %s: %w", spec, err))
			}
		}
	}
	m.models = map[string]llms.Model{}
	return errors.Join(errs...)
}

// Resolve returns the spec a node uses: the override, else the node's own
// spec, else the graph default. It fails with ErrNoModel and a message saying
// how to configure one when all are empty.
func Resolve(s *node.Services, nodeSpec, graphDefault string) (string, error) {
	if s != nil {
		if o, ok := OverrideKey.Get(s); ok && strings.TrimSpace(o) != "" {
			return strings.TrimSpace(o), nil
		}
	}
	for _, spec := range []string{nodeSpec, graphDefault} {
		if strings.TrimSpace(spec) != "" {
			return inGraphDir(s, strings.TrimSpace(spec)), nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrNoModel, configureHint)
}

// Model returns the model for a node: OverrideKey (the --llm flag /
// $GRAPHCTL_LLM) wins over the node's own spec, which wins over the graph
// default (defaults.llm); a test case's ScriptKey wins over all.
func Model(ctx context.Context, s *node.Services, nodeSpec, graphDefault string) (llms.Model, error) {
	m := modelsOf(s)
	if s != nil {
		if raw, ok := ScriptKey.Get(s); ok && raw != nil {
			return m.scriptFor(raw)
		}
	}
	spec, err := Resolve(s, nodeSpec, graphDefault)
	if err != nil {
		return nil, err
	}
	return m.Model(ctx, spec)
}

// Embedder returns the embedder for spec ("openai:text-embedding-3-small",
// "googleai:gemini-embedding-001", "ollama:nomic-embed-text", or "hash" /
// "hash:DIM" for local deterministic vectors). Under a test script (ScriptKey) or a script: override
// it is always the hash embedder, so that tests need no network.
func Embedder(ctx context.Context, s *node.Services, spec string) (embeddings.Embedder, error) {
	m := modelsOf(s)
	if s != nil {
		scripted := ScriptKey.Has(s)
		o, _ := OverrideKey.Get(s)
		if scripted || strings.HasPrefix(strings.TrimSpace(o), "script:") {
			spec = "hash"
		}
	}
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("%w: no embedding model: set the embedding model in the node's config "+
			"(e.g. openai:text-embedding-3-small with OPENAI_API_KEY, ollama:nomic-embed-text with OLLAMA_HOST, or hash for local vectors)", ErrNoModel)
	}
	return m.Embedder(ctx, strings.TrimSpace(spec))
}

// modelsOf returns the engine's cache, or a fresh one when the services have
// none (a node run outside an engine).
func modelsOf(s *node.Services) *Models {
	if s != nil {
		if m, ok := ServiceKey.Get(s); ok && m != nil {
			return m
		}
	}
	return NewModels(nil)
}

func (m *Models) scriptFor(raw any) (llms.Model, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("scripted replies (%s) must be a list, got %T", ScriptKey, raw)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.script != nil && sameList(m.scriptSrc, list) {
		return m.scriptModel, nil
	}
	sc, err := NewScript(list)
	if err != nil {
		return nil, err
	}
	m.script, m.scriptSrc = sc, list
	m.scriptModel = newThreadScript(sc, "test case")
	return m.scriptModel, nil
}

func sameList(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// providers are the model providers a spec may name.
var providers = []string{"openai", "ollama", "anthropic", "googleai", "huggingface", "hf", "script"}

// ParseSpec splits "provider:model" into its parts; a provider graphctl
// does not have is an error (with the closest one it has).
func ParseSpec(spec string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(strings.TrimSpace(spec), ":")
	if !ok || provider == "" {
		return "", "", fmt.Errorf("model spec %q: want provider:model (openai, ollama, anthropic, googleai, huggingface or script)", spec)
	}
	provider = strings.ToLower(provider)
	if !slices.Contains(providers, provider) {
		return "", "", fmt.Errorf("model spec %q: unknown provider %q%s (want openai, ollama, anthropic, googleai, huggingface or script)",
			spec, provider, diag.DidYouMean(provider, providers))
	}
	return provider, model, nil
}

// Model returns the cached client for spec, building it on first use.
func (m *Models) Model(_ context.Context, spec string) (llms.Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mdl, ok := m.models[spec]; ok {
		return mdl, nil
	}
	mdl, err := m.build(spec)
	if err != nil {
		return nil, err
	}
	m.models[spec] = mdl
	return mdl, nil
}

// build makes the client a spec names.
func (m *Models) build(spec string) (llms.Model, error) {
	provider, name, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if name == "" && provider != "script" {
		return nil, fmt.Errorf("model spec %q names no model after %q", spec, provider+":")
	}
	var mdl llms.Model
	options, openAIProtocol := m.openAIProtocolOptions(provider)
	switch {
	case openAIProtocol:
		mdl, err = m.openAICompatible(name, options)
	case provider == "ollama":
		mdl, err = ollama.New(ollama.WithModel(name), ollama.WithServerURL(m.ollamaURL()), ollama.WithHTTPClient(m.httpClient()))
	case provider == "anthropic":
		mdl, err = m.anthropic(name)
	case provider == "script":
		if name == "" {
			return nil, fmt.Errorf("model spec %q: want script:FILE, a JSON list of replies", spec)
		}
		return loadThreadScript(name)
	default:
		return nil, fmt.Errorf("model spec %q: unknown provider %q (want openai, ollama, anthropic, googleai, huggingface or script)", spec, provider)
	}
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", spec, err)
	}
	return mdl, nil
}

// openAIProtocolOptions returns the option reader of a provider served
// through langchaingo's OpenAI client, and false for the other providers.
func (m *Models) openAIProtocolOptions(provider string) (func() ([]openai.Option, error), bool) {
	switch provider {
	case "openai":
		return m.openaiOptions, true
	case "huggingface", "hf":
		return m.huggingfaceOptions, true
	case "googleai":
		return m.googleAIOptions, true
	}
	return nil, false
}

// openAICompatible builds langchaingo's OpenAI client with the key and base
// URL options reads.
func (m *Models) openAICompatible(name string, options func() ([]openai.Option, error)) (llms.Model, error) {
	opts, err := options()
	if err != nil {
		return nil, err
	}
	return openai.New(append(m.defaultOpenAIOptions(), append(opts, openai.WithModel(name))...)...)
}

func (m *Models) anthropic(name string) (llms.Model, error) {
	key := m.getenv("ANTHROPIC_API_KEY")
	if key == "" {
		return nil, errors.New("ANTHROPIC_API_KEY is not set; export it, or choose another model with --llm or GRAPHCTL_LLM")
	}
	opts := []anthropic.Option{anthropic.WithToken(key), anthropic.WithModel(name), anthropic.WithHTTPClient(m.httpClient())}
	if base := m.getenv("ANTHROPIC_BASE_URL"); base != "" {
		opts = append(opts, anthropic.WithBaseURL(base))
	}
	return anthropic.New(opts...)
}

// GeminiOpenAIEndpoint is the Gemini API's OpenAI-compatible endpoint
// (chat completions with streaming, tools, images and JSON mode, and
// embeddings), which takes the API key as a bearer token.
const GeminiOpenAIEndpoint = "https://generativelanguage.googleapis.com/v1beta/openai"

// googleAIOptions reads GOOGLE_API_KEY and GOOGLE_BASE_URL (another address
// of the same API: a proxy, or a local server in tests). Gemini needs the
// key; a proxy of one's own may not.
// Images given by http(s) address are sent inline (inlineImages).
func (m *Models) googleAIOptions() ([]openai.Option, error) {
	key := m.getenv("GOOGLE_API_KEY")
	base := strings.TrimRight(m.getenv("GOOGLE_BASE_URL"), "/")
	if key == "" && base == "" {
		return nil, errors.New("GOOGLE_API_KEY is not set; export it (or GOOGLE_BASE_URL for a proxy of the Gemini API), or choose another model with --llm or GRAPHCTL_LLM")
	}
	if key == "" {
		key = "unused"
	}
	if base == "" {
		base = GeminiOpenAIEndpoint
	}
	images := inlineImages{next: guardTransport{}, fetch: &http.Client{Timeout: time.Minute}}
	return []openai.Option{openai.WithToken(key), openai.WithBaseURL(base), openai.WithHTTPClient(callretry.Client("model", images))}, nil
}

// defaultOpenAIOptions are the options every client built on langchaingo's
// OpenAI client starts from; a provider's own options come after them and
// replace them.
func (m *Models) defaultOpenAIOptions() []openai.Option {
	return []openai.Option{openai.WithHTTPClient(m.httpClient())}
}

// openaiOptions reads the key and base URL. A base URL without a key is
// accepted (local OpenAI-compatible servers usually need none).
func (m *Models) openaiOptions() ([]openai.Option, error) {
	key, base := m.getenv("OPENAI_API_KEY"), m.getenv("OPENAI_BASE_URL")
	if key == "" && base == "" {
		return nil, errors.New("OPENAI_API_KEY is not set; export it (or OPENAI_BASE_URL for an OpenAI-compatible server), or choose another model with --llm or GRAPHCTL_LLM")
	}
	if key == "" {
		key = "unused"
	}
	opts := []openai.Option{openai.WithToken(key)}
	if base != "" {
		opts = append(opts, openai.WithBaseURL(strings.TrimRight(base, "/")))
	}
	return opts, nil
}

// httpClient is the HTTP client of every model client: transient failures
// (429, 5xx, connection resets, timeouts) are retried per the calling node's
// call_retry policy, honouring Retry-After, and a streamed reply that breaks
// is an error (ErrBrokenStream), never a reply.
func (m *Models) httpClient() *http.Client {
	return callretry.Client("model", guardTransport{})
}

// HuggingFaceRouter is the Hugging Face router's OpenAI-compatible API,
// which serves chat models of many inference providers with one HF_TOKEN.
const HuggingFaceRouter = "https://router.huggingface.co/v1"

// huggingfaceOptions reads HF_TOKEN (or the older HUGGINGFACEHUB_API_TOKEN)
// and HF_BASE_URL. The router needs the token; a Text Generation Inference
// server of one's own (HF_BASE_URL) may not.
func (m *Models) huggingfaceOptions() ([]openai.Option, error) {
	key := m.getenv("HF_TOKEN")
	if key == "" {
		key = m.getenv("HUGGINGFACEHUB_API_TOKEN")
	}
	base := strings.TrimRight(m.getenv("HF_BASE_URL"), "/")
	if key == "" && base == "" {
		return nil, errors.New("HF_TOKEN is not set; export a Hugging Face access token (or HF_BASE_URL for a Text Generation Inference server), or choose another model with --llm or GRAPHCTL_LLM")
	}
	if key == "" {
		key = "unused"
	}
	if base == "" {
		base = HuggingFaceRouter
	}
	return []openai.Option{openai.WithToken(key), openai.WithBaseURL(base)}, nil
}

func (m *Models) ollamaURL() string {
	host := m.getenv("OLLAMA_HOST")
	if host == "" {
		return "http://127.0.0.1:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	return host
}

// Embedder returns the cached embedder for spec, building it on first use.
func (m *Models) Embedder(ctx context.Context, spec string) (embeddings.Embedder, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.embedders[spec]; ok {
		return e, nil
	}
	e, err := m.buildEmbedder(spec)
	if err != nil {
		return nil, err
	}
	m.embedders[spec] = e
	return e, nil
}

func (m *Models) buildEmbedder(spec string) (embeddings.Embedder, error) {
	provider, name, found := strings.Cut(spec, ":")
	provider = strings.ToLower(provider)
	if provider == "hash" {
		dim := 256
		if found && name != "" {
			if _, err := fmt.Sscanf(name, "%d", &dim); err != nil || dim <= 0 {
				return nil, fmt.Errorf("embedding spec %q: want hash:DIM with a positive dimension", spec)
			}
		}
		return HashEmbedder{Dim: dim}, nil
	}
	if !found || name == "" {
		return nil, fmt.Errorf("embedding spec %q: want provider:model (openai, googleai, ollama or hash)", spec)
	}
	var client embeddings.EmbedderClient
	switch provider {
	case "openai", "googleai":
		options, _ := m.openAIProtocolOptions(provider)
		opts, err := options()
		if err != nil {
			return nil, fmt.Errorf("%w: embedder %s: %w", ErrNoEmbedder, spec, err)
		}
		c, err := openai.New(append(m.defaultOpenAIOptions(), append(opts, openai.WithEmbeddingModel(name))...)...)
		if err != nil {
			return nil, fmt.Errorf("embedder %s: %w", spec, err)
		}
		client = c
	case "ollama":
		c, err := ollama.New(ollama.WithModel(name), ollama.WithServerURL(m.ollamaURL()), ollama.WithHTTPClient(m.httpClient()))
		if err != nil {
			return nil, fmt.Errorf("embedder %s: %w", spec, err)
		}
		client = c
	default:
		return nil, fmt.Errorf("embedding spec %q: provider %q has no embeddings here (want openai, googleai, ollama or hash)", spec, provider)
	}
	e, err := embeddings.NewEmbedder(client)
	if err != nil {
		return nil, fmt.Errorf("embedder %s: %w", spec, err)
	}
	return e, nil
}
