package cognitive_test

import (
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

func BenchmarkEmotionLexicon(b *testing.B) {
	g := emotionGraph(b)
	n := buildNode(b, g, "emotion", nil)
	texts := map[string]string{
		"english": "Honestly I'm not very happy with how this went, and I'm really worried about tomorrow's meeting!",
		"chinese": "今天工作不太顺利，我有点担心明天的面试，但是朋友的鼓励让我很开心",
	}
	for name, text := range texts {
		state := userMessage(text)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := run(b, g, n, state, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemoryRetrieve measures one retrieval (search plus the access
// update of the hits) among N memories of one user on in-memory Badger.
func BenchmarkMemoryRetrieve(b *testing.B) {
	for _, size := range []int{100, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			g := memoryGraph(b)
			services := &node.Services{Store: openStore(b)}
			list := make([]any, size)
			for i := range list {
				list[i] = map[string]any{"key": fmt.Sprintf("note_%d", i), "value": fmt.Sprintf("note %d about topic%d and topic%d", i, i%37, i%11), "category": "fact"}
			}
			storeMemories(b, g, services, nil, list)
			retrieve := buildNode(b, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}, "query": "topic"})
			state := map[string]any{"user_id": "u1", "topic": "anything about topic7 and topic3?"}
			for b.Loop() {
				up, _, err := run(b, g, retrieve, state, services)
				if err != nil {
					b.Fatal(err)
				}
				if len(up["retrieved_memories"].([]any)) != 5 {
					b.Fatalf("retrieved %d memories, want 5", len(up["retrieved_memories"].([]any)))
				}
			}
		})
	}
}
