package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
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
			// READY=1 may reach the socket just after the command's answer.
			deadline := time.Now().Add(5 * time.Second)
			for {
				reloading := ns.index("RELOADING=1", from)
				if reloading >= 0 && ns.index("READY=1", reloading) >= 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("got notifications %q after the reload, want RELOADING=1 then READY=1", ns.all()[from+1:])
					break
				}
				time.Sleep(10 * time.Millisecond)
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

// revision1Worker is a worker of protocol revision 1: hello with no
// capabilities (no handoff, no fork), idle, pongs, and an exit at a drain
// or the master's end.
func revision1Worker() int {
	fd, err := strconv.Atoi(os.Getenv(protocol.EnvChannelFD))
	if err != nil {
		return 1
	}
	var buf [protocol.MaxPacket]byte
	send := func(m protocol.Message) error {
		_, err := unix.Write(fd, m.Encode(buf[:]))
		return err
	}
	if send(protocol.Message{Type: protocol.Hello, Value: uint32(os.Getpid())}) != nil ||
		send(protocol.Message{Type: protocol.Idle}) != nil {
		return 1
	}
	for {
		n, err := unix.Read(fd, buf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return 0
		}
		m, err := protocol.Decode(buf[:n])
		switch {
		case err != nil:
			return 1
		case m.Type == protocol.Drain:
			return 0
		case m.Type == protocol.Ping:
			if send(protocol.Message{Type: protocol.Pong, Value: m.Value}) != nil {
				return 1
			}
		}
	}
}

