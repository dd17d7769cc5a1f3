package accesslog

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	start := time.Date(2000, 10, 10, 13, 55, 36, 0, time.FixedZone("", -7*3600))
	e := &Entry{Start: start, Duration: 1500 * time.Microsecond, Remote: "[2001:db8::1]:443",
		Method: "GET", Path: "/a b\"c", Query: "token=secret", Proto: "HTTP/1.1", Status: 200, Bytes: 12,
		Header: func(n string) string {
			return map[string]string{"User-Agent": "curl/8", "Referer": ""}[n]
		}}
	for _, tc := range []struct {
		format, want string
	}{
		{DefaultFormat, `2001:db8::1 - - [10/Oct/2000:13:55:36 -0700] "GET /a b\"c HTTP/1.1" 200 12 "-" "curl/8" 1500`},
		{"%m %U%q %H %s %>s %B %T %%", `GET /a b\"c?token=secret HTTP/1.1 200 200 12 0 %`},
		{"%P", strconv.Itoa(os.Getpid())},
		{"x", "x"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			f, err := Compile(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(f.Append(nil, e)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFormatEscapes(t *testing.T) {
	f, _ := Compile("%r %{X}i")
	e := &Entry{Method: "GET", Path: "/\n\x7f", Proto: "HTTP/1.0", Header: func(string) string { return "a\r\nb" }}
	if got, want := string(f.Append(nil, e)), `GET /\x0a\x7f HTTP/1.0 a\x0d\x0ab`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e.Bytes = 0
	f, _ = Compile("%b")
	if got := string(f.Append(nil, e)); got != "-" {
		t.Errorf("%%b of no bytes: got %q, want -", got)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, s := range []string{"%", "%z", "%{Host}", "%{}i", "abc %>x"} {
		t.Run(s, func(t *testing.T) {
			if _, err := Compile(s); err == nil || !strings.Contains(err.Error(), "access log format") {
				t.Errorf("Compile(%q): got %v, want an error naming the format", s, err)
			}
		})
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		where, format string
		on, err       bool
	}{
		{"", "", false, false},
		{"off", "", false, false},
		{"journal", "", true, false},
		{"fd:7", "%h", true, false},
		{"fd:x", "", false, true},
		{"fd:1", "", false, true},
		{"/var/log/x", "", false, true},
		{"journal", "%z", false, true},
	} {
		t.Run(tc.where+" "+tc.format, func(t *testing.T) {
			l, err := New(tc.where, tc.format)
			if (err != nil) != tc.err || (l != nil) != tc.on {
				t.Errorf("got %v, %v; want logger %v, error %v", l, err, tc.on, tc.err)
			}
		})
	}
}
