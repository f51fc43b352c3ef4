package store

import (
	"slices"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"  GPT-4o   costs $20 ", []string{"gpt", "4o", "costs", "cost", "20"}},
		{"Café naïve", []string{"café", "naïve"}},
		{"ＡＢＣ１２", []string{"abc12"}},
		// Words are followed by their stems when they differ.
		{"I have two cats and I love hiking", []string{"i", "have", "two", "cats", "cat", "and", "i", "love", "hiking", "hike"}},
		{"my cat's toys", []string{"my", "cat", "s", "toys", "toy"}},
		{"The children went running", []string{"the", "children", "child", "went", "go", "running", "run"}},
		// CJK runs: bigrams, plus each Han character but the most frequent
		// function characters; kana characters alone are not terms.
		{"東京都", []string{"東京", "東", "京都", "京", "都"}},
		{"雨", []string{"雨"}},
		{"今日の天気は晴れ", []string{"今日", "今", "日の", "日", "の天", "天気", "天", "気は", "気", "は晴", "晴れ", "晴"}},
		{"カレーライス", []string{"カレ", "レー", "ーラ", "ライ", "イス"}},
		{"ｶﾚｰ", []string{"ｶﾚ", "ﾚｰ"}},
		{"猫を二匹飼っています", []string{"猫を", "猫", "を二", "二匹", "二", "匹飼", "匹", "飼っ", "飼", "って", "てい", "いま", "ます"}},
		{"猫について教えて", []string{"猫に", "猫", "につ", "つい", "いて", "て教", "教え", "教", "えて"}},
		{"Telegramで検索する", []string{"telegram", "で検", "検索", "検", "索す", "索", "する"}},
		{"京都、大阪", []string{"京都", "京", "都", "大阪", "大", "阪"}},
		{"北京是中国的首都", []string{"北京", "北", "京是", "京", "是中", "中国", "中", "国的", "国", "的首", "首都", "首", "都"}},
		{"我有两只猫", []string{"我有", "有两", "有", "两只", "两", "只猫", "只", "猫"}},
		// Mixed text: each script is split its own way.
		{"I love 猫 and hiking in 東京", []string{"i", "love", "猫", "and", "hiking", "hike", "in", "東京", "東", "京"}},
		{"hiking好き", []string{"hiking", "hike", "好き", "好"}},
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

// TestExpandSurfaceTerms: the terms stored for an item before stems and Han
// characters were indexed (the surface terms, as Tokenize then returned
// them, of all its indexed strings in order), once expanded, are the terms
// Tokenize gives the same strings now, so the item matches the same queries
// as one stored now.
func TestExpandSurfaceTerms(t *testing.T) {
	tests := []struct {
		name   string
		stored string // the item's terms as stores wrote them
		texts  []string
	}{
		{"english", "i have two cats and i love hiking", []string{"I have two cats and I love hiking"}},
		{"japanese", "猫を を二 二匹 匹飼 飼っ って てい いま ます", []string{"猫を二匹飼っています"}},
		{"several fields", "pets 猫 東京 京都 hiking", []string{"pets", "猫", "東京都", "hiking"}},
		{"mixed", "weekend 京都 都へ hiking に行 行き きた たい", []string{"weekend 京都へhikingに行きたい"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, text := range tt.texts {
				want = append(want, Tokenize(text)...)
			}
			got := ExpandSurfaceTerms(strings.Fields(tt.stored))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("ExpandSurfaceTerms(%q) = %q, want the terms of %q: %q", tt.stored, got, tt.texts, want)
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
