package runs_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/graphctl/graphctl/server/runs"
)

func TestBufferSince(t *testing.T) {
	b := runs.NewBuffer()
	for i := 1; i <= 3; i++ {
		b.Append("values", "values", []byte(strconv.Itoa(i)))
	}
	tests := []struct {
		after    int
		wantSeqs []int
	}{
		{-5, []int{1, 2, 3}},
		{0, []int{1, 2, 3}},
		{1, []int{2, 3}},
		{3, nil},
		{7, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("after=%d", tt.after), func(t *testing.T) {
			entries, closed, _ := b.Since(tt.after)
			if closed {
				t.Error("open buffer reported closed")
			}
			if len(entries) != len(tt.wantSeqs) {
				t.Fatalf("got %d entries, want %v", len(entries), tt.wantSeqs)
			}
			for i, e := range entries {
				if e.Seq != tt.wantSeqs[i] || e.Frame.ID != strconv.Itoa(e.Seq) || string(e.Frame.Data) != strconv.Itoa(e.Seq) {
					t.Errorf("entry %d: seq %d id %q data %s, want seq %d", i, e.Seq, e.Frame.ID, e.Frame.Data, tt.wantSeqs[i])
				}
			}
		})
	}
}

func TestBufferWakesAndCloses(t *testing.T) {
	b := runs.NewBuffer()
	entries, _, wake := b.Since(0)
	if len(entries) != 0 {
		t.Fatalf("new buffer has %d entries", len(entries))
	}
	select {
	case <-wake:
		t.Fatal("wake channel closed before any append")
	default:
	}
	b.Append("", "metadata", []byte("{}"))
	select {
	case <-wake:
	default:
		t.Fatal("append did not wake a waiting reader")
	}
	// A reader's slice is not changed by later appends.
	got, _, wake := b.Since(0)
	b.Append("values", "values", []byte("1"))
	if len(got) != 1 || got[0].Frame.Event != "metadata" {
		t.Fatalf("earlier slice changed: %v", got)
	}
	b.Close()
	select {
	case <-wake:
	default:
		t.Fatal("close did not wake a waiting reader")
	}
	b.Append("values", "values", []byte("2"))
	b.Close() // a second close is harmless
	if _, closed, _ := b.Since(0); !closed || b.Len() != 2 {
		t.Fatalf("after close: closed %v, len %d; want closed with 2 frames (appends after close dropped)", closed, b.Len())
	}
}

// A reader is woken by the first append after it looked, however many
// appends came before, and each look gives a channel the next append
// closes.
func TestBufferWakesEveryLook(t *testing.T) {
	b := runs.NewBuffer()
	for i := range 3 {
		b.Append("values", "values", []byte(strconv.Itoa(i)))
	}
	for look := range 3 {
		entries, _, wake := b.Since(b.Len())
		if len(entries) != 0 {
			t.Fatalf("look %d: %d entries after the last", look, len(entries))
		}
		select {
		case <-wake:
			t.Fatalf("look %d: woken before an append", look)
		default:
		}
		b.Append("values", "values", []byte("x"))
		b.Append("values", "values", []byte("y"))
		select {
		case <-wake:
		default:
			t.Fatalf("look %d: the appends did not wake the reader", look)
		}
	}
	if b.Len() != 9 {
		t.Errorf("len %d, want 9", b.Len())
	}
}
