package perl_test

import (
	"testing"
	"time"

	"github.com/actd/actd/internal/conformance"
)

// TestConformance: the PSGI handler keeps every framing rule of the corpus
// (docs/http.md) on one keep-alive connection per case, with the master
// handing connections over at once and under the HTTP accept filter.
func TestConformance(t *testing.T) {
	for _, filter := range []string{"none", "http"} {
		t.Run(filter, func(t *testing.T) {
			p := startPool(t, "dispatch", "app.psgi", "--accept-filter", filter, "--hold-timeout", "60s")
			for _, c := range conformance.Cases {
				t.Run(c.Name, func(t *testing.T) {
					if err := conformance.Check("tcp", p.addr, c, ioBound); err != nil {
						t.Errorf("%s (%s): %v", c.Name, c.Rule, err)
					}
				})
			}
		})
	}
}

// TestConformanceTrickled: under the HTTP accept filter, each case of the
// corpus up to 300 bytes sent a byte at a time, so that the master looks
// at (nearly) every prefix: the filter hands a connection over neither
// before the PSGI handler can answer it nor after (cmd/actd
// TestBuiltinConformanceTrickled has the same for the built-in handler).
func TestConformanceTrickled(t *testing.T) {
	p := startPool(t, "dispatch", "app.psgi", "--accept-filter", "http", "--hold-timeout", "60s")
	for _, c := range conformance.Cases {
		if len(c.Bytes()) > 300 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			if err := conformance.CheckTrickled("tcp", p.addr, c, ioBound, time.Millisecond); err != nil {
				t.Errorf("%s (%s): %v", c.Name, c.Rule, err)
			}
		})
	}
}
