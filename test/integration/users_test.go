//go:build integration

package integration

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// uidLine is the Uid: line of /proc/PID/status: real, effective, saved, fs.
var uidLine = regexp.MustCompile(`(?m)^Uid:\s+(\d+)\s`)

// TestOneUserPerPool (issue 11 item 8): actd@alpha and actd@beta run as
// their own dynamic users actd-alpha and actd-beta, not the shared "actd" of
// the default pool, so one pool's child cannot signal the other's; a drop-in
// with User= picks a fixed one.
func TestOneUserPerPool(t *testing.T) {
	a := NewActdBox(t)
	main := Pool{Port: freePort(t)}
	a.SetUp(main)
	pools := []struct{ name, user, addr string }{
		{"alpha", "actd-alpha", ""},
		{"beta", "actd-beta", ""},
		{"gamma", "web", ""}, // a fixed user from a drop-in
	}
	a.WriteFile("/etc/systemd/system/actd@gamma.service.d/user.conf", []byte("[Service]\nUser=web\n"), 0o644)
	for i, p := range pools {
		port := freePort(t)
		pools[i].addr = fmt.Sprintf("127.0.0.1:%d", port)
		a.WriteFile("/etc/actd/"+p.name+".conf", []byte("max-children = 4\n"), 0o644)
		a.WriteFile("/etc/systemd/system/actd@"+p.name+".socket.d/listen.conf", socketDropIn(port), 0o644)
	}
	a.Run("systemctl", "daemon-reload")
	uids := map[string]string{} // unit → its child's UID
	children := map[string]int{}
	for _, p := range append(pools, struct{ name, user, addr string }{"", "actd", main.Addr()}) {
		unit := serviceUnit
		if p.name != "" {
			unit = "actd@" + p.name + ".service"
			a.Run("systemctl", "start", "actd@"+p.name+".socket")
		}
		st := a.Activate(p.addr, unit)
		answer, err := a.Get(p.addr, 10*time.Second)
		if err != nil {
			t.Fatalf("request to %s: %v", unit, err)
		}
		child, master := a.uid(answer.PID), a.uid(int(st.MainPID))
		if child != master {
			t.Errorf("%s: child UID %s, master UID %s; want the same", unit, child, master)
		}
		if name := strings.TrimSpace(a.Run("getent", "passwd", child)); !strings.HasPrefix(name, p.user+":") {
			t.Errorf("%s: UID %s is %q, want user %s", unit, child, name, p.user)
		}
		for other, uid := range uids {
			if uid == child {
				t.Errorf("%s and %s both run as UID %s, want one user per pool", unit, other, uid)
			}
		}
		uids[unit], children[unit] = child, answer.PID
	}
	// The point of it: alpha's user cannot signal beta's child.
	alpha, beta := uids["actd@alpha.service"], children["actd@beta.service"]
	out, code := a.ExitCode("setpriv", "--reuid="+alpha, "--regid="+alpha, "--clear-groups", "kill", "-0", fmt.Sprint(beta))
	if code == 0 {
		t.Errorf("kill -0 %d (actd@beta's child) as actd-alpha's UID %s: succeeded, want EPERM", beta, alpha)
	} else if !strings.Contains(out, "ermitted") {
		t.Errorf("kill -0 as actd-alpha: got %q (exit %d), want Operation not permitted", out, code)
	}
}

// uid returns the real UID of pid in the box.
func (a *ActdBox) uid(pid int) string {
	a.t.Helper()
	m := uidLine.FindStringSubmatch(a.ReadFile(fmt.Sprintf("/proc/%d/status", pid)))
	if m == nil {
		a.t.Fatalf("no Uid: line in /proc/%d/status", pid)
	}
	return m[1]
}
