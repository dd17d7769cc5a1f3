package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// freeAddr returns a loopback TCP address nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrape returns the status code and body of GET http://addr+path.
func scrape(addr, path string) (int, string, error) {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestMetrics: --metrics-listen serves the pool's numbers in the Prometheus
// text format on /metrics only, with labels for the child states and the
// listeners, and promtool finds nothing to say about them.
func TestMetrics(t *testing.T) {
	addr := freeAddr(t)
	a := startActd(t, nil, "--metrics-listen", addr)
	for range 3 {
		if _, err := a.get(); err != nil {
			t.Fatal(err)
		}
	}
	var body string
	waitFor(t, "metrics", 5*time.Second, func() bool {
		_, body, _ = scrape(addr, "/metrics")
		return strings.Contains(body, "actd_connections_total 3\n")
	})
	for _, want := range []string{
		"# TYPE actd_children gauge", `actd_children{state="idle"} `, `actd_children{state="busy"} `,
		"actd_children_max 32\n", "# TYPE actd_hung_total counter", `actd_build_info{version="dev"} 1`,
		"# TYPE process_start_time_seconds gauge", `actd_listen_queue{listener="unix-` + a.sock + `"} 0`,
		"actd_generation 1\n", "actd_reloads_total 0\n", "actd_pings_failed_total 0\n",
		`actd_child_memory_bytes{slot="0"} `, "# TYPE actd_child_cpu_seconds_total counter",
		`actd_child_cpu_seconds_total{slot="0"} `, "actd_oom_killed_total 0\n", "actd_orphans_killed_total 0\n", "actd_memory_recycled_total 0\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	for _, path := range []string{"/", "/metricsx", "/metrics/", "/status"} {
		if code, _, err := scrape(addr, path); code != http.StatusNotFound {
			t.Errorf("GET %s: got %d (%v), want 404", path, code, err)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus)")
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestSideSocketsFailStart: a --metrics-listen address in use or a
// --control-socket in a directory that does not exist stops actd at start
// with exit status 71 and an `actd: …` line naming the flag.
func TestSideSocketsFailStart(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"metrics address in use", []string{"--metrics-listen", busy.Addr().String()}, "actd: metrics-listen: "},
		{"control socket directory missing", []string{"--control-socket", dir + "/no/such/dir/ctl.sock"}, "actd: control socket: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--listen", "unix:" + dir + "/" + strings.ReplaceAll(tc.name, " ", "-")}, tc.args...)
			code, stderr := runActd(t, args...)
			if code != exitOSErr {
				t.Errorf("got exit status %d, want %d; stderr:\n%s", code, exitOSErr, stderr)
			}
			stderr = withoutRootWarning(stderr) // the tests may run as root, outside systemd
			if !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("got stderr %q, want it to start with %q", stderr, tc.want)
			}
		})
	}
}

// openFDs returns how many file descriptors pid has open.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// settledFDs returns the count of pid's open fds once it has stayed the
// same over 10 reads 20 ms apart (within 5 s).
func settledFDs(t *testing.T, pid int) int {
	t.Helper()
	n, same := openFDs(t, pid), 0
	waitFor(t, "the master's fds settled", 5*time.Second, func() bool {
		time.Sleep(20 * time.Millisecond)
		m := openFDs(t, pid)
		if m == n {
			same++
		} else {
			n, same = m, 0
		}
		return same >= 10
	})
	return n
}

// TestMetricsIdleClosed: keep-alive connections to --metrics-listen are
// closed after metricsIdle, and the master's fds with them.
func TestMetricsIdleClosed(t *testing.T) {
	addr := freeAddr(t)
	// A pool of fixed size: a child started or retired meanwhile (its
	// pidfd and back-channel) would move the count by more than the
	// scrapers do.
	a := startActd(t, nil, "--metrics-listen", addr, "--min-children", "2", "--max-children", "2")
	pid := a.cmd.Process.Pid
	if _, _, err := scrape(addr, "/metrics"); err != nil {
		t.Fatal(err)
	}
	// The scrape's keep-alive connection stays open in the master for
	// metricsIdle: base counts it, once the scrape's other fds are closed.
	base := 0
	waitFor(t, "a steady fd count after the scrape", 2*time.Second, func() bool {
		was := base
		base = openFDs(t, pid)
		return base == was
	})
	const n = metricsClients - 2
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		conns = append(conns, c)
	}
	if got := openFDs(t, pid); got < base+n {
		t.Errorf("got %d master fds with %d keep-alive scrapers, want at least %d", got, n, base+n)
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(metricsIdle + 3*time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("idle keep-alive connection: got %v, want EOF (closed by actd)", err)
		}
	}
	waitFor(t, "master fds back to their number before", 2*time.Second, func() bool { return openFDs(t, pid) <= base })
}

// TestEndpointsBounded: far more clients than the limit, idle on the
// metrics address or the control socket, do not grow the master's fds
// beyond the limit, and the pool keeps serving.
func TestEndpointsBounded(t *testing.T) {
	addr := freeAddr(t)
	// A pool of fixed size: a child the scaler starts meanwhile (its pidfd
	// and back-channel) would count as clients.
	a := startActd(t, nil, "--metrics-listen", addr, "--min-children", "2", "--max-children", "2")
	pid := a.cmd.Process.Pid
	// startActd returns once the control socket listens, with the
	// children still starting (their pidfds and channels not yet open,
	// or transient fds of their start): base is taken once both are idle
	// and the count has settled.
	waitFor(t, "both children idle", 10*time.Second, func() bool {
		p := a.status(t).Snapshot
		return p.Idle == 2 && p.Starting == 0
	})
	base := settledFDs(t, pid)
	for _, tc := range []struct {
		name    string
		network string
		address string
		limit   int
	}{
		{"metrics", "tcp", addr, metricsClients},
		{"control socket", "unix", a.ctl, controlClients},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waitFor(t, "the clients before closed", 5*time.Second, func() bool { return openFDs(t, pid) <= base })
			for range 200 {
				c, err := net.Dial(tc.network, tc.address)
				if err != nil {
					continue // refused is fine too
				}
				defer c.Close()
			}
			// The master takes clients up to its limit (two fewer: base
			// may count a connection of startActd's, since closed).
			waitFor(t, "the master takes its limit of clients", 5*time.Second, func() bool {
				return openFDs(t, pid) >= base+tc.limit-2
			})
			if got := openFDs(t, pid); got > base+tc.limit+2 {
				t.Errorf("got %d master fds with 200 idle clients, want at most %d + %d", got, base, tc.limit)
			}
			if _, err := a.get(); err != nil {
				t.Errorf("pool under 200 idle clients: %v", err)
			}
		})
	}
}
