package cognitive

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Neutral is the emotion reported when the text shows no emotional indicator.
const Neutral = "neutral"

// BundledLexicon returns a copy of the bundled emotion lexicon: emotion name to
// English and Chinese phrases. English phrases match whole words,
// case-insensitively; Chinese phrases match anywhere.
func BundledLexicon() map[string][]string {
	out := make(map[string][]string, len(bundledLexicon))
	for k, v := range bundledLexicon {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// BundledModulation returns a copy of the bundled modulation instructions:
// for each emotion, how a reply should adapt its tone.
func BundledModulation() map[string]string {
	out := make(map[string]string, len(bundledModulation))
	for k, v := range bundledModulation {
		out[k] = v
	}
	return out
}

var bundledLexicon = map[string][]string{
	"joy": {
		"happy", "glad", "joy", "joyful", "delighted", "excited", "thrilled", "wonderful", "awesome",
		"amazing", "fantastic", "great", "love it", "loving it", "ecstatic", "cheerful", "pleased",
		"yay", "overjoyed", "elated", "good news", "can't wait", "so good", "happier",
		"开心", "高兴", "快乐", "愉快", "兴奋", "太好了", "幸福", "哈哈", "满意", "欣喜", "激动", "好消息", "喜欢",
	},
	"sadness": {
		"sad", "unhappy", "depressed", "heartbroken", "miserable", "upset", "cry", "crying", "cried",
		"gloomy", "sorrow", "grief", "grieving", "devastated", "hopeless", "feel down", "feeling down",
		"felt down", "broke my heart", "sadder", "disappointed", "disappointing",
		"难过", "伤心", "悲伤", "失落", "沮丧", "哭", "痛苦", "心碎", "不开心", "不高兴", "低落", "绝望", "遗憾", "失望",
	},
	"anger": {
		"angry", "mad", "furious", "pissed", "pissed off", "outraged", "irritated", "hate", "rage",
		"livid", "infuriating", "infuriated", "outrageous", "unacceptable",
		"生气", "愤怒", "气死", "恼火", "火大", "讨厌", "可恶", "发火", "气愤",
	},
	"fear": {
		"afraid", "scared", "frightened", "terrified", "fear", "panic", "panicking", "horrified",
		"fearful", "dread", "scary", "terrifying",
		"害怕", "恐惧", "可怕", "吓死", "吓人", "惊恐", "好怕", "怕了",
	},
	"surprise": {
		"surprised", "surprising", "shocked", "wow", "unexpected", "unbelievable", "can't believe",
		"astonished", "amazed", "no way", "whoa",
		"惊讶", "意外", "没想到", "居然", "竟然", "震惊", "天哪", "不敢相信", "哇",
	},
	"anxiety": {
		"anxious", "worried", "worry", "worrying", "nervous", "stressed", "stress", "stressful",
		"uneasy", "tense", "restless", "overwhelmed", "on edge", "freaking out",
		"焦虑", "担心", "紧张", "不安", "着急", "压力", "忐忑", "心慌", "慌张",
	},
	"frustration": {
		"frustrated", "frustrating", "annoyed", "annoying", "fed up", "stuck", "doesn't work",
		"not working", "still broken", "tired of", "sick of", "ugh", "argh", "keeps failing",
		"give up", "giving up", "useless", "pointless",
		"烦躁", "好烦", "真烦", "烦死", "心烦", "无语", "受不了", "崩溃", "搞不定", "没用", "气人",
	},
	"gratitude": {
		"thank you", "thanks", "thank", "grateful", "appreciate", "appreciated", "thankful",
		"much obliged", "thx",
		"谢谢", "感谢", "多谢", "感激", "谢了", "辛苦了",
	},
	"disgust": {
		"disgusting", "disgusted", "gross", "revolting", "nasty", "yuck",
		"恶心", "反感", "厌恶",
	},
	"loneliness": {
		"lonely", "alone", "isolated", "nobody cares", "no one cares", "left out",
		"孤独", "寂寞", "孤单",
	},
}

var bundledModulation = map[string]string{
	Neutral:       "Respond in a natural, friendly and clear tone.",
	"joy":         "The user is in a good mood: share their enthusiasm and keep the tone warm and upbeat.",
	"sadness":     "The user seems sad: respond gently and with empathy, acknowledge their feelings before offering help, and avoid forced cheerfulness.",
	"anger":       "The user seems angry: stay calm and respectful, acknowledge the problem without being defensive, and focus on concrete steps.",
	"fear":        "The user seems afraid: be reassuring and steady, explain things simply, and point to what is safe and under control.",
	"surprise":    "The user is surprised: clarify what happened and give context so the surprise makes sense.",
	"anxiety":     "The user seems anxious: be calm and reassuring, break things into small manageable steps, and avoid overwhelming detail.",
	"frustration": "The user is frustrated: be concise and practical, acknowledge the difficulty, and give the most direct path to a solution.",
	"gratitude":   "The user is grateful: accept the thanks warmly and briefly, and offer further help.",
	"disgust":     "The user is put off by something: acknowledge their reaction respectfully and keep the reply factual and tactful.",
	"loneliness":  "The user may feel lonely: be warm and attentive, show interest in them, and encourage connection without being preachy.",
}

// genericModulation is the instruction for an emotion without a configured
// or bundled one.
func genericModulation(emotion string) string {
	return fmt.Sprintf("The user seems to feel %s: acknowledge it briefly and adapt your tone to it.", emotion)
}

// Modifier words. English words are compared after lower-casing; Chinese ones
// are looked for in the few characters before a match.
var (
	negatorsEN = set("not", "no", "never", "hardly", "barely", "neither", "nor", "without", "nothing",
		"cannot", "ain't", "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "wont", "cant")
	intensifiersEN = set("very", "so", "really", "extremely", "incredibly", "totally", "absolutely",
		"super", "too", "utterly", "deeply", "terribly", "awfully", "truly", "completely", "such", "incredibly", "insanely")
	diminishersEN = set("slightly", "somewhat", "little", "bit", "kinda", "mildly", "fairly", "sorta")
	contrastEN    = set("but", "however", "though", "although", "yet")

	negatorsZH     = []string{"不", "没", "别", "未", "毫无", "并非"}
	intensifiersZH = []string{"非常", "很", "太", "特别", "超级", "超", "十分", "极其", "真", "好", "挺", "相当", "格外", "太过"}
	suffixesZH     = []string{"极了", "死了", "坏了", "透了"}
	diminishersZH  = []string{"有点", "有些", "稍微", "略", "一点"}
	contrastZH     = []string{"但是", "但", "可是", "不过", "然而"}
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Weights of modified matches.
const (
	intensified = 1.5
	diminished  = 0.6
	shouted     = 1.3
	afterBut    = 1.25
	// negatedJoy is the weight a negated positive emotion ("not happy") adds to sadness.
	negatedJoy = 0.7
)

// negationTarget maps an emotion whose negation implies another to that
// emotion; negating any other emotion ("not angry") removes its evidence.
var negationTarget = map[string]string{"joy": "sadness"}

// lexicon is a compiled emotion lexicon: phrases indexed by their first
// word (Latin script) or first character (other scripts), so a text is
// matched in one pass whatever the size of the lexicon.
type lexicon struct {
	emotions []string // sorted
	latin    map[string][]phrase
	other    map[rune][]phrase
}

// phrase is one lexicon entry: the words of a Latin phrase, or the text of
// another one.
type phrase struct {
	words   []string
	text    string
	emotion string
}

// compileLexicon merges extra into the bundled lexicon (phrases of a listed
// emotion are added; an emotion listed with no phrases is removed) and
// indexes every phrase.
func compileLexicon(extra map[string][]string) (*lexicon, error) {
	merged := BundledLexicon()
	for emotion, phrases := range extra {
		if len(phrases) == 0 {
			delete(merged, emotion)
			continue
		}
		merged[emotion] = append(merged[emotion], phrases...)
	}
	lx := &lexicon{latin: map[string][]phrase{}, other: map[rune][]phrase{}}
	for emotion := range merged {
		lx.emotions = append(lx.emotions, emotion)
	}
	sort.Strings(lx.emotions)
	for _, emotion := range lx.emotions {
		n := 0
		for _, p := range merged[emotion] {
			p = strings.ToLower(strings.TrimSpace(quotes.Replace(p)))
			if p == "" {
				continue
			}
			n++
			first, _ := utf8.DecodeRuneInString(p)
			if isLatinWord(first) {
				words := latinWords(p)
				lx.latin[words[0]] = append(lx.latin[words[0]], phrase{words: words, emotion: emotion})
			} else {
				lx.other[first] = append(lx.other[first], phrase{text: p, emotion: emotion})
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("emotion %q: no phrases", emotion)
		}
	}
	return lx, nil
}

// token is a Latin word of a text and its byte offsets.
type token struct {
	word       string
	start, end int
}

func isTokenRune(r rune) bool { return isLatinWord(r) || r == '\'' }

func latinWords(s string) []string {
	var out []string
	for _, t := range tokens(s) {
		out = append(out, t.word)
	}
	return out
}

// tokens splits text into Latin words (letters, digits, apostrophes).
func tokens(text string) []token {
	var out []token
	start := -1
	for i, r := range text {
		switch {
		case isTokenRune(r) && start < 0:
			start = i
		case !isTokenRune(r) && start >= 0:
			out = append(out, token{text[start:i], start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, token{text[start:], start, len(text)})
	}
	return out
}

// find returns every phrase occurrence in lower-cased text.
func (lx *lexicon) find(lower string) []span {
	var all []span
	toks := tokens(lower)
	for i, t := range toks {
		for _, p := range lx.latin[t.word] {
			if i+len(p.words) > len(toks) {
				continue
			}
			match := true
			for j, w := range p.words[1:] {
				if toks[i+1+j].word != w {
					match = false
					break
				}
			}
			if match {
				all = append(all, span{t.start, toks[i+len(p.words)-1].end, p.emotion})
			}
		}
	}
	if len(lx.other) > 0 {
		for i, r := range lower {
			for _, p := range lx.other[r] {
				if strings.HasPrefix(lower[i:], p.text) {
					all = append(all, span{i, i + len(p.text), p.emotion})
				}
			}
		}
	}
	return all
}

func isLatinWord(r rune) bool {
	return r == '_' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

var quotes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`)

// Detection is the result of classifying a text.
type Detection struct {
	// Emotion is the primary emotion, or Neutral.
	Emotion string
	// Confidence is in [0, 1]: how clearly the primary emotion dominates.
	Confidence float64
	// Intensity is in [0, 1]: how strongly it is expressed.
	Intensity float64
	// Scores holds the evidence per emotion found in the text.
	Scores map[string]float64
}

type span struct {
	start, end int
	emotion    string
}

// detect classifies text. It finds every lexicon phrase, keeps the longest of
// overlapping matches ("不开心" over "开心"), weighs each by the words before
// it (negation, intensifiers, diminishers, a preceding "but") and by shouting,
// and picks the emotion with the most evidence.
func (lx *lexicon) detect(text string) Detection {
	text = quotes.Replace(text)
	lower := strings.ToLower(text)
	sameLen := len(lower) == len(text)
	all := lx.find(lower)
	sort.SliceStable(all, func(i, j int) bool {
		li, lj := all[i].end-all[i].start, all[j].end-all[j].start
		if li != lj {
			return li > lj
		}
		return all[i].start < all[j].start
	})
	var kept []span
	for _, s := range all {
		overlaps := false
		for _, k := range kept {
			if s.start < k.end && k.start < s.end {
				overlaps = true
				break
			}
		}
		if !overlaps {
			kept = append(kept, s)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })

	scores := map[string]float64{}
	first := map[string]int{}
	for _, s := range kept {
		clause, contrast := clauseBefore(lower[:s.start])
		r, _ := utf8.DecodeRuneInString(lower[s.start:])
		var negated bool
		w := 1.0
		if isLatinWord(r) {
			negated, w = englishModifiers(clause)
			if sameLen && isShouted(text[s.start:s.end]) {
				w *= shouted
			}
		} else {
			negated, w = chineseModifiers(clause, lower[s.end:])
		}
		if contrast {
			w *= afterBut
		}
		emotion := s.emotion
		if negated {
			target, ok := negationTarget[emotion]
			if !ok || !lx.has(target) {
				continue
			}
			emotion, w = target, negatedJoy
		}
		if _, seen := first[emotion]; !seen {
			first[emotion] = s.start
		}
		scores[emotion] += w
	}

	best, total := "", 0.0
	for _, e := range lx.emotions {
		sc := scores[e]
		total += sc
		if sc <= 0 {
			continue
		}
		if best == "" || sc > scores[best] || sc == scores[best] && first[e] < first[best] {
			best = e
		}
	}
	if best == "" {
		return Detection{Emotion: Neutral, Confidence: 0.5, Intensity: 0, Scores: scores}
	}
	s := scores[best]
	confidence := s / total * (1 - math.Exp(-1.5*s))
	bangs := strings.Count(text, "!") + strings.Count(text, "！")
	intensity := 1 - math.Exp(-0.9*s) + 0.1*math.Min(3, float64(bangs))
	return Detection{
		Emotion:    best,
		Confidence: round2(confidence),
		Intensity:  round2(math.Min(1, intensity)),
		Scores:     scores,
	}
}

func (lx *lexicon) has(emotion string) bool {
	i := sort.SearchStrings(lx.emotions, emotion)
	return i < len(lx.emotions) && lx.emotions[i] == emotion
}

// clauseBefore returns the part of prefix after the last clause boundary and
// whether an earlier clause turned with a contrast ("…, but").
func clauseBefore(prefix string) (string, bool) {
	cut := strings.LastIndexAny(prefix, ",.!?;:\n，。！？；：、")
	clause := prefix
	if cut >= 0 {
		_, size := utf8.DecodeRuneInString(prefix[cut:])
		clause = prefix[cut+size:]
	}
	contrast := false
	for _, w := range wordsOf(prefix) {
		if contrastEN[w] {
			contrast = true
		}
	}
	for _, c := range contrastZH {
		if strings.Contains(prefix, c) {
			contrast = true
		}
	}
	// The contrast word itself may start the match's clause ("but now I'm happy").
	if ws := wordsOf(clause); len(ws) > 0 && contrastEN[ws[0]] {
		clause = strings.Join(ws[1:], " ")
	}
	return clause, contrast
}

// wordsOf splits lower-cased text into words of letters, digits and apostrophes.
func wordsOf(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
	})
}

// englishModifiers reads the up to three words before a match.
func englishModifiers(clause string) (negated bool, weight float64) {
	words := wordsOf(clause)
	if len(words) > 3 {
		words = words[len(words)-3:]
	}
	weight = 1
	for i, w := range words {
		bare := strings.ReplaceAll(w, "'", "")
		switch {
		case negatorsEN[w] || negatorsEN[bare] || strings.HasSuffix(w, "n't"):
			negated = true
		case i >= len(words)-2 && intensifiersEN[w]:
			weight = intensified
		case i >= len(words)-2 && diminishersEN[w]:
			weight = diminished
		case i >= len(words)-2 && w == "of" && i > 0 && (words[i-1] == "kind" || words[i-1] == "sort"):
			weight = diminished
		}
	}
	return negated, weight
}

// chineseModifiers reads the up to four characters before a match and the two
// after it.
func chineseModifiers(clause, after string) (negated bool, weight float64) {
	r := []rune(clause)
	if len(r) > 4 {
		r = r[len(r)-4:]
	}
	before := string(r)
	weight = 1
	for _, n := range negatorsZH {
		if strings.Contains(before, n) {
			negated = true
		}
	}
	for _, d := range diminishersZH {
		if strings.Contains(before, d) {
			weight = diminished
		}
	}
	if weight == 1 {
		for _, w := range intensifiersZH {
			// One-character intensifiers ("好", "真") count only right before
			// the match; longer ones anywhere in the window.
			single := utf8.RuneCountInString(w) == 1
			if single && strings.HasSuffix(before, w) || !single && strings.Contains(before, w) {
				weight = intensified
				break
			}
		}
		for _, s := range suffixesZH {
			if strings.HasPrefix(after, s) {
				weight = intensified
			}
		}
	}
	return negated, weight
}

// isShouted reports whether a Latin match is written in capitals ("ANGRY").
func isShouted(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if !unicode.IsUpper(r) {
				return false
			}
		}
	}
	return letters >= 3
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
