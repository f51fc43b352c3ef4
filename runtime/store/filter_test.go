package store

import (
	"strings"
	"testing"
)

func TestMatchFilter(t *testing.T) {
	value := map[string]any{
		"name":  "alice",
		"age":   float64(30), // as decoded from JSON
		"score": 7,
		"when":  "2024-05-01T10:00:00Z",
		"user":  map[string]any{"city": "Kyoto", "tags": []any{"a", "b"}, "zip": nil},
		"list":  []any{map[string]any{"id": "x"}},
	}
	tests := []struct {
		name   string
		filter map[string]any
		want   bool
	}{
		{"empty filter", nil, true},
		{"equality string", map[string]any{"name": "alice"}, true},
		{"equality string mismatch", map[string]any{"name": "bob"}, false},
		{"equality int vs float", map[string]any{"age": 30}, true},
		{"equality nested map", map[string]any{"user.tags": []any{"a", "b"}}, true},
		{"equality list of strings", map[string]any{"user.tags": []string{"a", "b"}}, true},
		{"dotted path", map[string]any{"user.city": "Kyoto"}, true},
		{"list index path", map[string]any{"list.0.id": "x"}, true},
		{"list index out of range", map[string]any{"list.3.id": "x"}, false},
		{"missing equals nil", map[string]any{"nope": nil}, true},
		{"null equals nil", map[string]any{"user.zip": nil}, true},
		{"missing not equal value", map[string]any{"nope": "x"}, false},
		{"$eq", map[string]any{"age": map[string]any{"$eq": 30}}, true},
		{"$eq false", map[string]any{"age": map[string]any{"$eq": 31}}, false},
		{"$ne", map[string]any{"name": map[string]any{"$ne": "bob"}}, true},
		{"$ne false", map[string]any{"name": map[string]any{"$ne": "alice"}}, false},
		{"$ne on missing field", map[string]any{"nope": map[string]any{"$ne": "x"}}, true},
		{"$gt number", map[string]any{"age": map[string]any{"$gt": 29.5}}, true},
		{"$gt number equal", map[string]any{"age": map[string]any{"$gt": 30}}, false},
		{"$gte number equal", map[string]any{"age": map[string]any{"$gte": 30}}, true},
		{"$lt int field", map[string]any{"score": map[string]any{"$lt": 8}}, true},
		{"$lt false", map[string]any{"score": map[string]any{"$lt": 7}}, false},
		{"$lte", map[string]any{"score": map[string]any{"$lte": 7}}, true},
		{"range both hold", map[string]any{"age": map[string]any{"$gte": 18, "$lt": 65}}, true},
		{"range one fails", map[string]any{"age": map[string]any{"$gte": 18, "$lt": 30}}, false},
		{"$gt string", map[string]any{"name": map[string]any{"$gt": "aaron"}}, true},
		{"$lt string", map[string]any{"name": map[string]any{"$lt": "aaron"}}, false},
		{"$gt time", map[string]any{"when": map[string]any{"$gt": "2024-04-30T23:00:00Z"}}, true},
		// Lexically "2024-05-01T11:00:00+02:00" > "2024-05-01T10:00:00Z", but as
		// instants it is one hour earlier.
		{"$gt time with offset", map[string]any{"when": map[string]any{"$gt": "2024-05-01T11:00:00+02:00"}}, true},
		{"$lt time with offset", map[string]any{"when": map[string]any{"$lt": "2024-05-01T11:00:00+02:00"}}, false},
		{"$gt number vs string", map[string]any{"age": map[string]any{"$gt": "10"}}, false},
		{"$gt on missing field", map[string]any{"nope": map[string]any{"$gt": 1}}, false},
		{"all conditions must hold", map[string]any{"name": "alice", "age": 31}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MatchFilter(value, tt.filter)
			if err != nil {
				t.Fatalf("MatchFilter: %v", err)
			}
			if got != tt.want {
				t.Errorf("MatchFilter(%v) = %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
}

func TestMatchFilterErrors(t *testing.T) {
	value := map[string]any{"age": 3}
	tests := []struct {
		name    string
		filter  map[string]any
		wantSub string
	}{
		{"unknown operator", map[string]any{"age": map[string]any{"$between": []any{1, 2}}}, `"$between"`},
		{"top-level operator", map[string]any{"$or": []any{}}, `"$or"`},
		{"mixed operator and plain keys", map[string]any{"age": map[string]any{"$gt": 1, "x": 2}}, `"age"`},
		// A bad filter is an error even when another condition already fails.
		{"unknown operator beside a failing field", map[string]any{"age": 4, "name": map[string]any{"$like": "a%"}}, `"$like"`},
		{"unknown operator beside a failing operator", map[string]any{"age": map[string]any{"$gt": 10, "$in": []any{3}}}, `"$in"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Map order varies from call to call; the answer must not.
			for range 20 {
				_, err := MatchFilter(value, tt.filter)
				if err == nil {
					t.Fatal("MatchFilter: want error, got nil")
				}
				if !strings.Contains(err.Error(), tt.wantSub) {
					t.Fatalf("error %q does not name %s", err, tt.wantSub)
				}
			}
		})
	}
}
