package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/actd/actd/internal/testcert"
)

// TestTLSSettings: good pairs load into Pool.TLS, one bundle per name;
// each bad one is an *Error naming tls-cert or tls-key and saying why.
func TestTLSSettings(t *testing.T) {
	dir := t.TempDir()
	a := testcert.Write(t, dir, "a", 1)
	b := testcert.Write(t, dir, "b", 2)
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	listen := []string{"--listen", "web=127.0.0.1:0", "--listen", "api=127.0.0.1:0"}
	for _, tc := range []struct {
		name  string
		args  []string
		key   string // "" for success
		want  string // in the error, or the names loaded
		names []string
	}{
		{"one pair for all", []string{"--tls-cert", a.CertFile, "--tls-key", a.KeyFile}, "", "", []string{""}},
		{"per name", []string{"--tls-cert", "web=" + a.CertFile, "--tls-key", "web=" + a.KeyFile,
			"--tls-cert", "api=" + b.CertFile, "--tls-key", "api=" + b.KeyFile}, "", "", []string{"api", "web"}},
		{"missing cert file", []string{"--tls-cert", missing, "--tls-key", a.KeyFile}, "tls-cert", "no such file", nil},
		{"missing key file", []string{"--tls-cert", a.CertFile, "--tls-key", missing}, "tls-key", "no such file", nil},
		{"cert not PEM", []string{"--tls-cert", garbage, "--tls-key", a.KeyFile}, "tls-cert", "no CERTIFICATE", nil},
		{"key not PEM", []string{"--tls-cert", a.CertFile, "--tls-key", garbage}, "tls-key", garbage, nil},
		{"key of another cert", []string{"--tls-cert", a.CertFile, "--tls-key", b.KeyFile}, "tls-key", "does not match", nil},
		{"cert and key switched", []string{"--tls-cert", a.KeyFile, "--tls-key", a.CertFile}, "tls-cert", "no CERTIFICATE", nil},
		{"no key", []string{"--tls-cert", a.CertFile}, "tls-key", "give --tls-key FILE", nil},
		{"no cert for name", []string{"--tls-key", "web=" + a.KeyFile}, "tls-cert", "give --tls-cert web=FILE", nil},
		{"unknown name", []string{"--tls-cert", "www=" + a.CertFile, "--tls-key", "www=" + a.KeyFile}, "tls-cert", `no --listen is named "www"`, nil},
		{"twice", []string{"--tls-cert", a.CertFile, "--tls-cert", b.CertFile, "--tls-key", a.KeyFile}, "tls-cert", "given twice", nil},
		{"shared mode", []string{"--accept", "shared", "--tls-cert", a.CertFile, "--tls-key", a.KeyFile, "--", "/bin/true"}, "tls-cert", "shared", nil},
		{"exec", []string{"--exec", "/bin/cat", "--tls-cert", a.CertFile, "--tls-key", a.KeyFile}, "tls-cert", "--exec", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(append(append([]string{}, listen...), tc.args...))
			if tc.key == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				var names []string
				for name, pem := range c.Pool.TLS {
					names = append(names, name)
					if !strings.Contains(string(pem), "CERTIFICATE") || !strings.Contains(string(pem), "PRIVATE KEY") {
						t.Errorf("bundle for %q holds no chain and key:\n%s", name, pem)
					}
				}
				slices.Sort(names) // a map: its order is not the files'
				if strings.Join(names, ",") != strings.Join(tc.names, ",") {
					t.Errorf("got bundles for %q, want %q", names, tc.names)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error for key %s saying %q", err, tc.key, tc.want)
			}
		})
	}
}

// TestTLSKeysInFile: tls-cert and tls-key may each come on several lines
// of a config file, and a bad one names its line.
func TestTLSKeysInFile(t *testing.T) {
	dir := t.TempDir()
	a := testcert.Write(t, dir, "a", 1)
	good := "listen = web=127.0.0.1:0\nlisten = api=127.0.0.1:0\n" +
		"tls-cert = web=" + a.CertFile + "\ntls-key = web=" + a.KeyFile + "\n" +
		"tls-cert = api=" + a.CertFile + "\ntls-key = api=" + a.KeyFile + "\n"
	c, err := Parse([]string{"--config", writeFile(t, good)})
	if err != nil || len(c.Pool.TLS) != 2 {
		t.Fatalf("got %v and %d bundles, want 2 bundles", err, len(c.Pool.TLS))
	}
	bad := "listen = 127.0.0.1:0\ntls-cert = " + a.KeyFile + "\ntls-key = " + a.KeyFile + "\n"
	_, err = Parse([]string{"--config", writeFile(t, bad)})
	if err == nil || !strings.Contains(err.Error(), "pool.conf:2: tls-cert:") {
		t.Fatalf("got %v, want pool.conf:2: tls-cert: ...", err)
	}
}

// TestTLSFitsNamesFirstSorted: with several unpaired or unknown names, the
// exit-78 message names the first in sorted order, every time, not the
// one a map's iteration happened to reach first.
func TestTLSFitsNamesFirstSorted(t *testing.T) {
	many := func(prefix string) map[string]string {
		m := map[string]string{}
		for _, n := range []string{"h", "c", "f", "a", "g", "d", "b", "e"} {
			m[prefix+n] = "/" + prefix + n + ".pem"
		}
		return m
	}
	listen := []string{"web=127.0.0.1:0", "api=127.0.0.1:0"}
	for _, tc := range []struct {
		name        string
		listen      []string
		certs, keys map[string]string
		key, want   string
	}{
		{"certs without keys", nil, many(""), nil, "tls-key", "none for listener a "},
		{"keys without certs", nil, nil, many(""), "tls-cert", "none for listener a "},
		{"the pair for every listener first", nil, map[string]string{"": "/all.pem", "b": "/b.pem"}, nil, "tls-key", "none for the pair for every listener "},
		{"names no --listen has", listen, many("x"), many("x"), "tls-cert", `no --listen is named "xa"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Listen: tc.listen}
			for range 20 { // a map's order changes from one range to the next
				err := c.tlsFits(tc.certs, tc.keys)
				var ce *Error
				if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want an error for key %s saying %q", err, tc.key, tc.want)
				}
			}
		})
	}
}
