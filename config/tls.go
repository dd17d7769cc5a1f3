package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/actd/actd/activation"
	"github.com/actd/actd/protocol"
)

// TLS settings: --tls-cert [NAME=]FILE and --tls-key [NAME=]FILE, each
// repeatable, one pair per listener name (NAME, as LISTEN_FDNAMES or
// --listen name it) or one pair without NAME for every other listener.
// The master reads the files (as root, before any child: a
// LoadCredential= path works) at start and on every reload, and children
// terminate TLS with them (docs/operations.md, "TLS").

// tlsEntry is one --tls-cert or --tls-key value.
type tlsEntry struct{ name, file string }

// splitTLS reads [NAME=]FILE. A FILE that holds '=' needs a NAME= before
// it only if the part before its first '=' has no '/'.
func splitTLS(v string) tlsEntry {
	name, file, ok := strings.Cut(v, "=")
	if !ok || strings.Contains(name, "/") {
		return tlsEntry{file: v}
	}
	return tlsEntry{name: name, file: file}
}

// tlsFiles returns values by name, or an *Error for key when a name comes
// twice or a FILE is empty.
func tlsFiles(key string, values []string) (map[string]string, error) {
	files := map[string]string{}
	for _, v := range values {
		e := splitTLS(v)
		if e.file == "" {
			return nil, &Error{Key: key, Err: fmt.Errorf("%q: want [NAME=]FILE", v)}
		}
		if first, ok := files[e.name]; ok {
			return nil, &Error{Key: key, Err: fmt.Errorf("%s given twice (%q and %q): give one per listener", forName(e.name), first, e.file)}
		}
		files[e.name] = e.file
	}
	return files, nil
}

// forName says which listeners a pair is for.
func forName(name string) string {
	if name == "" {
		return "the pair for every listener"
	}
	return "listener " + name
}

// loadTLS reads and checks c's TLS pairs into c.Pool.TLS. It returns an
// *Error naming tls-cert or tls-key: for a pair without its other half, a
// file that cannot be read, a PEM that does not parse, a key that does not
// match its certificate, a NAME no --listen has (when --listen gives the
// sockets), or TLS with shared mode or --exec, whose children cannot
// announce it.
func (c *Config) loadTLS() error {
	if len(c.TLSCert) == 0 && len(c.TLSKey) == 0 {
		return nil
	}
	certs, err := tlsFiles("tls-cert", c.TLSCert)
	if err != nil {
		return err
	}
	keys, err := tlsFiles("tls-key", c.TLSKey)
	if err != nil {
		return err
	}
	if err := c.tlsFits(certs, keys); err != nil {
		return err
	}
	c.Pool.TLS = make(map[string][]byte, len(certs))
	for _, name := range sortedKeys(certs) {
		bundle, err := loadPair(certs[name], keys[name])
		if err != nil {
			return err
		}
		c.Pool.TLS[name] = bundle
	}
	return nil
}

// tlsFits checks that certs and keys pair up by name, name listeners that
// --listen gives, and suit the worker. It returns nil, or an *Error: for
// tls-cert in shared mode or with --exec; for tls-key naming the first
// name, in sorted order, that has a certificate and no key; for tls-cert
// naming the first that has a key and no certificate; or tlsNames's.
func (c *Config) tlsFits(certs, keys map[string]string) error {
	switch {
	case c.Pool.Mode == protocol.Shared:
		return &Error{Key: "tls-cert", Err: errors.New("needs accept mode dispatch or exclusive: shared-mode children say no hello, so none can say it terminates TLS")}
	case len(c.Exec) > 0:
		return &Error{Key: "tls-cert", Err: errors.New("--exec programs read the plain connection: TLS needs the built-in handler or a worker COMMAND that announces tls")}
	}
	for _, name := range sortedKeys(certs) { // sorted: the same name every run
		if _, ok := keys[name]; !ok {
			return &Error{Key: "tls-key", Err: fmt.Errorf("none for %s (--tls-cert %q): give --tls-key %s", forName(name), certs[name], pairHint(name))}
		}
	}
	for _, name := range sortedKeys(keys) {
		if _, ok := certs[name]; !ok {
			return &Error{Key: "tls-cert", Err: fmt.Errorf("none for %s (--tls-key %q): give --tls-cert %s", forName(name), keys[name], pairHint(name))}
		}
	}
	return c.tlsNames(certs)
}

func pairHint(name string) string {
	if name == "" {
		return "FILE"
	}
	return name + "=FILE"
}

// tlsNames checks, when --listen gives the sockets, that every NAME is
// one of theirs (under systemd the pool checks, once it has the sockets).
// It returns nil, or an *Error for tls-cert naming the first unknown name
// in sorted order.
func (c *Config) tlsNames(certs map[string]string) error {
	if len(c.Listen) == 0 {
		return nil
	}
	var names []string
	for _, v := range c.Listen {
		if name, _, err := activation.ParseListen(v); err == nil {
			names = append(names, name)
		}
	}
	for _, name := range sortedKeys(certs) {
		if name != "" && !slices.Contains(names, name) {
			return &Error{Key: "tls-cert", Err: fmt.Errorf("%s=%s: no --listen is named %q (names: %q)", name, certs[name], name, names)}
		}
	}
	return nil
}

// loadPair reads certFile and keyFile and checks them with
// tls.X509KeyPair. It returns the bundle (the chain PEM, then the key
// PEM), or an *Error naming the file's key.
func loadPair(certFile, keyFile string) ([]byte, error) {
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return nil, &Error{Key: "tls-cert", Err: err}
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, &Error{Key: "tls-key", Err: err}
	}
	if err := parseChain(cert); err != nil {
		return nil, &Error{Key: "tls-cert", Err: fmt.Errorf("%s: %w", certFile, err)}
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return nil, &Error{Key: "tls-key", Err: fmt.Errorf("%s with certificate %s: %w", keyFile, certFile, err)}
	}
	bundle := append(append([]byte(nil), cert...), '\n')
	return append(bundle, key...), nil
}

// parseChain returns nil if pemData holds at least one certificate and
// every certificate in it parses.
func parseChain(pemData []byte) error {
	n := 0
	for {
		var b *pem.Block
		b, pemData = pem.Decode(pemData)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("no CERTIFICATE block in PEM")
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
