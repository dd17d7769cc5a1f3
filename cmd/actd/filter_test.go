package main

import (
	"bufio"
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAcceptFilterVisible: under --accept-filter http the built-in handler
// answers through the hand-off, and a silent connection is held by the
// master: status (JSON and text), STATUS= line and metrics show it; a
// keep-alive connection given back shows as parked.
func TestAcceptFilterVisible(t *testing.T) {
	addr := freeAddr(t)
	a := startActd(t, nil, "--accept-filter", "http", "--max-held", "4096", "--metrics-listen", addr)
	if body, err := a.get(); err != nil {
		t.Fatalf("request under the filter: %q, %v", body, err)
	}
	silent, err := net.Dial("unix", a.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	kept, err := net.Dial("unix", a.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	kept.SetDeadline(time.Now().Add(10 * time.Second))
	kept.Write([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
	r := bufio.NewReader(kept)
	if line, err := r.ReadString('\n'); line != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("keep-alive answer %q, %v", line, err)
	}
	waitFor(t, "one held, one parked", 10*time.Second, func() bool {
		h := a.status(t).Snapshot.Held
		return h != nil && h.Held == 2 && h.Parked == 1
	})
	doc := a.status(t)
	var text bytes.Buffer
	printStatus(&text, doc, "")
	for _, want := range []string{"held (accept filter http): 2 of max 4096: 1 waiting, 0 ready, 1 parked", "held 2 (0 ready, 1 parked)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("actd status lacks %q:\n%s", want, text.String())
		}
	}
	_, body, err := scrape(addr, "/metrics")
	for _, want := range []string{`actd_held{state="waiting"} 1`, `actd_held{state="parked"} 1`, "actd_parked_total 1\n", "actd_held_max 4096\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q (%v):\n%s", want, err, body)
		}
	}
	// The built-in handler screens: the master held the silent connection,
	// and any other it was given not ready (on a unix socket a child may
	// accept before the request is written), which it then handed over.
	held, handed := counter(body, "actd_held_new_total"), counter(body, "actd_handoffs_total")
	if held < 1 || held != 1+handed {
		t.Errorf("metrics: held from the start %d, handed over %d; want 1 + the handed over", held, handed)
	}
}

// counter returns the value of an unlabelled counter in a metrics page, -1
// if it is not there.
func counter(page, name string) int {
	m := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`).FindStringSubmatch(page)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestAcceptFilterNeedsHandoff: a worker COMMAND that does not announce
// the handoff capability, under a filter, stops actd at its first hello
// with exit status 78 and a message naming the fix: no silent hang.
func TestAcceptFilterNeedsHandoff(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	args := []string{"--listen", "unix:" + filepath.Join(t.TempDir(), "s"), "--accept-filter", "data", "--", python, "-c", helloOnlyWorker}
	checkRefused(t, args, "does not take handed-off connections", "use --accept-filter none")
}
