package prefork

import (
	"fmt"
	"maps"
	"slices"
)

// tlsFor returns, for each of listeners, the PEM bundle of its certificate
// or nil for none. certs maps a listener's name to its bundle (the chain
// PEM then the private key PEM, docs/operations.md, "TLS"), the name ""
// to the bundle of every listener without one of its own. It returns a
// *FieldError for tls-cert naming, when names are no listener's, the first
// of them in sorted order.
func tlsFor(certs map[string][]byte, listeners []*listener) ([][]byte, error) {
	names := make([]string, len(listeners))
	for i, l := range listeners {
		names[i] = l.Name
	}
	for _, name := range slices.Sorted(maps.Keys(certs)) { // sorted: the same name every run
		if name != "" && !slices.Contains(names, name) {
			return nil, &FieldError{Field: "tls-cert", Value: name + "=...",
				Allowed: fmt.Sprintf("for a listener by its name, one of %q", names)}
		}
	}
	which := make([][]byte, len(listeners))
	for i, name := range names {
		if pem, ok := certs[name]; ok {
			which[i] = pem
		} else {
			which[i] = certs[""]
		}
	}
	return which, nil
}
