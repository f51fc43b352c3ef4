package cognitive

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// Vision actions.
const (
	ActionAnalyzeOnly      = "analyze_only"
	ActionAnalyzeForMemory = "analyze_for_memory"
)

// Texts shown to the user by the vision node.
const (
	OCRResultPrefix = "📷 图片文本识别结果\n\n"
	NoTextMessage   = "📷 图片中未识别到文字"
	MemoryFormTitle = "保存记忆"
	PlanFormTitle   = "保存计划到日程"
	// NoText is the answer the OCR instruction asks for when an image has no text.
	NoText = "NO_TEXT"
)

// VisionConfig is the schema of a vision node's config.
const VisionConfig = `{
	model?: string
	image_field: string
	mime_field?: string
	action_field?: string
	action?: "analyze_only" | "analyze_for_memory"
	text_field?: string
	form_field?: string
	answer_field?: *"hitl_response" | string
	min_confidence?: *0.3 | number & >=0 & <=1
}`

func init() {
	node.MustRegister(node.Type{
		Name: "vision",
		Description: "Reads the text in an image with a vision model (OCR); shows it, or extracts a memory from it " +
			"and asks the user to confirm it with a form.",
		Config: VisionConfig,
		New:    newVision,
	})
}

const ocrInstruction = "Read all the text in this image (OCR). Reply with the text exactly as written, " +
	"keeping its line breaks and its language, and nothing else. " +
	"If the image contains no readable text, reply with exactly " + NoText + "."

const extractInstruction = `From the text below, read from an image the user uploaded, extract the one thing most worth remembering about the user.
Reply with one JSON object only, no other text:
{"key": "<short snake_case identifier>", "value": "<the fact, plan or preference, in the text's language>",
 "category": "<one of: plan, preference, fact, contact, event, other>", "confidence": <number from 0 to 1>,
 "target_time": "<when, for a plan>", "location": "<where, for a plan>", "participants": ["<who, for a plan>"]}
Use category "plan" for anything scheduled (a meeting, appointment, trip, deadline), with target_time, location and participants as far as the text gives them.
Use a confidence below 0.3 when the text holds nothing worth remembering.

Text:
`

type visionNode struct {
	model         *modelRef
	image         []string
	mime          []string
	actionField   []string
	action        string
	textField     []string
	formField     []string
	answerField   string
	minConfidence float64
}

