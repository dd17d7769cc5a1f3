package examples_test

import (
	"testing"
	"time"

	"github.com/actd/actd/internal/conformance"
)

// Why net/http answers a case otherwise (Go 1.26).
const (
	bodyLate   = "the handler answers before it reads the body (the example reads none); net/http then fails the body and closes: one answer"
	trailers   = "net/http reads the last chunk's end and trailers leniently (textproto): a bare LF, controls, bad names"
	teWins     = "net/http takes Transfer-Encoding over Content-Length and keeps the connection (RFC 9112 6.3 allows it)"
	http10     = "net/http decodes chunked in HTTP/1.0"
	only501    = "net/http answers 501 for any Transfer-Encoding but chunked alone, where RFC 9112 6.3 asks 400 (it closes all the same)"
	noSkip     = "net/http does not skip empty lines before a request line: 400"
	limits     = "net/http's only head limits are MaxHeaderBytes (the example sets worker.MaxHeaderBytes, 32 KiB; net/http allows 4 KiB more) and worker.Requests' field count: no request-line limit"
	sameLength = "net/http takes repeated equal Content-Length values (RFC 9110 8.6 allows it)"
	bareLF     = "net/http (textproto) takes a bare LF as a line end"
	unfolds    = "net/http (textproto) unfolds obs-fold lines"
)

// netHTTPDiffers lists the corpus cases Go's net/http answers otherwise
// than actd's own workers, and why: actd hands a Go worker its connections
// and net/http parses them; actd does not control that parser
// (docs/http.md). Each entry is checked: a case that starts to agree (a
// newer Go) fails the test until it is taken off the list.
var netHTTPDiffers = map[string]string{
	"chunk-data-lf":           bodyLate,
	"chunk-end-lf":            trailers,
	"chunk-extension":         bodyLate,
	"chunk-extension-control": trailers,
	"chunk-extension-lf":      bodyLate,
	"chunk-line-too-long":     bodyLate,
	"chunk-size-empty":        bodyLate,
	"chunk-size-lf":           bodyLate,
	"chunk-size-not-hex":      bodyLate,
	"chunk-size-overflow":     bodyLate,
	"chunk-size-space-first":  bodyLate,
	"chunk-too-long":          bodyLate,
	"chunked-and-length":      teWins,
	"chunked-http10":          http10,
	"chunked-nbsp":            only501,
	"chunked-not-last":        only501,
	"chunked-prefix":          only501,
	"chunked-twice":           only501,
	"coding-empty":            only501,
	"coding-not-chunked":      only501,
	"empty-lines-first":       noSkip,
	"head-too-large":          limits,
	"last-chunk-lf":           bodyLate,
	"length-and-chunked":      teWins,
	"length-twice-same":       sameLength,
	"lf-field":                bareLF,
	"lf-lf":                   bareLF,
	"lf-request-line":         bareLF,
	"obs-fold":                unfolds,
	"request-line-too-long":   limits,
	"trailer-bad-name":        trailers,
	"trailer-lf":              trailers,
}

// TestGoHTTPConformance runs the framing corpus (docs/http.md) against the
// net/http example worker under actd, with and without the HTTP accept
// filter: a case listed in netHTTPDiffers must differ, every other must
// get the answers actd's own workers give.
func TestGoHTTPConformance(t *testing.T) {
	bin := t.TempDir()
	actd := build(t, bin, "github.com/actd/actd/cmd/actd")
	goHTTP := build(t, bin, "github.com/actd/actd/examples/go-http")
	for _, filter := range []string{"none", "http"} {
		t.Run(filter, func(t *testing.T) {
			p := startPool(t, actd, "dispatch", []string{goHTTP}, "--accept-filter", filter, "--hold-timeout", "60s")
			for _, c := range conformance.Cases {
				t.Run(c.Name, func(t *testing.T) {
					err := conformance.Check("tcp", p.addr, c, 20*time.Second)
					why, differs := netHTTPDiffers[c.Name]
					switch {
					case err != nil && !differs:
						t.Errorf("%s (%s): %v", c.Name, c.Rule, err)
					case err == nil && differs:
						t.Errorf("%s: net/http now agrees (listed: %s): take it off netHTTPDiffers and docs/http.md", c.Name, why)
					case err != nil:
						t.Logf("%s: net/http differs (%s): %v", c.Name, why, err)
					}
				})
			}
		})
	}
}
