package prefork

import (
	"errors"
	"strings"
	"testing"
)

// TestTLSForNamesFirstSorted: tlsFor gives each listener its own bundle
// or the one for every listener, and with several names no listener has,
// the tls-cert error names the first in sorted order every time.
func TestTLSForNamesFirstSorted(t *testing.T) {
	web, api := &listener{Listener: Listener{Name: "web"}}, &listener{Listener: Listener{Name: "api"}}
	all, w := []byte("all"), []byte("web")
	for _, tc := range []struct {
		name  string
		certs map[string][]byte
		want  []string // per listener, or the unknown name the error says
		bad   string
	}{
		{"one for all", map[string][]byte{"": all}, []string{"all", "all"}, ""},
		{"own and the rest", map[string][]byte{"": all, "web": w}, []string{"web", "all"}, ""},
		{"own only", map[string][]byte{"web": w}, []string{"web", ""}, ""},
		{"unknown names", map[string][]byte{"web": w, "x3": w, "x1": w, "x4": w, "x2": w, "x0": w, "x5": w}, nil, "x0=..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // a map's order changes from one range to the next
				which, err := tlsFor(tc.certs, []*listener{web, api})
				if tc.bad != "" {
					var fe *FieldError
					if !errors.As(err, &fe) || fe.Field != "tls-cert" || fe.Value != tc.bad {
						t.Fatalf("got %v, want a tls-cert error for %s", err, tc.bad)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				got := []string{string(which[0]), string(which[1])}
				if strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Fatalf("got bundles %q, want %q", got, tc.want)
				}
			}
		})
	}
}
