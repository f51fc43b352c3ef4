package rag

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/namespace"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// ImageSummaryConfig is the schema of an image_summary node's config.
const ImageSummaryConfig = `{
	model?: string
	image: string
	question?: string
	field?: *"vision" | string
}`

// summaryInstruction asks for the summary JSON.
const summaryInstruction = `Describe this image for a question-answering assistant. Reply with one JSON object only, no other text:
{"summary": "<what the image shows, in the language of the user's question, or Japanese if there is none>",
 "entities": ["<named things, products, people, numbers worth citing>"],
 "tables": [{"title": "<table title>", "rows": [["<cell>", "..."]]}],
 "warnings": ["<anything unreadable, cut off or uncertain>"]}
Use empty lists when there is nothing to report.`

func init() {
	node.MustRegister(node.Type{
		Name: "image_summary",
		Description: "Summarizes an image with a vision model as {summary, entities, tables, warnings}, " +
			"kept in the node cache by the image's SHA-256; given a list of images (an album), summarizes each " +
			"and combines them, with each image's summary under images.",
		Config: ImageSummaryConfig,
		New:    newImageSummary,
	})
}

type imageSummaryNode struct {
	model        string
	graphDefault string
	image        node.Expr
	question     node.Template
	field        string
}

func newImageSummary(b node.Builder) (node.Node, error) {
	var cfg struct {
		Model    string `json:"model"`
		Image    string `json:"image"`
		Question string `json:"question"`
		Field    string `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "image_summary node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	if cfg.Field == "" {
		cfg.Field = "vision"
	}
	n := &imageSummaryNode{model: cfg.Model, graphDefault: llm.GraphDefault(b.Graph()), field: cfg.Field}
	n.image = b.Expr("image", cfg.Image, graph.Any)
	if cfg.Question != "" {
		n.question = b.Template("question", cfg.Question)
	}
	if f := check.Field(b, "field", cfg.Field); f != nil && f.Type.Kind != graph.Object && f.Type.Kind != graph.Any {
		b.Errorf("field", "invalid-config", "image_summary node %q writes an object to %q, which is declared %s", b.NodeName(), cfg.Field, f.Type)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Prepare implements node.Preparer.
func (n *imageSummaryNode) Prepare(ctx context.Context, s *node.Services) error {
	if err := namespace.RequireStore(s, "image_summary"); err != nil {
		return err
	}
	if s != nil {
		if llm.ScriptKey.Has(s) {
			return nil
		}
	}
	_, err := llm.Resolve(s, n.model, n.graphDefault)
	return err
}

// ImageBytes decodes an image given as a data URL or raw base64, with its
// MIME type (from the data URL, else sniffed from the bytes); data that is
// not an image is an error. An http(s) URL is returned as its own bytes (its
// identity is the URL) with an empty MIME type.
func ImageBytes(s string) (data []byte, mime string, err error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return []byte(s), "", nil
	}
	if strings.HasPrefix(lower, "data:") {
		header, payload, ok := strings.Cut(s, ",")
		if !ok || !strings.HasSuffix(strings.ToLower(header), ";base64") {
			return nil, "", fmt.Errorf("data URL is not base64-encoded (want data:<mime>;base64,<data>)")
		}
		mime = header[len("data:") : len(header)-len(";base64")]
		s = payload
	}
	data, err = base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, "", fmt.Errorf("image is neither a URL nor valid base64: %w", err)
	}
	if mime == "" {
		mime = http.DetectContentType(data)
	}
	if !strings.HasPrefix(mime, "image/") {
		return nil, "", fmt.Errorf("the data is %s, not an image", mime)
	}
	return data, mime, nil
}

// imagePart is the message part that shows the image to a model: an http(s)
// URL as is; decoded data as a data URL for a model that takes images as URLs
// (urls), else as binary data.
func imagePart(img string, data []byte, mime string, urls bool) llms.ContentPart {
	switch {
	case mime == "":
		return llms.ImageURLPart(strings.TrimSpace(img))
	case urls:
		return llms.ImageURLPart("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data))
	}
	return llms.BinaryPart(mime, data)
}

// Run implements node.Node.
func (n *imageSummaryNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if in.Cache == nil {
		return nil, node.Errorf("no_store", "%s: image_summary keeps summaries in the node cache, and this run has none (it needs a long-term memory store)", in.Node)
	}
	v, err := n.image.Eval(in.Scope)
	if err != nil {
		return nil, node.Errorf("expression_error", "%s: image (%s): %w", in.Node, n.image.Source(), err)
	}
	var images []string
	switch v := v.(type) {
	case string:
		images = []string{v}
	case []any:
		for i, x := range v {
			img, ok := x.(string)
			if !ok {
				return nil, node.Errorf("invalid_image", "%s: image (%s): item %d is %s, not an image", in.Node, n.image.Source(), i, graph.DescribeValue(x))
			}
			images = append(images, img)
		}
	default:
		return nil, node.Errorf("invalid_image", "%s: image (%s) is %s, want an image or a list of images", in.Node, n.image.Source(), graph.DescribeValue(v))
	}
	if len(images) == 0 || slices.ContainsFunc(images, func(img string) bool { return strings.TrimSpace(img) == "" }) {
		return nil, node.Errorf("invalid_image", "%s: image (%s) is empty", in.Node, n.image.Source())
	}
	if len(images) == 1 {
		out, err := n.summarize(ctx, in, images[0])
		if err != nil {
			return nil, err
		}
		return node.Update{n.field: out}, nil
	}
	summaries := make([]map[string]any, len(images))
	for i, img := range images {
		if summaries[i], err = n.summarize(ctx, in, img); err != nil {
			return nil, fmt.Errorf("image %d of %d: %w", i+1, len(images), err)
		}
	}
	return node.Update{n.field: combineSummaries(summaries)}, nil
}

// combineSummaries makes one summary of several images' (an album's): the
// summaries numbered in order, the entities, tables and warnings of all,
// the first image's identity, cached when every one was, and each image's
// own summary under images.
func combineSummaries(summaries []map[string]any) map[string]any {
	out := maps.Clone(summaries[0])
	var text []string
	var entities, tables, warnings, each []any
	cached := true
	for i, s := range summaries {
		text = append(text, fmt.Sprintf("%d. %s", i+1, s["summary"]))
		entities = append(entities, asList(s["entities"])...)
		tables = append(tables, asList(s["tables"])...)
		warnings = append(warnings, asList(s["warnings"])...)
		cached = cached && s["cached"] == true
		each = append(each, s)
	}
	out["summary"] = strings.Join(text, "\n")
	out["entities"], out["tables"], out["warnings"] = nonNilList(entities), nonNilList(tables), nonNilList(warnings)
	out["cached"], out["images"] = cached, each
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func nonNilList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

// summarize returns one image's summary, from the node cache when the
// image was seen before.
func (n *imageSummaryNode) summarize(ctx context.Context, in *node.Input, img string) (map[string]any, error) {
	data, mime, err := ImageBytes(img)
	if err != nil {
		return nil, node.Errorf("invalid_image", "%s: image (%s): %w", in.Node, n.image.Source(), err)
	}
	sha := Hash(string(data))
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	if stored, hit, err := in.Cache.Lookup(ctx, sha); err != nil {
		return nil, err
	} else if hit {
		if s, ok := stored[n.field].(map[string]any); ok {
			emit(event.Event{Type: "vision", Payload: map[string]any{"image_sha256": sha, "cached": true}})
			return withCached(s, true), nil
		}
	}
	if old := n.legacySummary(ctx, in, sha); old != nil {
		if err := in.Cache.Store(ctx, sha, node.Update{n.field: old}); err != nil {
			emit(event.Event{Type: "cache_error", Payload: map[string]any{"node": in.Node, "message": err.Error()}})
		}
		emit(event.Event{Type: "vision", Payload: map[string]any{"image_sha256": sha, "cached": true}})
		return withCached(old, true), nil
	}
	mdl, err := llm.Model(ctx, in.Services, n.model, n.graphDefault)
	if err != nil {
		return nil, node.Errorf("llm_config", "%s: %w", in.Node, err)
	}
	prompt := summaryInstruction
	if n.question != nil {
		q, err := n.question.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "%s: question: %w", in.Node, err)
		}
		if strings.TrimSpace(q) != "" {
			prompt += "\n\nThe user's question about the image: " + q
		}
	}
	_, isOpenAI := mdl.(*openai.LLM)
	part := imagePart(img, data, mime, isOpenAI)
	mdl = llm.Traced(llm.SpecFor(in.Services, n.model, n.graphDefault), mdl)
	resp, err := mdl.GenerateContent(llm.WithNode(ctx, in.Node), []llms.MessageContent{{
		Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextPart(prompt), part},
	}})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: model call: %w", in.Node, ctx.Err())
		}
		return nil, node.Retryable("llm_error", fmt.Errorf("%s: model call: %w", in.Node, err))
	}
	if resp == nil || len(resp.Choices) == 0 {
		return nil, node.Retryable("llm_error", fmt.Errorf("%s: the model returned no choices", in.Node))
	}
	summary, err := ParseSummary(resp.Choices[0].Content)
	if err != nil {
		return nil, node.Errorf("invalid_output", "%s: %w", in.Node, err)
	}
	out := withCached(summary, false)
	out["image_sha256"], out["mime"], out["size"] = sha, mime, len(data)
	out["model"] = llm.SpecFor(in.Services, n.model, n.graphDefault)
	if err := in.Cache.Store(ctx, sha, node.Update{n.field: out}); err != nil {
		// The summary stands; only the next run with this image misses.
		emit(event.Event{Type: "cache_error", Payload: map[string]any{"node": in.Node, "message": err.Error()}})
	}
	emit(event.Event{Type: "vision", Payload: map[string]any{"image_sha256": sha, "cached": false}})
	return out, nil
}

// legacyNamespace is where versions before the node cache stored image
// summaries, keyed by the image's SHA-256.
var legacyNamespace = []string{"vision_cache"}

// legacySummary is the summary of the image with hash sha that a version
// before the node cache stored, as this node's update value, or nil. A
// record that cannot be read counts as none: the image is analyzed again.
func (n *imageSummaryNode) legacySummary(ctx context.Context, in *node.Input, sha string) map[string]any {
	if in.Services == nil || in.Services.Store == nil {
		return nil
	}
	item, err := in.Services.Store.Get(ctx, legacyNamespace, sha)
	if err != nil {
		return nil
	}
	summary, ok := item.Value["summary_json"].(map[string]any)
	if !ok {
		return nil
	}
	out := withCached(summary, false)
	out["image_sha256"] = sha
	for _, k := range []string{"mime", "size", "model"} {
		if v, ok := item.Value[k]; ok {
			out[k] = v
		}
	}
	return out
}

// withCached is a copy of a summary with its cached flag set.
func withCached(summary map[string]any, cached bool) map[string]any {
	out := make(map[string]any, len(summary)+1)
	for k, v := range summary {
		out[k] = v
	}
	out["cached"] = cached
	return out
}

// ParseSummary parses a model's vision summary: one JSON object (optionally
// in a code fence) with a string summary and list entities, tables and
// warnings (missing lists become empty).
func ParseSummary(reply string) (map[string]any, error) {
	s := strings.TrimSpace(reply)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "```json"), "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i {
		s = s[i : j+1]
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("vision reply is not a JSON object {summary, entities, tables, warnings}: %w (reply %.80q)", err, reply)
	}
	if _, ok := m["summary"].(string); !ok {
		return nil, fmt.Errorf("vision reply has no string summary (got %s)", graph.DescribeValue(m["summary"]))
	}
	out := map[string]any{"summary": m["summary"]}
	for _, k := range []string{"entities", "tables", "warnings"} {
		switch v := m[k].(type) {
		case nil:
			out[k] = []any{}
		case []any:
			out[k] = v
		default:
			return nil, fmt.Errorf("vision reply: %s must be a list, got %s", k, graph.DescribeValue(v))
		}
	}
	return out, nil
}
