package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runReloadCmd runs `actd reload --control-socket` against a and returns
// its exit status and output.
func runReloadCmd(t *testing.T, a *actd) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "reload", "--control-socket", a.ctl)
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestReloadCommand: `actd reload` waits for the new generation and says
// how it went; a bad config (78, the key named) or a worker that cannot
// start (1, the reason) leaves the old children serving.
func TestReloadCommand(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "actd.conf")
	write := func(text string) {
		if err := os.WriteFile(conf, []byte("start-timeout = 2s\nstart-children = 2\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	ns := newNotifySocket(t)
	a := startActd(t, []string{ns.env()}, "--config", conf)
	ns.waitFor(t, "READY=1", -1)
	for _, tc := range []struct {
		name   string
		config string
		code   int
		want   []string
		gen    int // the generation children must belong to afterwards
	}{
		{"good", "", exitOK, []string{"generation 2 serves alone, 2 children up"}, 2},
		{"bad config", "max-children = 0\n", exitConfig, []string{"max-children", "between 1 and 4096"}, 2},
		{"worker cannot start", "worker = " + os.Args[0] + " " + failArg + "\n", exitFailure,
			[]string{"no child of generation 3 said hello", "worker failing", "exit status 1"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(tc.config)
			from := len(ns.all()) - 1
			code, out := runReloadCmd(t, a)
			if code != tc.code {
				t.Errorf("got exit status %d, want %d; output:\n%s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("got output %q, want it to name %q", out, w)
				}
			}
			reloading := ns.index("RELOADING=1", from)
			if reloading < 0 || ns.index("READY=1", reloading) < 0 {
				t.Errorf("got notifications %q after the reload, want RELOADING=1 then READY=1", ns.all()[from+1:])
			}
			waitFor(t, fmt.Sprintf("serving children all of generation %d", tc.gen), 5*time.Second, func() bool {
				for _, s := range a.status(t).Snapshot.Slots {
					if strings.Contains("IAB", s.State) && s.Generation != tc.gen {
						return false
					}
				}
				return true
			})
			for range 5 {
				body, err := a.get()
				if err != nil {
					t.Fatalf("pool after the reload: %v", err)
				}
				if gen := slotGeneration(t, a, body); gen != tc.gen {
					t.Errorf("answer %q came from generation %d, want %d", body, gen, tc.gen)
				}
			}
		})
	}
	if note := a.status(t).Note; !strings.Contains(note, "reload failed") {
		t.Errorf("got status note %q, want it to say the reload failed", note)
	}
}

// slotGeneration returns the generation of the child that gave body
// ("slot=N pid=P"), or -1 if no live child has that PID.
func slotGeneration(t *testing.T, a *actd, body string) int {
	t.Helper()
	var slot, pid int
	if _, err := fmt.Sscanf(body, "slot=%d pid=%d", &slot, &pid); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	for _, s := range a.status(t).Snapshot.Slots {
		if s.PID == pid {
			return s.Generation
		}
	}
	return -1
}
