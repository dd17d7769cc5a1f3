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

// TestPreloadNeedsFork: under --preload a worker whose zygote says hello
// without the fork capability stops actd at start with exit status 78 and
// a message naming the fix, rather than a pool that waits for forks
// forever: the built-in Go handler (Go cannot fork) and a revision-1
// Python worker.
func TestPreloadNeedsFork(t *testing.T) {
	python, pyErr := exec.LookPath("python3")
	// A revision-1 worker: hello with no capabilities, idle, then it waits.
	const worker = `import os, socket, struct, time
ch = socket.socket(fileno=int(os.environ["ACTD_CHANNEL_FD"]))
ch.send(struct.pack("!cBHI", b"H", 1, 0, os.getpid())); ch.send(struct.pack("!cBHI", b"I", 1, 0, 0))
time.sleep(30)`
	for _, tc := range []struct {
		name   string
		worker []string
	}{
		{"built-in handler", nil},
		{"revision-1 worker", []string{"--", python, "-c", worker}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.worker != nil && pyErr != nil {
				t.Skip("python3 not installed")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			args := append([]string{"--listen", "unix:" + filepath.Join(t.TempDir(), "s"), "--preload"}, tc.worker...)
			cmd := exec.CommandContext(ctx, os.Args[0], args...)
			cmd.Env = append(os.Environ(), envAsActd+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitConfig {
				t.Errorf("exit status %d, want %d", code, exitConfig)
			}
			if msg := stderr.String(); !strings.Contains(msg, "without the fork capability") || !strings.Contains(msg, "drop --preload") {
				t.Errorf("stderr %q: want the reason and the fix", msg)
			}
		})
	}
}
