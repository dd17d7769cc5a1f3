package prefork_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// floodFor is how long the flood worker sends request reports.
const floodFor = 1500 * time.Millisecond

// floodHTTP answers one HTTP/1.0 request per connection ("slot=K pid=P path"),
// and for a path holding "flood" first sends valid request reports (R) on
// its back-channel, nonstop, for floodFor: a chatty worker.
func floodHTTP() worker.KeepFDHandler {
	id := "slot=" + os.Getenv(protocol.EnvSlot) + " pid=" + strconv.Itoa(os.Getpid())
	env, _ := worker.FromEnv()
	return func(fd int, parkable bool) bool {
		r := bufio.NewReader(fdReader(fd))
		line, err := r.ReadString('\n')
		fields := strings.Fields(line)
		if err != nil || len(fields) != 3 {
			return false
		}
		if strings.Contains(fields[1], "flood") {
			var buf [protocol.MessageSize + protocol.MaxText]byte
			pkt := protocol.Message{Type: protocol.Request, Text: "GET /flood"}.Encode(buf[:])
			for end := time.Now().Add(floodFor); time.Now().Before(end); {
				unix.Sendto(env.Channel, pkt, unix.MSG_DONTWAIT, nil)
			}
		}
		body := id + " " + fields[1] + "\n"
		unix.Write(fd, []byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body))
		return false
	}
}

// cpuTime returns the CPU time this process (the master, here) has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReportFloodMuted is issue 22 item 4's chatty worker: under the http
// filter (where the back-channels always wake the master), a busy child
// that sends valid R reports nonstop for 1.5 s is muted after a run of
// them and read at each harvest only: the master (this process) spends
// under a tenth of the flood's time on the CPU (7-8 ms here; 0.45-0.94 s without
// the mute, the flooding child on the other core), the flooding request
// is answered, and the pool serves on.
func TestReportFloodMuted(t *testing.T) {
	cfg := fastConfig(protocol.Dispatch)
	cfg.MaxChildren, cfg.StartChildren = 2, 2
	cfg.Filter = acceptfilter.HTTP
	p := startPool(t, cfg, "flood")
	if body, err := get(p.addr, "/warm"); err != nil || !strings.HasPrefix(body, "slot=") {
		t.Fatalf("first request: got %q, %v", body, err)
	}
	before, start := cpuTime(t), time.Now()
	body, err := get(p.addr, "/flood")
	used, took := cpuTime(t)-before, time.Since(start)
	t.Logf("flood of %v: the request took %v, the master used %v of CPU", floodFor, took.Round(time.Millisecond), used.Round(time.Millisecond))
	if err != nil || !strings.Contains(body, "/flood") {
		t.Fatalf("flooding request: got %q, %v, want its answer", body, err)
	}
	if used > floodFor/10 {
		t.Errorf("got %v of the master's CPU during a %v report flood, want under a tenth of it", used, floodFor)
	}
	for i := range 5 {
		if body, err := get(p.addr, "/after/"+strconv.Itoa(i)); err != nil || !strings.HasPrefix(body, "slot=") {
			t.Errorf("request %d after the flood: got %q, %v", i, body, err)
		}
	}
}
