package badger

import (
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Thread summaries round-trip through the compact form, and summaries
// written as JSON by earlier versions still read.
func TestThreadSummaryEncoding(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	cases := []struct {
		name   string
		stored []byte
		want   checkpoint.ThreadInfo
	}{
		{"compact", encodeThread(checkpoint.ThreadInfo{ThreadID: "ignored", GraphName: "chat", Latest: "1f0-abc", Step: 41, UpdatedAt: at}),
			checkpoint.ThreadInfo{ThreadID: "t1", GraphName: "chat", Latest: "1f0-abc", Step: 41, UpdatedAt: at}},
		{"compact, no time, negative step", encodeThread(checkpoint.ThreadInfo{GraphName: "g", Latest: "x", Step: -1}),
			checkpoint.ThreadInfo{ThreadID: "t1", GraphName: "g", Latest: "x", Step: -1}},
		{"json", []byte(`{"thread_id":"t1","graph_name":"chat","latest_checkpoint":"1f0-abc","step":41,"updated_at":"2026-03-04T05:06:07.00000089Z"}`),
			checkpoint.ThreadInfo{ThreadID: "t1", GraphName: "chat", Latest: "1f0-abc", Step: 41, UpdatedAt: at}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got checkpoint.ThreadInfo
			if err := decodeThread("t1", c.stored, &got); err != nil {
				t.Fatal(err)
			}
			if got.ThreadID != c.want.ThreadID || got.GraphName != c.want.GraphName || got.Latest != c.want.Latest ||
				got.Step != c.want.Step || !got.UpdatedAt.Equal(c.want.UpdatedAt) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
	for _, bad := range [][]byte{{threadV1}, {threadV1, 5, 'a'}, append(encodeThread(checkpoint.ThreadInfo{Latest: "x"}), 0)} {
		var got checkpoint.ThreadInfo
		if err := decodeThread("t1", bad, &got); err == nil {
			t.Errorf("decodeThread(%q) = %+v, want an error", bad, got)
		}
	}
}
