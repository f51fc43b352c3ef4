package schemas

import (
	"context"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

// readingType reads each key of its config in one way, the way builtin node
// types do: a template, an expression, a state field looked up, a field
// looked up only when another key is absent, and free keys naming fields
// whose values are expressions.
var readingType = node.Type{
	Name: "reading",
	Config: `{
	text: string
	when?: string
	into?: *"out" | string
	source?: string
	messages_field?: *"messages" | string
	set?: [string]: string
	mode?: *"fast" | "slow"
	label?: string
}`,
	New: func(b node.Builder) (node.Node, error) {
		var cfg struct {
			Text, When, Into, Source, MessagesField string
			Set                                     map[string]string
		}
		cfg.Text, _ = b.Config()["text"].(string)
		cfg.When, _ = b.Config()["when"].(string)
		cfg.Into, _ = b.Config()["into"].(string)
		cfg.Source, _ = b.Config()["source"].(string)
		cfg.MessagesField, _ = b.Config()["messages_field"].(string)
		b.Template("text", cfg.Text)
		if cfg.When != "" {
			b.Expr("when", cfg.When, "")
		}
		field := func(path, name string) bool {
			if b.Graph().Field(name) == nil {
				b.Errorf(path, "unknown-field", "no field %q", name)
				return false
			}
			return true
		}
		field("into", cfg.Into)
		if cfg.Source != "" {
			b.Expr("source", cfg.Source, "")
		} else {
			field("messages_field", cfg.MessagesField)
		}
		if set, ok := b.Config()["set"].(map[string]any); ok {
			for k, v := range set {
				if field("set."+k, k) {
					s, _ := v.(string)
					b.Expr("set."+k, s, "")
				}
			}
		}
		return node.Func(func(context.Context, *node.Input) (node.Update, error) { return nil, nil }), nil
	},
}

func TestConfigReads(t *testing.T) {
	reads, err := ConfigReads(readingType, nil)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := ConfigFields(readingType, reads)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fields {
		got[f.Name] = f.Reads
	}
	want := map[string]string{
		"text":           ReadsTemplate,
		"when":           ReadsExpression,
		"into":           ReadsField,
		"source":         ReadsExpression,
		"messages_field": ReadsField,
		"set":            "keys: field; values: expression",
		"mode":           ReadsLiteral,
		"label":          ReadsLiteral,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reads\n got %v\nwant %v", got, want)
	}
}
