package prefork

import (
	"fmt"
	"slices"
)

// TLSCert is one listener's certificate for children that terminate TLS
// (docs/operations.md, "TLS"): the chain PEM then the private key PEM, as
// one bundle the master passes to every child in a sealed memfd
// (tlsfds.go). Listener is a listener's name; "" means every listener
// that has no certificate of its own.
type TLSCert struct {
	Listener string
	PEM      []byte
}

// tlsFor returns, for each of listeners, the index into certs of its
// certificate or -1 for none. It returns a *FieldError for tls-cert when a
// certificate names no listener.
func tlsFor(certs []TLSCert, listeners []*listener) ([]int, error) {
	which := make([]int, len(listeners))
	names := make([]string, len(listeners))
	for i, l := range listeners {
		which[i], names[i] = -1, l.Name
	}
	for _, c := range certs {
		if c.Listener != "" && !slices.Contains(names, c.Listener) {
			return nil, &FieldError{Field: "tls-cert", Value: c.Listener + "=...",
				Allowed: fmt.Sprintf("for a listener by its name, one of %q", names)}
		}
	}
	for i, name := range names {
		for k, c := range certs {
			if c.Listener == name || c.Listener == "" && which[i] < 0 {
				which[i] = k
			}
		}
	}
	return which, nil
}
