package store

import (
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"  GPT-4o   costs $20 ", []string{"gpt", "4o", "costs", "20"}},
		{"Café naïve", []string{"café", "naïve"}},
		{"ＡＢＣ１２", []string{"abc12"}},
		{"東京都", []string{"東京", "京都"}},
		{"雨", []string{"雨"}},
		{"今日の天気は晴れ", []string{"今日", "日の", "の天", "天気", "気は", "は晴", "晴れ"}},
		{"カレーライス", []string{"カレ", "レー", "ーラ", "ライ", "イス"}},
		{"Telegramで検索する", []string{"telegram", "で検", "検索", "索す", "する"}},
		{"京都、大阪", []string{"京都", "大阪"}},
		{"北京是中国的首都", []string{"北京", "京是", "是中", "中国", "国的", "的首", "首都"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := Tokenize(tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestIndexText(t *testing.T) {
	value := map[string]any{
		"title": "Go",
		"body":  "fast",
		"n":     3,
		"meta":  map[string]any{"z": "last", "a": "first"},
		"tags":  []any{"x", 2, "y"},
	}
	tests := []struct {
		name   string
		fields []string
		want   []string
	}{
		{"nil selects every string", nil, []string{"fast", "first", "last", "x", "y", "Go"}},
		{"empty selects nothing", []string{}, nil},
		{"listed fields only", []string{"title", "meta.a"}, []string{"Go", "first"}},
		{"missing and non-string fields ignored", []string{"n", "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := IndexText(value, tt.fields)
			if !slices.Equal(got, tt.want) {
				t.Errorf("IndexText(%v) = %q, want %q", tt.fields, got, tt.want)
			}
		})
	}
}
