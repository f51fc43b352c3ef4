package appliance

import (
	"context"
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

func init() {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	tool.MustRegister(tool.Tool{
		Name:        "diagnose_repair",
		Description: "Suggests replacement parts for an appliance model from the symptoms it shows.",
		Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"model": str("appliance model number, e.g. WDT780SAEM1"),
				"symptoms": map[string]any{"type": "array", "items": map[string]any{"type": "string"},
					"description": "symptoms such as leaking or noisy"},
			},
			"required": []any{"model", "symptoms"},
		},
		Func: withCatalog(diagnose),
	})
	tool.MustRegister(tool.Tool{
		Name:        "get_installation_instructions",
		Description: "Gives step-by-step installation instructions for a part.",
		Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"part":  str("part number, e.g. PS3406971"),
				"model": str("appliance model number, to check the part fits"),
			},
			"required": []any{"part"},
		},
		Func: withCatalog(instructions),
	})
	tool.MustRegister(tool.Tool{
		Name:        "check_compatibility",
		Description: "Says whether a part fits an appliance model, and why.",
		Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"part":  str("part number, e.g. PS3406971"),
				"model": str("appliance model number, e.g. WDT780SAEM1"),
			},
			"required": []any{"part", "model"},
		},
		Func: withCatalog(compatibility),
	})
}

func withCatalog(f func(c *Catalog, args map[string]any) (tool.Result, error)) func(context.Context, map[string]any) (tool.Result, error) {
	return func(ctx context.Context, args map[string]any) (tool.Result, error) {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		c, err := Bundled()
		if err != nil {
			return tool.Result{}, err
		}
		return f(c, args)
	}
}

func stringArg(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return canon(s)
}

func stringsArg(args map[string]any, name string) []string {
	switch v := args[name].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			if s, ok := item.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return []string{v}
	}
	return nil
}

func money(p float64) string { return fmt.Sprintf("$%.2f", p) }

// unknownModel is the result for a model number that is not in the catalog.
func (c *Catalog) unknownModel(number string) tool.Result {
	names := make([]string, len(c.Models))
	for i, m := range c.Models {
		names[i] = m.Number
	}
	close := suggest.Closest(number, names, 4, 3, 3)
	text := fmt.Sprintf("I couldn't find model %s in the catalog.", number)
	if len(close) > 0 {
		text += " Did you mean: " + strings.Join(close, ", ") + "?"
	} else {
		text += " Please check the model number on the label inside the door or on the frame."
	}
	return tool.Result{Text: text, Data: map[string]any{"found": false, "model": number, "suggestions": toAny(close)}}
}

