//go:build integration

package integration

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// TestTemplateInstance is scenario 9: actd@demo is configured from
// /etc/actd/demo.conf, listens on its own address from a socket drop-in, and
// runs beside the default pool, each with its own master and status.
func TestTemplateInstance(t *testing.T) {
	a := NewActdBox(t)
	main := Pool{Port: freePort(t)}
	a.SetUp(main)
	demoPort := freePort(t)
	demoAddr := fmt.Sprintf("127.0.0.1:%d", demoPort)
	a.WriteFile("/etc/actd/demo.conf", []byte("max-children = 7\n"), 0o644)
	a.WriteFile("/etc/systemd/system/actd@demo.socket.d/listen.conf", socketDropIn(demoPort), 0o644)
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "enable", "--now", "actd@demo.socket")

	demo := a.Activate(demoAddr, "actd@demo.service")
	def := a.Activate(main.Addr(), serviceUnit)
	if demo.MainPID == def.MainPID {
		t.Fatalf("actd@demo and actd share master PID %d, want one each", demo.MainPID)
	}
	if n := a.WaitPoolLine("actd@demo.service", 5*time.Second, "a pool line", func([]int) bool { return true }); n[poolMax] != 7 {
		t.Errorf("actd@demo pool line max: got %d, want 7 from /etc/actd/demo.conf", n[poolMax])
	}
	if n := a.WaitPoolLine(serviceUnit, 5*time.Second, "a pool line", func([]int) bool { return true }); n[poolMax] != 32 {
		t.Errorf("actd pool line max: got %d, want the default 32", n[poolMax])
	}

	demoAnswer, err := get(demoAddr, 10*time.Second)
	if err != nil {
		t.Fatalf("request to actd@demo: %v", err)
	}
	defAnswer, err := get(main.Addr(), 10*time.Second)
	if err != nil {
		t.Fatalf("request to actd: %v", err)
	}
	for _, c := range []struct {
		name, socket string
		mine, other  int
	}{
		{"actd@demo", "/run/actd-demo/control.sock", demoAnswer.PID, defAnswer.PID},
		{"actd", "/run/actd/control.sock", defAnswer.PID, demoAnswer.PID},
	} {
		t.Run(c.name+" status", func(t *testing.T) {
			out, err := a.RunErr(actdBinary, "status", "--control-socket", c.socket)
			if err != nil {
				t.Fatalf("actd status --control-socket %s: %v\n%s", c.socket, err, out)
			}
			if !mentionsPID(out, c.mine) || mentionsPID(out, c.other) {
				t.Errorf("actd status of %s: want child PID %d and not %d of the other pool in\n%s", c.name, c.mine, c.other, out)
			}
		})
	}
}

// itoa formats a PID.
func itoa(pid uint32) string { return fmt.Sprint(pid) }

// mentionsPID reports whether the status text shows pid as a child of a slot.
func mentionsPID(text string, pid int) bool {
	// In the PID column of a slot row ("0  I  239  1 ..."), not in another
	// figure such as a FOR of 262ms.
	return regexp.MustCompile(`(?m)^\d+\s+\S\s+` + fmt.Sprint(pid) + `\s`).MatchString(text)
}
