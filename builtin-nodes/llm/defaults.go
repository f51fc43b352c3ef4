package llm

import (
	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/graph"
)

// DefaultsKey is the key of the graph defaults block that names the model of
// every node that needs one and names none.
const DefaultsKey = "llm"

// GraphDefault returns the graph's default model, "provider:model" (its
// defaults.llm), or "" when it sets none.
func GraphDefault(g *graph.Graph) string {
	if g == nil {
		return ""
	}
	s, _ := g.Defaults.Raw[DefaultsKey].(string)
	return s
}

func init() {
	graph.MustRegisterDefaultsKey(graph.DefaultsKey{Name: DefaultsKey, Schema: `=~"^(openai|ollama|anthropic|googleai|huggingface|hf|script):"`,
		Doc: "llm is the model of every node that needs one and names none,\n" +
			`"provider:model" (e.g. "openai:gpt-4o-mini", "ollama:llama3.2").`})
}

func init() {
	audit.ReadsConversation("llm")
}
