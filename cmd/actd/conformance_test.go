package main

import (
	"testing"
	"time"

	"github.com/actd/actd/internal/conformance"
)

// TestBuiltinConformance: the built-in handler keeps every framing rule of
// the corpus (docs/http.md) on one keep-alive connection per case, with
// the master handing connections over at once and under the HTTP accept
// filter (which must neither hold what the handler answers at once nor
// hand over what it would wait on).
func TestBuiltinConformance(t *testing.T) {
	for _, filter := range []string{"none", "http"} {
		t.Run(filter, func(t *testing.T) {
			a := startActd(t, nil, "--accept-filter", filter, "--hold-timeout", "60s")
			for _, c := range conformance.Cases {
				t.Run(c.Name, func(t *testing.T) {
					if err := conformance.Check("unix", a.sock, c, 20*time.Second); err != nil {
						t.Errorf("%s (%s): %v", c.Name, c.Rule, err)
					}
				})
			}
		})
	}
}

// TestBuiltinConformanceTrickled: under the HTTP accept filter, each case
// of the corpus up to 300 bytes sent a byte at a time, so that the master
// looks at (nearly) every prefix: the filter hands a connection over
// neither before the handler can answer it nor after, and the answers are
// those of the corpus.
func TestBuiltinConformanceTrickled(t *testing.T) {
	a := startActd(t, nil, "--accept-filter", "http", "--hold-timeout", "60s")
	for _, c := range conformance.Cases {
		if len(c.Bytes()) > 300 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			if err := conformance.CheckTrickled("unix", a.sock, c, 30*time.Second, time.Millisecond); err != nil {
				t.Errorf("%s (%s): %v", c.Name, c.Rule, err)
			}
		})
	}
}
