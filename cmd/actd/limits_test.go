package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRequestLimits: --max-request-body and the head limits with the
// built-in handler, without a filter (the child answers) and under
// --hold-body (the master answers a Content-Length over the limit
// itself, and counts it). Each answer closes the connection.
func TestRequestLimits(t *testing.T) {
	chunk := fmt.Sprintf("%x\r\n%s\r\n", 700, strings.Repeat("c", 700))
	var fields strings.Builder
	for i := range 101 {
		fmt.Fprintf(&fields, "X-F%d: v\r\n", i)
	}
	cases := []struct {
		name, req, want string
	}{
		{"Content-Length over", "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 2048\r\n\r\n", "HTTP/1.1 413 Content Too Large\r\n"},
		{"Content-Length at the limit", "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 1024\r\nConnection: close\r\n\r\n" + strings.Repeat("b", 1024), "HTTP/1.1 200 OK\r\n"},
		{"chunked over", "POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk + "0\r\n\r\n", "HTTP/1.1 413 Content Too Large\r\n"},
		{"101 fields", "GET / HTTP/1.1\r\nHost: a\r\n" + fields.String() + "\r\n", "HTTP/1.1 431 Request Header Fields Too Large\r\n"},
		{"head over 32K", "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("h", 33<<10) + "\r\n\r\n", "HTTP/1.1 431 Request Header Fields Too Large\r\n"},
	}
	for _, pool := range []struct {
		name string
		args []string
	}{
		{"child", nil},
		{"held", []string{"--accept-filter", "http", "--hold-body", "64K"}},
	} {
		t.Run(pool.name, func(t *testing.T) {
			addr := freeAddr(t)
			a := startActd(t, nil, append([]string{"--listen", addr, "--max-request-body", "1K"}, pool.args...)...)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					got := exchange(t, addr, tc.req)
					if !strings.HasPrefix(got, tc.want) {
						t.Errorf("got %q, want %q first", clipped(got), tc.want)
					}
				})
			}
			if pool.args == nil {
				return
			}
			waitFor(t, "the master's 413 counted", 5*time.Second, func() bool {
				h := a.status(t).Snapshot.Held
				return h != nil && h.TooLarge == 1
			})
			d := a.status(t)
			var page strings.Builder
			writeMetrics(&page, d, time.Now())
			if !strings.Contains(page.String(), "actd_bodies_too_large_total 1\n") {
				t.Errorf("metrics: got no actd_bodies_too_large_total 1 in\n%s", page.String())
			}
		})
	}
}

// clipped shortens an answer for a message.
func clipped(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
