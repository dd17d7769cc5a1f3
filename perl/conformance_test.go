package perl_test

import (
	"testing"

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
