package main

import (
	"encoding/json"
	"html/template"
	"mime"
	"net/http"
	"strings"
)

// The status page (--status-path PATH on --metrics-listen): what `actd
// status` shows, from the same status document. A browser gets HTML (the
// scoreboard as `actd status` prints it); a script gets the document as
// `actd status --json` prints it, for ?json or Accept: application/json.

// statusPage is the HTML around the scoreboard.
var statusPage = template.Must(template.New("status").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>actd {{.PID}}</title>
<meta name="viewport" content="width=device-width">
<style>body{font-family:sans-serif;margin:1em}pre{font-size:0.9em}</style></head>
<body><h1>actd</h1>
<pre>{{.Board}}</pre>
<p><a href="?json">JSON</a> · <a href="/metrics">metrics</a></p>
</body></html>
`))

// serveStatusPage answers the status page: 405 for a method but GET and
// HEAD, 503 when the master loop does not answer.
func (m *master) serveStatusPage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	doc, err := m.statusDoc(r.Context(), ownUnit())
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
		return
	}
	var board strings.Builder
	printStatus(&board, doc, "")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	statusPage.Execute(w, struct {
		PID   int
		Board string
	}{doc.PID, board.String()})
}

// wantsJSON reports whether r asks for JSON: a "json" query parameter, or
// application/json in Accept.
func wantsJSON(r *http.Request) bool {
	if r.URL.Query().Has("json") {
		return true
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && t == "application/json" {
			return true
		}
	}
	return false
}