func newVision(b node.Builder) (node.Node, error) {
	var cfg struct {
		Model         string   `json:"model"`
		ImageField    string   `json:"image_field"`
		MimeField     string   `json:"mime_field"`
		ActionField   string   `json:"action_field"`
		Action        string   `json:"action"`
		TextField     string   `json:"text_field"`
		FormField     string   `json:"form_field"`
		AnswerField   string   `json:"answer_field"`
		MinConfidence *float64 `json:"min_confidence"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "vision node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &visionNode{
		model:         &modelRef{name: cfg.Model, graphDefault: llm.GraphDefault(b.Graph())},
		action:        cfg.Action,
		answerField:   cfg.AnswerField,
		minConfidence: 0.3,
	}
	if cfg.MinConfidence != nil {
		n.minConfidence = *cfg.MinConfidence
	}
	n.image = readField(b, "image_field", cfg.ImageField)
	if cfg.MimeField != "" {
		n.mime = readField(b, "mime_field", cfg.MimeField)
	}
	switch {
	case cfg.ActionField != "" && cfg.Action != "":
		b.Errorf("action", "invalid-config", "vision node %q sets both action and action_field; keep one", b.NodeName())
	case cfg.ActionField != "":
		n.actionField = readField(b, "action_field", cfg.ActionField)
	case cfg.Action == "":
		n.action = ActionAnalyzeOnly
	}
	if cfg.TextField != "" {
		n.textField = objectField(b, "text_field", cfg.TextField, graph.String)
	}
	if cfg.FormField != "" {
		n.formField = objectField(b, "form_field", cfg.FormField, graph.Object)
	}
	if n.answerField == "" {
		n.answerField = "hitl_response"
	}
	if n.action != ActionAnalyzeOnly {
		check.Field(b, "answer_field", n.answerField)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// readField checks that the first element of a dotted state path is declared.
func readField(b node.Builder, cfgPath, path string) []string {
	parts := strings.Split(path, ".")
	if strings.TrimSpace(path) == "" || check.Field(b, cfgPath, parts[0]) == nil {
		if strings.TrimSpace(path) == "" {
			b.Errorf(cfgPath, "invalid-config", "vision node %q: %s is empty", b.NodeName(), cfgPath)
		}
		return nil
	}
	return parts
}

// lookup reads a dotted path of state.
func lookup(state map[string]any, path []string) any {
	v, _ := store.Lookup(state, strings.Join(path, "."))
	return v
}

// ImageFields says where the node reads its image, the image's MIME type and
// the action (dotted state paths, "" when not configured), and the action it
// always performs when it reads none. The chat server's /chat/image endpoint
// writes an upload there.
func (n *visionNode) ImageFields() (image, mime, actionField, fixedAction string) {
	image = strings.Join(n.image, ".")
	mime = strings.Join(n.mime, ".")
	if n.actionField != nil {
		return image, mime, strings.Join(n.actionField, "."), ""
	}
	return image, mime, "", n.action
}

// Prepare implements node.Preparer.
func (n *visionNode) Prepare(ctx context.Context, services *node.Services) error {
	return n.model.prepare(ctx, services, "vision")
}

// Run implements node.Node.
func (n *visionNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	action := n.action
	if n.actionField != nil {
		action, _ = lookup(in.State, n.actionField).(string)
		if action == "" {
			action = ActionAnalyzeOnly
		}
	}
	if action != ActionAnalyzeOnly && action != ActionAnalyzeForMemory {
		return nil, node.Errorf("invalid_action", "%s: action %q (from %s) must be %q or %q",
			in.Node, action, strings.Join(n.actionField, "."), ActionAnalyzeOnly, ActionAnalyzeForMemory)
	}
	mdl, err := llm.Model(ctx, in.Services, n.model.name, n.model.graphDefault)
	if err != nil {
		return nil, node.Errorf("llm_config", "%s: %w", in.Node, err)
	}
	var mime string
	if n.mime != nil {
		mime, _ = lookup(in.State, n.mime).(string)
	}
	part, err := imagePart(lookup(in.State, n.image), mime, isOpenAI(mdl))
	if err != nil {
		return nil, node.Errorf("invalid_image", "%s: image in %s: %w", in.Node, strings.Join(n.image, "."), err)
	}
	answer, err := n.model.generate(ctx, in, []llms.MessageContent{{
		Role:  llms.ChatMessageTypeHuman,
		Parts: []llms.ContentPart{llms.TextPart(ocrInstruction), part},
	}})
	if err != nil {
		return nil, err
	}
	text := cleanOCR(answer)
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	up := node.Update{}
	if n.textField != nil {
		up = nested(n.textField, text)
	}
	if text == "" {
		emit(event.Event{Type: event.Text, Payload: map[string]any{"content": NoTextMessage}})
		return up, nil
	}
	emit(event.Event{Type: event.Text, Payload: map[string]any{"content": OCRResultPrefix + text}})
	if action == ActionAnalyzeOnly {
		return up, nil
	}
	mem, ok, err := n.extractMemory(ctx, in, text)
	if err != nil {
		return nil, err
	}
	if !ok {
		return up, nil
	}
	form := memoryForm(mem, n.answerField)
	if n.formField != nil {
		for k, v := range nested(n.formField, form) {
			up[k] = v
		}
	}
	emit(event.Event{Type: HITLEvent, Payload: form})
	return nil, node.InterruptWith(n.answerField, form, up)
}

// extractMemory asks the model for a memory in the OCR text. ok is false
// when there is none worth a form: confidence below the threshold, or an
// answer that is not a usable memory even after one repair request.
func (n *visionNode) extractMemory(ctx context.Context, in *node.Input, text string) (map[string]any, bool, error) {
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, extractInstruction+text)}
	for attempt := 0; attempt < 2; attempt++ {
		answer, err := n.model.generate(ctx, in, msgs)
		if err != nil {
			return nil, false, err
		}
		mem, err := parseMemory(answer)
		if err == nil {
			conf, _ := number(mem["confidence"])
			return mem, conf >= n.minConfidence, nil
		}
		msgs = append(msgs,
			llms.TextParts(llms.ChatMessageTypeAI, answer),
			llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprintf("That answer cannot be used: %v. Reply with the JSON object only.", err)))
	}
	// A memory that cannot be read after the repair request counts as none.
	return nil, false, nil
}

// parseMemory validates an extracted memory.
func parseMemory(answer string) (map[string]any, error) {
	obj, err := parseJSONObject(answer)
	if err != nil {
		return nil, err
	}
	conf, ok := number(obj["confidence"])
	if !ok || conf < 0 || conf > 1 {
		return nil, fmt.Errorf("confidence must be a number from 0 to 1, got %v", obj["confidence"])
	}
	obj["confidence"] = conf
	if conf == 0 {
		return obj, nil
	}
	for _, k := range []string{"key", "value", "category"} {
		if s, ok := obj[k].(string); !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%s must be a non-empty string, got %v", k, obj[k])
		}
	}
	obj["category"] = strings.ToLower(strings.TrimSpace(obj["category"].(string)))
	return obj, nil
}

// memoryForm builds the confirmation form for an extracted memory.
func memoryForm(mem map[string]any, answerField string) map[string]any {
	str := func(k string) string {
		switch v := mem[k].(type) {
		case string:
			return v
		case []any:
			parts := make([]string, 0, len(v))
			for _, x := range v {
				parts = append(parts, fmt.Sprint(x))
			}
			return strings.Join(parts, ", ")
		case nil:
			return ""
		}
		return fmt.Sprint(mem[k])
	}
	category := str("category")
	fields := []any{
		map[string]any{"name": "key", "label": "记忆标识", "type": "text", "required": true, "default": str("key")},
		map[string]any{"name": "value", "label": "内容", "type": "textarea", "required": true, "default": str("value")},
		map[string]any{"name": "category", "label": "类别", "type": "select", "required": true, "default": category,
			"options": []any{"plan", "preference", "fact", "contact", "event", "other"}},
	}
	title := MemoryFormTitle
	if category == "plan" {
		title = PlanFormTitle
		fields = append(fields,
			map[string]any{"name": "target_time", "label": "时间", "type": "datetime", "default": str("target_time")},
			map[string]any{"name": "location", "label": "地点", "type": "text", "default": str("location")},
			map[string]any{"name": "participants", "label": "参与者", "type": "text", "default": str("participants")},
		)
	}
	return map[string]any{
		"type":   "form",
		"title":  title,
		"field":  answerField,
		"source": "image",
		"fields": fields,
		// The same fields as a form object, the shape of the hitl node's
		// requests, so one client renders both.
		"form":       map[string]any{"fields": fields},
		"confidence": mem["confidence"],
		"memory":     mem,
	}
}

// cleanOCR trims an OCR answer; a NO_TEXT answer (or nothing) is "".
func cleanOCR(answer string) string {
	s := strings.TrimSpace(answer)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.Contains(s[:i], " ") {
			s = s[i+1:]
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
	}
	if strings.EqualFold(strings.Trim(s, " .\"'`"), NoText) {
		return ""
	}
	return s
}

