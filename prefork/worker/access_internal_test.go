package worker

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMeter: the status and body bytes the access log gets, through Write,
// ReadFrom and Flush, and the 413 that replaces a handler's answer once the
// body passed the limit.
func TestMeter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		handler    func(w http.ResponseWriter, r *http.Request)
		body       string
		wantStatus int
		wantBytes  int64
	}{
		{"write", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") }, "", 200, 5},
		{"header then copy", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(201)
			io.Copy(w, strings.NewReader("abc"))
		}, "", 201, 3},
		{"flush", func(w http.ResponseWriter, _ *http.Request) { w.(http.Flusher).Flush() }, "", 200, 0},
		{"echo over the limit", func(w http.ResponseWriter, r *http.Request) { io.Copy(w, r.Body) }, strings.Repeat("x", 20), 413, 18},
		{"read, then answer", func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			http.Error(w, "bad", 400)
		}, strings.Repeat("x", 20), 413, 18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			req.ContentLength = -1 // as chunked: only reading tells
			m := &meter{ResponseWriter: rec}
			req.Body = &limitedBody{ReadCloser: http.MaxBytesReader(rec, req.Body, 10), m: m}
			tc.handler(m, req)
			if m.status != tc.wantStatus || m.bytes != tc.wantBytes || rec.Code != tc.wantStatus {
				t.Errorf("got status %d (sent %d), %d bytes; want %d, %d", m.status, rec.Code, m.bytes, tc.wantStatus, tc.wantBytes)
			}
		})
	}
}
