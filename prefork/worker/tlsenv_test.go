package worker

import (
	"crypto/tls"
	"os"
	"testing"

	"github.com/actd/actd/internal/testcert"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

func TestParseTLSEnv(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  map[int]int
		err   bool
	}{
		{"", nil, false},
		{"0=5", map[int]int{0: 5}, false},
		{"0=6 2=7", map[int]int{0: 6, 2: 7}, false},
		{"3=5", nil, true}, // three listeners: 0 to 2
		{"0=", nil, true},
		{"x=5", nil, true},
		{"05", nil, true},
	} {
		got, err := parseTLSEnv(tc.value, 3)
		if (err != nil) != tc.err || len(got) != len(tc.want) {
			t.Errorf("%q: got %v, %v; want %v, error %v", tc.value, got, err, tc.want, tc.err)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: got %v, want %v", tc.value, got, tc.want)
			}
		}
	}
}

// TestLoadTLS: a certificate bundle in a memfd loads into a TLS 1.2+
// configuration with ALPN http/1.1, and its fd is closed; below revision
// 6, nothing loads (no tls capability).
func TestLoadTLS(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "c", 3)
	bundle := func() int {
		c, _ := os.ReadFile(cert.CertFile)
		k, _ := os.ReadFile(cert.KeyFile)
		fd, err := unix.MemfdCreate("test", unix.MFD_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		unix.Write(fd, append(c, k...))
		return fd
	}
	old := Env{Revision: 5, TLS: map[int]int{0: bundle()}}
	if term, err := old.loadTLS(); term != nil || err != nil || old.caps().Has(protocol.CapTLS) {
		t.Errorf("revision 5: got %v, %v; want nothing loaded", term, err)
	}
	fd := bundle()
	env := Env{Revision: 6, TLS: map[int]int{1: fd}}
	term, err := env.loadTLS()
	if err != nil {
		t.Fatal(err)
	}
	cfg := term.on(1)
	if cfg == nil || term.on(0) != nil || cfg.MinVersion != tls.VersionTLS12 || len(cfg.NextProtos) != 1 || cfg.NextProtos[0] != "http/1.1" {
		t.Errorf("got %+v, want listener 1 only, TLS 1.2+, ALPN http/1.1", term)
	}
	env.tls = term
	if !env.caps().Has(protocol.CapTLS) {
		t.Errorf("caps %v, want tls", env.caps())
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
		t.Errorf("memfd %d still open after loading", fd)
	}
}
