package perl_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestPassfd: the syscall numbers Actd::Passfd knows for this architecture
// are the kernel headers' (syscall.ph), and a pipe's write end sent over a
// SOCK_SEQPACKET pair arrives close-on-exec and writes into the pipe; a
// packet without a descriptor arrives with none.
func TestPassfd(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skipf("perl needed (Debian package perl): %v", err)
	}
	const script = `use Actd::Passfd; use Socket; use Fcntl;
my $arch = ($Config::Config{archname} =~ /^([^-]+)/)[0];
my $known = $Actd::Passfd::NUMBERS{$arch} or die "no numbers for $arch\n";
{ local $SIG{__WARN__} = sub {}; package main; require 'syscall.ph'; }
my @header = (main::SYS_sendmsg(), main::SYS_recvmsg());
"@$known" eq "@header" or die "known @$known, syscall.ph @header\n";
Actd::Passfd::available() or die "not available\n";
socketpair(my $a, my $b, AF_UNIX, SOCK_SEQPACKET, 0) or die "socketpair: $!";
pipe(my $r, my $w) or die;
Actd::Passfd::send_fd(fileno $a, "K-header", fileno $w) or die "sendmsg: $!";
close $w;
my ($packet, $fd) = Actd::Passfd::receive_fd(fileno $b, 256);
defined $fd or die "no fd came with $packet\n";
open(my $got, '>&=', $fd) or die "fd $fd: $!";
my $cloexec = fcntl($got, F_GETFD, 0) & FD_CLOEXEC;
syswrite $got, "through"; close $got;
sysread $r, my $text, 16;
Actd::Passfd::send_fd(fileno $a, "x", -1) and die "sent fd -1\n";
send($a, "plain", 0);
my ($plain, $none) = Actd::Passfd::receive_fd(fileno $b, 256);
print join " ", $packet, $cloexec ? "cloexec" : "inheritable", $text, $plain, defined $none ? "fd" : "nofd";
`
	out, err := exec.Command("perl", "-Ilib", "-e", script).CombinedOutput()
	want := "K-header cloexec through plain nofd"
	if got := strings.TrimSpace(string(out)); err != nil || got != want {
		t.Errorf("perl: got %q, %v, want %q", got, err, want)
	}
}

// TestAcceptFilter runs the handler under --accept-filter http, where a
// worker must announce handoff (else actd exits 78 at its hello): the
// HTTP conversations of TestHTTP are answered, on connections the children
// accepted (they screen: revision 4) or the master handed over, a
// keep-alive connection that idles goes back to the master (K) and its
// next request is answered, and slow or silent clients held by the master
// do not stop a good client.
func TestAcceptFilter(t *testing.T) {
	p := startPool(t, "dispatch", "app.psgi", "--accept-filter", "http", "--start-children", "2",
		"--min-children", "2", "--max-children", "2", "--hold-timeout", "60s")
	pids := map[int]bool{}
	t.Run("keep-alive", func(t *testing.T) { checkKeepAliveHanded(t, p, pids) })
	t.Run("pipelining", func(t *testing.T) { checkPipelining(t, p) })
	t.Run("continue", func(t *testing.T) { checkContinue(t, p) })
	t.Run("http10", func(t *testing.T) { checkHTTP10(t, p) })
	t.Run("given back", func(t *testing.T) { checkGivenBack(t, p) })
	t.Run("slow and silent clients", func(t *testing.T) { checkSlowClients(t, p) })
	t.Run("survived", func(t *testing.T) { checkSurvived(t, p, pids) })
	if s, err := p.Held(); err != nil || s.Pool.Stats.Handoffs == 0 {
		t.Errorf("stats: got %+v, %v; want connections handed over", s.Pool.Stats, err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// checkKeepAliveHanded: one connection carries requests of every kind,
// each answered, the connection open between them. Unlike checkKeepAlive
// it does not want one child for all: between two requests the connection
// may go back to the master, which hands it to the lowest idle child then.
func checkKeepAliveHanded(t *testing.T, p *pool, pids map[int]bool) {
	conn, r := dial(t, p)
	chunked := "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nTrailer: x\r\n\r\n"
	bodies := converse(t, conn, r, []exchange{
		{"GET", get("/hello"), 200, "", `^hello pid=\d+\n$`, map[string]string{"Connection": ""}},
		{"POST", "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nabcde", 200, "abcde", "",
			map[string]string{"X-Length": "5", "X-Buffered": "1"}},
		{"POST", chunked, 200, "Wikipedia", "", map[string]string{"X-Length": "9", "X-Buffered": "1"}},
		{"GET", get("/stream"), 200, "part 1;part 2;part 3;", "", map[string]string{"Transfer-Encoding": "chunked"}},
		{"GET", get("/delayed"), 200, "", `^delayed pid=\d+\n$`, nil},
		{"GET", get("/die"), 500, "Internal Server Error", "", nil},
		{"GET", get("/hello"), 200, "", `^hello pid=\d+\n$`, nil},
	})
	for _, b := range bodies {
		if m := pidRE.FindStringSubmatch(b); m != nil {
			pid, _ := strconv.Atoi(m[1])
			pids[pid] = true
		}
	}
}

// checkGivenBack: a keep-alive client that stops after a response is
// parked in the master while both children are idle, and the next request
// on the same connection is answered.
func checkGivenBack(t *testing.T, p *pool) {
	before, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	conn, r := dial(t, p)
	for i := range 3 {
		converse(t, conn, r, []exchange{{"GET", get("/hello"), 200, "", `^hello pid=\d+\n$`, nil}})
		_, err := p.WaitHeld(func(d statusDoc) bool {
			return d.Pool.Held.Parked == 1 && d.Pool.Stats.Parked >= before.Pool.Stats.Parked+uint64(i+1) && d.Pool.Idle == 2
		})
		if err != nil {
			t.Fatalf("after request %d: want the connection parked, both children idle: %v", i, err)
		}
	}
}

// checkSlowClients opens 50 connections that send part of a request head
// and stop, and 20 that send nothing, against 2 children: the master holds
// them all, and a good client's 50 requests are all answered.
func checkSlowClients(t *testing.T, p *pool) {
	const slow, silent, good = 50, 20, 50
	var mu sync.Mutex
	var idle []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := range slow + silent {
		c, err := net.DialTimeout("tcp", p.addr, ioBound)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		idle = append(idle, c)
		if i < slow {
			io.WriteString(c, fmt.Sprintf("GET /hello?slow=%d HTTP/1.1\r\nHost: test\r\n", i))
		}
	}
	if _, err := p.WaitHeld(func(d statusDoc) bool { return d.Pool.Held.Held >= slow+silent }); err != nil {
		t.Fatalf("want %d connections held: %v", slow+silent, err)
	}
	client := &http.Client{Timeout: ioBound, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range good {
		if err := getHello(client, p.addr, fmt.Sprintf("/hello?good=%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := p.Held(); err != nil || s.Pool.Held.Held < slow+silent {
		t.Errorf("after the good client: got %+v, %v; want the %d slow and silent still held", s.Pool.Held, err, slow+silent)
	}
}
