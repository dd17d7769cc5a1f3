package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPreloadNeedsFork: under --preload a worker whose zygote cannot fork
// stops actd at start with exit status 78 and a message naming the fix,
// rather than a pool that waits for forks forever: the built-in Go handler
// (Go cannot fork: refused with the configuration) and a revision-1 Python
// worker (its zygote's hello lacks the fork capability). No warning that
// reads like a hang ("killing zygote", event=hung) comes before it.
func TestPreloadNeedsFork(t *testing.T) {
	python, pyErr := exec.LookPath("python3")
	for _, tc := range []struct {
		name   string
		worker []string
	}{
		{"built-in handler", nil},
		{"revision-1 worker", []string{"--", python, "-c", helloOnlyWorker}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.worker != nil && pyErr != nil {
				t.Skip("python3 not installed")
			}
			args := append([]string{"--listen", "unix:" + filepath.Join(t.TempDir(), "s"), "--preload", "--log-format", "text"}, tc.worker...)
			stderr := checkRefused(t, args, "without the fork capability", "drop --preload")
			if strings.Contains(stderr, "level=WARN") || strings.Contains(stderr, "killing zygote") {
				t.Errorf("stderr %q: want no warning (a hang?) before the refusal", stderr)
			}
		})
	}
}

// helloOnlyWorker is a revision-1 worker in Python: hello with no
// capabilities, idle, then it waits.
const helloOnlyWorker = `import os, socket, struct, time
ch = socket.socket(fileno=int(os.environ["ACTD_CHANNEL_FD"]))
ch.send(struct.pack("!cBHI", b"H", 1, 0, os.getpid())); ch.send(struct.pack("!cBHI", b"I", 1, 0, 0))
time.sleep(30)`

// checkRefused runs actd with args until it exits and checks that it exits
// with status 78 and says every one of want on stderr (the reason and the
// fix). It returns stderr.
func checkRefused(t *testing.T, args []string, want ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a speed: python3 starts slowly on a loaded machine
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitConfig {
		t.Errorf("exit status %d, want %d", code, exitConfig)
	}
	for _, w := range want {
		if msg := stderr.String(); !strings.Contains(msg, w) {
			t.Errorf("stderr %q: want %q in it", msg, w)
		}
	}
	return stderr.String()
}
