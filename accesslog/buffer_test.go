package accesslog

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFileBatches: a file logger writes whole lines in batches: nothing
// before the batch is full, its age reaches flushEvery, or FlushAll; then
// every line, in order, each whole.
func TestFileBatches(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "access")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := New("fd:"+strconv.Itoa(int(f.Fd())), "%U %>s")
	if err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	e := &Entry{Path: "/a", Status: 200, Start: time.Now()}
	l.Log(e)
	if got := size(); got != 0 {
		t.Errorf("after one line: %d bytes written, want none yet", got)
	}
	if err := FlushAll(); err != nil || size() != int64(len("/a 200\n")) {
		t.Fatalf("FlushAll: %v, %d bytes; want the one line", err, size())
	}

	for i := 0; size() < bufferSize; i++ { // fills a batch: written without waiting
		if i > bufferSize {
			t.Fatalf("%d lines logged, %d bytes written: a full batch was not written", i, size())
		}
		l.Log(e)
	}
	l.Log(&Entry{Path: "/late", Status: 404, Start: time.Now()})
	deadline := time.Now().Add(10 * flushEvery)
	for !strings.HasSuffix(read(t, f.Name()), "/late 404\n") {
		if time.Now().After(deadline) {
			t.Fatalf("the last line was not written within %v of the batch's start", 10*flushEvery)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, line := range strings.Split(strings.TrimSuffix(read(t, f.Name()), "\n"), "\n") {
		if line != "/a 200" && line != "/late 404" {
			t.Fatalf("line %d: got %q, want whole lines", i+1, line)
		}
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
