package main

import "testing"

// TestWholeSpan: how many bytes of a peek the handler reads on a
// connection that may go back to the master.
func TestWholeSpan(t *testing.T) {
	get := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	post := "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
	chunked := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct {
		name, peek string
		want       int
	}{
		{"one request", get, len(get)},
		{"two whole", get + get, 2 * len(get)},
		{"whole then start of next", get + "GET / HT", len(get)},
		{"whole then head of next without its body", get + post + "ab", len(get)},
		{"body whole", post + "abcde", len(post) + 5},
		{"body whole then next", post + "abcde" + get, len(post) + 5 + len(get)},
		{"body not in: its length", post + "ab", len(post) + 5},
		{"chunked whole", chunked + "3\r\nabc\r\n0\r\n\r\n" + "GET", len(chunked) + 13},
		{"chunked not whole: unbounded", chunked + "3\r\nabc\r\n", unbounded},
		{"head not whole: unbounded", "GET / HTTP/1.1\r\nHo", unbounded},
		{"two Content-Length: unbounded", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", unbounded},
		{"empty lines before a request", "\r\n" + get, 2 + len(get)},
		{"nothing", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wholeSpan([]byte(tc.peek)); got != tc.want {
				t.Errorf("wholeSpan(%q) = %d, want %d", tc.peek, got, tc.want)
			}
		})
	}
}