// isOpenAI reports whether the model takes images as URLs (data URLs for
// inline images); other providers get inline images as binary parts.
func isOpenAI(m llms.Model) bool {
	_, ok := m.(*openai.LLM)
	return ok
}

// imagePart turns an image value into a message part. The value is a data
// URL, an http(s) URL, or base64 data (its MIME type from mime, else sniffed),
// or an object {url} or {data, mime_type}.
func imagePart(v any, mime string, urls bool) (llms.ContentPart, error) {
	if m, ok := v.(map[string]any); ok {
		if u, ok := m["url"].(string); ok {
			v = u
		} else {
			v = m["data"]
			for _, k := range []string{"mime_type", "mime", "content_type"} {
				if s, ok := m[k].(string); ok && s != "" {
					mime = s
				}
			}
		}
	}
	s, ok := v.(string)
	s = strings.TrimSpace(s)
	if !ok || s == "" {
		return nil, fmt.Errorf("want a data URL, an http(s) URL or base64 data, got %s", graph.DescribeValue(v))
	}
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return llms.ImageURLPart(s), nil
	}
	if strings.HasPrefix(lower, "data:") {
		header, payload, found := strings.Cut(s, ",")
		if !found || !strings.HasSuffix(strings.ToLower(header), ";base64") {
			return nil, fmt.Errorf("data URL %q is not base64-encoded (want data:<mime>;base64,<data>)", clip(s, 40))
		}
		if urls {
			return llms.ImageURLPart(s), nil
		}
		mime = header[len("data:") : len(header)-len(";base64")]
		s = payload
	}
	data, err := decodeBase64(s)
	if err != nil {
		return nil, err
	}
	if mime == "" {
		mime = http.DetectContentType(data)
	}
	if !strings.HasPrefix(mime, "image/") {
		return nil, fmt.Errorf("the data is %s, not an image", mime)
	}
	if urls {
		return llms.ImageURLPart("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)), nil
	}
	return llms.BinaryPart(mime, data), nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if data, err := enc.DecodeString(s); err == nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf("not valid base64 data (%d characters)", len(s))
}
