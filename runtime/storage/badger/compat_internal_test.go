package badger

import (
	"os"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
)

// TestReadsDataDirectoriesOfEarlierVersions opens a data directory written
// by the checkpointer that preceded package checkpoint/core (testdata/v1,
// see runtime/storage/testdata/generate.go) and checks that everything
// reads as it did then, that the field snapshot saved then is used, and
// that the thread goes on from there.
func TestReadsDataDirectoriesOfEarlierVersions(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/v1/data")); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir, Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := db.Checkpointer()
	checkpointtest.CheckFixture(t, c, "testdata/v1/expected.json")

	// chat's messages have a chain of 40 deltas, and a snapshot at
	// version 40: reading version 41 walks one.
	if n := walkedField(t, db, "chat", "messages", 41); n != 1 {
		t.Errorf("reading chat's messages at 41 walked %d deltas, want 1 (from the snapshot at 40)", n)
	}
	checkpointtest.ContinueFixture(t, c)
}
