package slowclient

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// exchangeServer serves POST /echo (the body back), GET /bytes (size
// bytes of data) and GET /short (a Content-Length larger than its body)
// on loopback until the test ends, and returns its address.
func exchangeServer(t *testing.T, data []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			io.Copy(w, r.Body)
		case "/bytes":
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data)
		case "/short":
			w.Header().Set("Content-Length", strconv.Itoa(len(data)+1))
			w.Write(data)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestPostAndRead(t *testing.T) {
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i ^ i>>8)
	}
	addr := exchangeServer(t, data)
	if err := Post(addr, "/echo", data[:16<<10], 64<<10, time.Now().Add(10*time.Second)); err != nil {
		t.Errorf("Post of 16 KiB: %v", err)
	}
	if err := Post(addr, "/missing", data[:1<<10], 64<<10, time.Now().Add(10*time.Second)); err == nil {
		t.Errorf("Post to a 404: got nil, want an error")
	}
	tests := []struct {
		name    string
		path    string
		rate    int
		read    time.Duration
		want    int64 // -1: some, not all
		wantErr bool
	}{
		{"whole", "/bytes", 256 << 10, 10 * time.Second, int64(len(data)), false},
		{"until end", "/bytes", 16 << 10, time.Second, -1, false},
		{"short body", "/short", 256 << 10, 10 * time.Second, int64(len(data)), true},
		{"not found", "/missing", 256 << 10, 10 * time.Second, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := sha256.New()
			n, err := Read(addr, tt.path, h, tt.rate, time.Now().Add(tt.read))
			if (err != nil) != tt.wantErr {
				t.Errorf("got error %v, want one: %v", err, tt.wantErr)
			}
			switch {
			case tt.want < 0 && (n == 0 || n >= int64(len(data))):
				t.Errorf("got %d bytes, want some but not all %d", n, len(data))
			case tt.want >= 0 && n != tt.want:
				t.Errorf("got %d bytes, want %d", n, tt.want)
			}
			if tt.name == "whole" && !bytes.Equal(h.Sum(nil), sha256Sum(data)) {
				t.Errorf("got other bytes than were sent")
			}
		})
	}
}

func sha256Sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }
