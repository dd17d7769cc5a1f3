//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"
)

// revision1Worker is a worker of protocol revision 1 in Python: hello with
// no capabilities (no fork for preload, no handoff under a filter), idle,
// pongs, and an exit at a drain or EOF.
const revision1Worker = `#!/usr/bin/python3
import os, socket, struct
ch = socket.socket(fileno=int(os.environ["ACTD_CHANNEL_FD"]))
ch.send(struct.pack("!cBHI", b"H", 1, 0, os.getpid()))
ch.send(struct.pack("!cBHI", b"I", 1, 0, 0))
while True:
    m = ch.recv(64)
    if len(m) < 8 or m[:1] == b"D":
        break
    if m[:1] == b"P":
        ch.send(struct.pack("!cBHI", b"O", 1, 0, struct.unpack("!I", m[4:8])[0]))
`

// TestReloadCanFail is scenario 6 for ExecReload=actd reload, under the
// shipped accept-filter = http: systemctl reload returns non-zero for a bad
// config, a worker that cannot start, preload for a worker that cannot
// fork, and a worker without the handoff capability (issue 22: the last
// two used to stop the master with exit 78), naming the key or the reason
// in the journal, while the same master and its old children keep serving
// every request; a good config then reloads with exit 0.
func TestReloadCanFail(t *testing.T) {
	requireTool(t, "python3", "python3")
	a := NewActdBox(t)
	const base = "start-timeout = 2s\naccept-filter = http\n"
	const old = "worker = /usr/local/bin/revision-1-worker\n"
	a.WriteFile("/usr/local/bin/revision-1-worker", []byte(revision1Worker), 0o755)
	pool := Pool{Port: freePort(t), Config: base}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)
	load := StartLoad(pool.Addr(), 2, 5*time.Millisecond, 90*time.Second)
	waitAnswered(t, load, 50, 10*time.Second)

	for _, tc := range []struct {
		name   string
		config string
		ok     bool
		want   string // in the journal of the unit after the reload
	}{
		{"bad config", base + badConfig, false, "actd reload: failed, the running pool keeps its old generation: " + configPath},
		{"worker cannot start", base + "worker = /bin/false\n", false, "no child of generation 2 said hello within start-timeout 2s"},
		{"preload, built-in handler", base + "preload = true\n", false, "preload: true: must be false for the built-in handler"},
		{"preload, worker cannot fork", base + "preload = true\n" + old, false,
			"preload: generation 3 cannot serve, generation 1 serves on: --preload=true: must be false for this worker"},
		{"worker without handoff", base + old, false,
			"accept-filter: generation 4 cannot serve, generation 1 serves on: --accept-filter=http: must be none for this worker"},
		{"good config", base, true, "actd reload: generation 5 serves alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.WriteFile(configPath, []byte(tc.config), 0o644)
			out, code := a.ExitCode("systemctl", "reload", serviceUnit)
			if (code == 0) != tc.ok {
				t.Errorf("systemctl reload: got exit status %d, want success %v\n%s", code, tc.ok, out)
			}
			st := waitService(t, a.Bus, serviceUnit, 10*time.Second, "active", func(s ServiceState) bool {
				return s.ActiveState == "active"
			})
			if st.MainPID != before.MainPID || st.NRestarts != 0 {
				t.Errorf("master: got PID %d with NRestarts %d, want PID %d kept", st.MainPID, st.NRestarts, before.MainPID)
			}
			if journal := a.Journal(serviceUnit); !strings.Contains(journal, tc.want) {
				t.Errorf("journalctl -u %s: lacks %q:\n%s", serviceUnit, tc.want, journal)
			}
			waitAnswered(t, load, 100, 10*time.Second)
		})
	}
	res := load.Stop()
	t.Logf("client loop: %v", res)
	if res.Refused != 0 || res.Failed != 0 {
		t.Errorf("client loop across failed reloads: got %d refused and %d failed %q, want none", res.Refused, res.Failed, res.Errors)
	}
}
