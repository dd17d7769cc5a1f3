package main

import (
	"bufio"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/actd/actd/internal/testcert"
)

// TestAccessLogAndTLS: with both an access-log file and a certificate a
// child gets two extra fds (the log's first, then the TLS memfd, each
// named in its environment); it serves HTTPS and logs each request to the
// file, in every mode that has a back-channel and in the default pool; a
// body over --max-request-body gets 413 over TLS too.
func TestAccessLogAndTLS(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 9)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"dispatch", nil},
		{"exclusive", []string{"--accept", "exclusive"}},
		{"filter http", []string{"--accept-filter", "http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "access.log")
			a := startActd(t, nil, append([]string{"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile,
				"--access-log", file, "--access-log-format", "%m %U %>s %B", "--max-request-body", "1K", "--start-children", "1"}, tc.flags...)...)
			c := tlsDial(t, a, cert)
			defer c.Close()
			r := bufio.NewReader(c)
			tlsGet(t, c, r, "/one?secret=1")
			tlsGet(t, c, r, "/two")
			if _, err := io.WriteString(c, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != 413 {
				t.Errorf("POST of 5000 bytes over a 1K limit: got %v, %v; want 413", resp, err)
			}
			lines := logLines(t, file, 3)
			for i, want := range []string{`^GET /one 200 \d+$`, `^GET /two 200 \d+$`, `^POST /up 413 \d+$`} {
				if !regexp.MustCompile(want).MatchString(lines[i]) {
					t.Errorf("line %d: got %q, want it to match %s", i+1, lines[i], want)
				}
			}
		})
	}
}
