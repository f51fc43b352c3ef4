package cognitive

import (
	"context"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/store"
)

// putRecorder is a Store that records Put calls; other methods are not used.
type putRecorder struct {
	store.Store
	puts []store.PutOptions
}

func (r *putRecorder) Put(_ context.Context, _ []string, _ string, _ map[string]any, opts store.PutOptions) error {
	r.puts = append(r.puts, opts)
	return nil
}

func TestTouchKeepsTimeToLive(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		expires time.Time
		wantPut bool
		wantTTL time.Duration
	}{
		{name: "no ttl", wantPut: true, wantTTL: 0},
		{name: "ttl remaining", expires: now.Add(time.Hour), wantPut: true, wantTTL: time.Hour},
		{name: "expires now", expires: now},
		{name: "expired", expires: now.Add(-time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &putRecorder{}
			c := &candidate{item: store.Item{Namespace: []string{"m"}, Key: "k", ExpiresAt: tt.expires,
				Value: map[string]any{"key": "k", "value": "v", "access_count": 2.0}}}
			ref, err := touch(context.Background(), st, c, now)
			if err != nil {
				t.Fatal(err)
			}
			if ref["access_count"] != int64(3) {
				t.Errorf("access_count %v, want 3", ref["access_count"])
			}
			if !tt.wantPut {
				if len(st.puts) != 0 {
					t.Errorf("rewrote an item with no time left: %+v (a zero TTL makes it permanent)", st.puts)
				}
				return
			}
			if len(st.puts) != 1 || st.puts[0].TTL != tt.wantTTL {
				t.Errorf("puts %+v, want one with TTL %v", st.puts, tt.wantTTL)
			}
		})
	}
}

func TestContentQuery(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"Does she please you?", ""},
		{"Do I like to hike?", "like hike"},
		{"Tell me about my cats", "cats cat"},
		{"猫について教えて", "猫に 猫 て教 教え 教"},
		{"明日は雨が降っています", "明日 明 日は 日 は雨 雨が 雨 が降 降っ 降"},
		{"ねこについて", "ねこ こに につ つい いて"},
		{"我的猫", "的猫 猫"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := contentQuery(tt.text); got != tt.want {
				t.Errorf("contentQuery(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
