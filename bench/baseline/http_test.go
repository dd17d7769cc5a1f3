package main

import "testing"

func TestWantsKeepAlive(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"1.1 default", "GET / HTTP/1.1\r\nHost: x", true},
		{"1.1 close", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close", false},
		{"1.1 close any case", "GET / HTTP/1.1\r\nconnection: Close", false},
		{"1.0 default", "GET / HTTP/1.0\r\nHost: x", false},
		{"1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: keep-alive", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wantsKeepAlive([]byte(tt.head)); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestResponse(t *testing.T) {
	got := string(response("slot=0 pid=1\n", false))
	want := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nslot=0 pid=1\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