// TestReloadIntoIncapableWorker: a reload into a worker that cannot do
// what the settings ask fails: `actd reload` exits 78 naming the key and
// the reason, and the old generation answers on; the pool (which used to
// stop with exit 78) reloads again afterwards. Preload for the built-in
// handler is refused with the file; a worker COMMAND tells at its hello
// (a revision-1 worker: no fork, no handoff), and its generation is
// abandoned.
func TestReloadIntoIncapableWorker(t *testing.T) {
	old := "worker = " + os.Args[0] + " " + oldArg + "\n"
	for _, tc := range []struct {
		name   string
		base   string // the configuration started with
		reload string // added for the reload
		want   []string
		next   int // the generation a reload back starts
	}{
		{"preload, built-in handler", "", "preload = true\n",
			[]string{"preload", "must be false for the built-in handler"}, 2},
		{"preload, zygote without fork", "", "preload = true\n" + old,
			[]string{"preload", "without the fork capability", "generation 2 cannot serve, generation 1 serves on"}, 3},
		{"accept filter, worker without handoff", "accept-filter = http\n", old,
			[]string{"accept-filter", "does not take handed-off connections", "generation 2 cannot serve, generation 1 serves on"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "actd.conf")
			write := func(text string) {
				if err := os.WriteFile(conf, []byte("start-timeout = 10s\nstart-children = 2\n"+text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(tc.base)
			a := startActd(t, nil, "--config", conf)
			waitFor(t, "the first generation ready", 10*time.Second, func() bool { return a.status(t).Snapshot.Ready })
			write(tc.base + tc.reload)
			code, out := runReloadCmd(t, a)
			if code != exitConfig {
				t.Errorf("got exit status %d, want %d; output:\n%s", code, exitConfig, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("got output %q, want it to name %q", out, w)
				}
			}
			doc := a.status(t)
			if doc.Snapshot.Generation != 1 {
				t.Errorf("got generation %d, want 1 serving on", doc.Snapshot.Generation)
			}
			if ab := doc.Snapshot.Abandoned; tc.next == 3 && (ab == nil || ab.Generation != 2) {
				t.Errorf("got abandoned %+v, want generation 2", ab)
			}
			if !strings.Contains(doc.Note, "reload failed") {
				t.Errorf("got status note %q, want it to say the reload failed", doc.Note)
			}
			checkAnswers(t, a, 5, 1)
			write(tc.base)
			want := fmt.Sprintf("generation %d serves alone", tc.next)
			if code, out := runReloadCmd(t, a); code != exitOK || !strings.Contains(out, want) {
				t.Errorf("reload back: got exit status %d, output %q; want 0 and %q", code, out, want)
			}
			checkAnswers(t, a, 5, tc.next)
		})
	}
}

// checkAnswers sends n requests and checks that generation gen answers each.
func checkAnswers(t *testing.T, a *actd, n, gen int) {
	t.Helper()
	for range n {
		body, err := a.get()
		if err != nil {
			t.Fatalf("pool after the reload: %v", err)
		}
		if got := slotGeneration(t, a, body); got != gen {
			t.Errorf("answer %q came from generation %d, want %d", body, got, gen)
		}
	}
}

// TestReloadServesAlone: when `actd reload` returns, no old child takes a
// connection: every request sent right after is answered by the new
// generation, while an old child busy with a connection when the reload
// began finishes it (and the reload counts it as finishing).
func TestReloadServesAlone(t *testing.T) {
	for _, tc := range []struct{ name, config string }{
		{"dispatch", ""},
		{"exclusive", "accept = exclusive\n"},
		// hold-body 0: the busy child is one waiting for a body (startRequest),
		// which the master would otherwise hold itself
		{"dispatch filter http", "accept-filter = http\nhold-body = 0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "actd.conf")
			text := "start-children = 3\nmin-spare = 1\nmax-spare = 8\n" + tc.config
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			a := startActd(t, nil, "--config", conf)
			waitFor(t, "3 children idle", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle == 3 })
			old := map[int]bool{}
			for _, s := range a.status(t).Snapshot.Slots {
				old[s.PID] = true
			}
			slow := startRequest(t, a)
			waitFor(t, "a busy child", 10*time.Second, func() bool { return a.status(t).Snapshot.Busy == 1 })
			code, out := runReloadCmd(t, a)
			if code != exitOK || !strings.Contains(out, "1 old child finishing its last connection") {
				t.Errorf("got exit status %d, output %q; want 0 and one old child finishing", code, out)
			}
			for i := range 20 {
				body, err := a.get()
				if err != nil {
					t.Fatalf("request %d after the reload: %v", i, err)
				}
				var slot, pid int
				if _, err := fmt.Sscanf(body, "slot=%d pid=%d", &slot, &pid); err != nil || old[pid] {
					t.Errorf("request %d after the reload: answer %q came from an old child (%v)", i, body, err)
				}
			}
			if body := slow(); !strings.HasPrefix(body, "slot=") {
				t.Errorf("the old child's connection: got %q, want an answer", body)
			} else if _, pid := parseAnswer(body); !old[pid] {
				t.Errorf("the old child's connection was answered by pid %d, not an old child", pid)
			}
			waitFor(t, "the old generation gone", 10*time.Second, func() bool {
				for _, s := range a.status(t).Snapshot.Slots {
					if old[s.PID] {
						return false
					}
				}
				return true
			})
		})
	}
}

// startRequest sends an HTTP/1.0 request head with a body to come, so that
// a child takes it (under a filter too) and waits; the function returned
// sends the body and returns the answer's last line.
func startRequest(t *testing.T, a *actd) func() string {
	t.Helper()
	c, err := net.DialTimeout("unix", a.sock, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("POST /slow HTTP/1.0\r\nContent-Length: 4\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	return func() string {
		if _, err := c.Write([]byte("body")); err != nil {
			return err.Error()
		}
		var last string
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			last = sc.Text()
		}
		return last
	}
}

// parseAnswer returns the slot and pid of a built-in handler's answer, or
// -1s.
func parseAnswer(body string) (slot, pid int) {
	if _, err := fmt.Sscanf(body, "slot=%d pid=%d", &slot, &pid); err != nil {
		return -1, -1
	}
	return slot, pid
}
