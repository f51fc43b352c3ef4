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

// A Direct subscriber takes the frames appended while it waits without
// being woken, is woken by the first frame it does not take (which it then
// reads itself, after the ones it took) and by the close, and is offered
// nothing after Leave.
func TestBufferDirect(t *testing.T) {
	tests := []struct {
		name string
		// appends are the modes of the frames appended while d waits.
		appends []string
		// refuse is the mode of frames d does not take.
		refuse    string
		leave     bool
		close     bool
		wantTaken []int
		wantWoken bool
		// wantNext is what SinceDirect returns next: the sequence numbers.
		wantNext []int
	}{
		{name: "all taken", appends: []string{"a", "a", "a"}, wantTaken: []int{2, 3, 4}},
		{name: "first not taken", appends: []string{"b", "a"}, refuse: "b", wantWoken: true, wantNext: []int{2, 3}},
		{name: "taken then not", appends: []string{"a", "a", "b", "a"}, refuse: "b", wantTaken: []int{2, 3}, wantWoken: true, wantNext: []int{4, 5}},
		{name: "close", appends: []string{"a"}, close: true, wantTaken: []int{2}, wantWoken: true},
		{name: "left", appends: []string{"a"}, leave: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := runs.NewBuffer()
			b.Append("", "metadata", nil)
			var taken []int
			d := runs.NewDirect(func(e runs.Entry) bool {
				if e.Mode == tt.refuse {
					return false
				}
				taken = append(taken, e.Seq)
				return true
			})
			if got, _, _ := b.SinceDirect(0, d); len(got) != 1 {
				t.Fatalf("first SinceDirect: %d entries, want the metadata", len(got))
			}
			after := 1
			_, _, wake := b.SinceDirect(after, d)
			if tt.leave {
				after = b.Leave(d, after)
			}
			for _, m := range tt.appends {
				b.Append(m, "values", nil)
			}
			if tt.close {
				b.Close()
			}
			if fmt.Sprint(taken) != fmt.Sprint(tt.wantTaken) {
				t.Errorf("taken %v, want %v", taken, tt.wantTaken)
			}
			woken := false
			select {
			case <-wake:
				woken = true
			default:
			}
			if woken != tt.wantWoken {
				t.Errorf("woken %v, want %v", woken, tt.wantWoken)
			}
			if tt.leave {
				if after != 1 {
					t.Errorf("Leave returned %d, want 1", after)
				}
				return
			}
			next, closed, _ := b.SinceDirect(after, d)
			var seqs []int
			for _, e := range next {
				seqs = append(seqs, e.Seq)
			}
			if fmt.Sprint(seqs) != fmt.Sprint(tt.wantNext) || closed != tt.close {
				t.Errorf("next SinceDirect: %v closed %v, want %v closed %v", seqs, closed, tt.wantNext, tt.close)
			}
		})
	}
}

// An append offers its frame to the first few waiting Direct subscribers
// only and wakes the others.
func TestBufferDirectOffersFewSubscribers(t *testing.T) {
	b := runs.NewBuffer()
	offered := 0
	var wakes []<-chan struct{}
	for range 10 {
		d := runs.NewDirect(func(runs.Entry) bool { offered++; return true })
		_, _, wake := b.SinceDirect(0, d)
		wakes = append(wakes, wake)
	}
	b.Append("values", "values", nil)
	woken := 0
	for _, w := range wakes {
		select {
		case <-w:
			woken++
		default:
		}
	}
	if offered == 0 || offered+woken != len(wakes) || woken == 0 {
		t.Fatalf("%d subscribers offered the frame and %d woken, want a few offered and the rest of %d woken", offered, woken, len(wakes))
	}
}