// unknownPart is the result for a part number that is not in the catalog.
func (c *Catalog) unknownPart(number string) tool.Result {
	names := make([]string, len(c.Parts))
	for i, p := range c.Parts {
		names[i] = p.Number
	}
	close := suggest.Closest(number, names, 3, 0, 3)
	text := fmt.Sprintf("I couldn't find part %s in the catalog.", number)
	if len(close) > 0 {
		text += " Did you mean: " + strings.Join(close, ", ") + "?"
	}
	return tool.Result{Text: text, Data: map[string]any{"found": false, "part": number, "suggestions": toAny(close)}}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// spoken lists symptoms for a reply: "not_draining" reads "not draining".
func spoken(symptoms []string) string {
	out := make([]string, len(symptoms))
	for i, s := range symptoms {
		out[i] = strings.ReplaceAll(s, "_", " ")
	}
	return strings.Join(out, ", ")
}

func diagnose(c *Catalog, args map[string]any) (tool.Result, error) {
	model := stringArg(args, "model")
	symptoms := stringsArg(args, "symptoms")
	m, ok := c.Model(model)
	if !ok {
		return c.unknownModel(model), nil
	}
	canonical := CanonicalSymptoms(symptoms)
	matches := c.Diagnose(m.Number, symptoms)
	label := spoken(symptoms)
	var b strings.Builder
	parts := make([]any, 0, len(matches))
	if len(matches) == 0 {
		fmt.Fprintf(&b, "None of the parts I have for %s (%s %s) is known to fix: %s.", m.Number, m.Brand, m.Type, label)
		fmt.Fprintf(&b, "\nDescribe the problem another way (for example: leaking, noisy, not draining) or contact a technician.")
	} else {
		fmt.Fprintf(&b, "Based on your symptoms (%s) for %s, likely parts:", label, m.Number)
		for _, match := range matches {
			p := match.Part
			fmt.Fprintf(&b, "\n• %s - %s (%s) — fixes: %s", p.Number, p.Name, money(p.Price), spoken(match.Fixes))
			parts = append(parts, map[string]any{
				"number": p.Number, "name": p.Name, "price": p.Price, "fixes": toAny(match.Fixes),
			})
		}
	}
	return tool.Result{Text: b.String(), Data: map[string]any{
		"found": true, "model": m.Number, "symptoms": toAny(canonical), "parts": parts,
	}}, nil
}

func instructions(c *Catalog, args map[string]any) (tool.Result, error) {
	p, ok := c.Part(stringArg(args, "part"))
	if !ok {
		return c.unknownPart(stringArg(args, "part")), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Installation instructions for %s - %s (%s)\n", p.Number, p.Name, money(p.Price))
	tools := "none"
	if len(p.Install.Tools) > 0 {
		tools = strings.Join(p.Install.Tools, ", ")
	}
	fmt.Fprintf(&b, "Difficulty: %s | Time: %s | Tools: %s", p.Install.Difficulty, p.Install.Time, tools)
	data := map[string]any{
		"found": true, "part": p.Number, "name": p.Name, "difficulty": p.Install.Difficulty,
		"time": p.Install.Time, "tools": toAny(p.Install.Tools), "steps": toAny(p.Install.Steps),
	}
	if model := stringArg(args, "model"); model != "" {
		data["model"] = model
		fits := p.FitsModel(model)
		data["compatible"] = fits
		if !fits {
			fmt.Fprintf(&b, "\nWarning: %s is not listed as compatible with %s; check the part before installing it.", p.Number, model)
		}
	}
	for i, s := range p.Install.Steps {
		fmt.Fprintf(&b, "\n%d. %s", i+1, s)
	}
	return tool.Result{Text: b.String(), Data: data}, nil
}

func compatibility(c *Catalog, args map[string]any) (tool.Result, error) {
	partNo, modelNo := stringArg(args, "part"), stringArg(args, "model")
	p, ok := c.Part(partNo)
	if !ok {
		return c.unknownPart(partNo), nil
	}
	m, ok := c.Model(modelNo)
	if !ok {
		return c.unknownModel(modelNo), nil
	}
	data := map[string]any{"found": true, "part": p.Number, "model": m.Number}
	if p.FitsModel(m.Number) {
		data["compatible"] = true
		text := fmt.Sprintf("Yes — %s (%s, %s) is compatible with %s (%s %s).",
			p.Number, p.Name, money(p.Price), m.Number, m.Brand, m.Type)
		return tool.Result{Text: text, Data: data}, nil
	}
	data["compatible"] = false
	text := fmt.Sprintf("No — %s (%s) is not compatible with %s (%s %s). It fits: %s.",
		p.Number, p.Name, m.Number, m.Brand, m.Type, strings.Join(p.Models, ", "))
	var alternatives []string
	for _, q := range c.PartsFor(m.Number) {
		if q.Name == p.Name || sharesSymptom(p, q) {
			alternatives = append(alternatives, fmt.Sprintf("%s - %s", q.Number, q.Name))
		}
	}
	if len(alternatives) > 0 {
		if len(alternatives) > 3 {
			alternatives = alternatives[:3]
		}
		text += " Parts for " + m.Number + " that fix the same problems: " + strings.Join(alternatives, "; ") + "."
	}
	return tool.Result{Text: text, Data: data}, nil
}

func sharesSymptom(a, b *Part) bool {
	for _, s := range a.Symptoms {
		for _, t := range b.Symptoms {
			if s == t {
				return true
			}
		}
	}
	return false
}
