package reducer

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

func reduce(t *testing.T, name string, old, update any) []any {
	t.Helper()
	r, _ := Lookup(name)
	res, err := r.Reduce(old, update)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Value.([]any)
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Appending grows the longest list of an array in place (the same array,
// no copy), leaves every older list as it was, and copies when an older list
// is appended to again, so two appends to one list never see each other.
func TestListsShareArraysSafely(t *testing.T) {
	for _, name := range []string{"append", "union", "merge_by_id", "messages"} {
		t.Run(name, func(t *testing.T) {
			item := func(i int) any {
				if name == "append" || name == "union" {
					return fmt.Sprint("item ", i)
				}
				return map[string]any{"id": fmt.Sprint("i", i), "role": "user", "content": fmt.Sprint("item ", i)}
			}
			list := reduce(t, name, []any{}, item(0))
			var lists [][]any
			inPlace := 0
			for i := 1; i < 200; i++ {
				next := reduce(t, name, list, item(i))
				if &next[0] == &list[0] {
					inPlace++
				}
				lists = append(lists, list)
				list = next
			}
			// Arrays double: all but a handful of the 199 appends are in place.
			if inPlace < 190 {
				t.Errorf("%d of 199 appends grew the list in place, want nearly all", inPlace)
			}
			for i, l := range lists {
				if len(l) != i+1 || asJSON(t, l[i]) != asJSON(t, item(i)) {
					t.Fatalf("list %d changed: len %d, last %v", i, len(l), l[len(l)-1])
				}
			}
			// Two different appends to the same older list.
			older := lists[99]
			a := reduce(t, name, older, item(1000))
			b := reduce(t, name, older, item(2000))
			if &a[0] == &list[0] || &b[0] == &list[0] {
				t.Errorf("an append to an older list wrote into the array of a newer one")
			}
			if len(a) != 101 || len(b) != 101 || asJSON(t, a[100]) != asJSON(t, item(1000)) || asJSON(t, b[100]) != asJSON(t, item(2000)) {
				t.Errorf("appends to one older list: %v / %v", a[100], b[100])
			}
			if asJSON(t, list[100]) != asJSON(t, item(100)) || len(list) != 200 {
				t.Errorf("the newest list changed: item 100 = %v", list[100])
			}
			// Keys known to the shared index are found again.
			again := reduce(t, name, list, item(7))
			if name != "append" && len(again) != 200 {
				t.Errorf("re-adding item 7 to a %s list gave %d items, want 200", name, len(again))
			}
		})
	}
}

// A keyed list extended by the plain append reducer no longer trusts its
// key index: the ids appended that way are found by messages afterwards.
func TestKeyIndexFollowsOtherReducers(t *testing.T) {
	list := reduce(t, "messages", []any{}, []any{msg("a", "user", "1"), msg("b", "user", "2")})
	list = reduce(t, "append", list, msg("c", "user", "3"))
	list = reduce(t, "messages", list, msg("c", "user", "3 edited"))
	if len(list) != 3 || list[2].(map[string]any)["content"] != "3 edited" {
		t.Errorf("messages after an append: %s", asJSON(t, list))
	}
}

// Messages with ids already present, repeated within one write, and new
// ones, in one write.
func TestMessagesUpsertWithinOneWrite(t *testing.T) {
	list := reduce(t, "messages", []any{}, []any{msg("a", "user", "1"), msg("b", "assistant", "2")})
	r, _ := Lookup("messages")
	res, err := r.Reduce(list, []any{msg("c", "user", "3"), msg("c", "user", "3 again"), msg("d", "user", "4")})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, res.Value); got != `[{"content":"1","id":"a","role":"user"},{"content":"2","id":"b","role":"assistant"},{"content":"3 again","id":"c","role":"user"},{"content":"4","id":"d","role":"user"}]` || res.AppendedFrom != 2 {
		t.Errorf("got %s, appended from %d", got, res.AppendedFrom)
	}
	res, err = r.Reduce(res.Value, []any{msg("b", "assistant", "2 edited"), msg("e", "user", "5")})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, res.Value); got != `[{"content":"1","id":"a","role":"user"},{"content":"2 edited","id":"b","role":"assistant"},{"content":"3 again","id":"c","role":"user"},{"content":"4","id":"d","role":"user"},{"content":"5","id":"e","role":"user"}]` || res.AppendedFrom != -1 {
		t.Errorf("got %s, appended from %d", got, res.AppendedFrom)
	}
	if list[1].(map[string]any)["content"] != "2" {
		t.Errorf("replacing a message changed the older list")
	}
}

// Concurrent appends to one list (as parallel branches of different
// threads sharing a value would make) each get a correct, separate result.
func TestConcurrentAppendsToOneList(t *testing.T) {
	for _, name := range []string{"append", "messages"} {
		base := reduce(t, name, []any{}, []any{msg("0", "user", "base")})
		var wg sync.WaitGroup
		results := make([][]any, 16)
		for g := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := base
				for i := range 50 {
					r, _ := Lookup(name)
					res, err := r.Reduce(l, msg(fmt.Sprintf("%d-%d", g, i), "user", fmt.Sprint(g)))
					if err != nil {
						panic(err)
					}
					l = res.Value.([]any)
				}
				results[g] = l
			}()
		}
		wg.Wait()
		for g, l := range results {
			if len(l) != 51 {
				t.Fatalf("%s: goroutine %d: %d items", name, g, len(l))
			}
			for i, item := range l[1:] {
				if id := item.(map[string]any)["id"]; id != fmt.Sprintf("%d-%d", g, i) {
					t.Fatalf("%s: goroutine %d item %d has id %v: another goroutine's append", name, g, i, id)
				}
			}
		}
	}
}
