package protocol

import (
	"errors"
	"strings"
	"testing"
)

// TestAddrTrailer: Conn and Keep carry the client's address after the
// header, Write and Unsent after their trailer; it round-trips, and an
// address that is no HOST:PORT or longer than MaxAddr is garbage, as is
// one on a type without it.
func TestAddrTrailer(t *testing.T) {
	longest := "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"
	for _, m := range []Message{
		{Type: Conn, Listener: 1, Addr: "203.0.113.7:5555"},
		{Type: Keep, Listener: 2, Value: NotReady, Addr: "[2001:db8::1]:443"},
		{Type: Keep, Addr: longest},
		{Type: Write, Value: KeepAlive, Offset: 7, Length: 9, Addr: "203.0.113.7:1"},
		{Type: Unsent, Offset: 1, Length: 2, Addr: "[2001:db8::1]:443"},
		{Type: Unsent, Offset: 1, Length: 2},
	} {
		t.Run(m.Type.String()+" "+m.Addr, func(t *testing.T) {
			b := m.Encode(make([]byte, MaxPacket))
			want := MessageSize + len(m.Addr)
			if m.Type.HasTrailer() {
				want += TrailerSize
			}
			if len(b) != want || !strings.HasSuffix(string(b), m.Addr) {
				t.Fatalf("got %q (%d bytes), want %d bytes ending in %q", b, len(b), want, m.Addr)
			}
			got, err := Decode(b)
			if err != nil || got != m {
				t.Errorf("got %+v, %v; want %+v", got, err, m)
			}
		})
	}
	if len(longest) > MaxAddr {
		t.Errorf("the longest address is %d bytes, MaxAddr %d", len(longest), MaxAddr)
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"not an address", append([]byte{'C', 1, 0, 0, 0, 0, 0, 0}, "example.com:80"...)},
		{"no port", append([]byte{'K', 1, 0, 0, 0, 0, 0, 0}, "203.0.113.7"...)},
		{"IPv6 without brackets", append([]byte{'K', 1, 0, 0, 0, 0, 0, 0}, "2001:db8::1:443"...)},
		{"too long", append([]byte{'K', 1, 0, 0, 0, 0, 0, 0}, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"+strings.Repeat(" ", 2)...)},
		{"on a Busy", append([]byte{'B', 1, 0, 0, 0, 0, 0, 0}, "203.0.113.7:5555"...)},
		{"on a Fork", append([]byte{'F', 1, 0, 0, 0, 0, 0, 0}, "203.0.113.7:5555"...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(tc.in); !errors.Is(err, ErrGarbage) {
				t.Errorf("Decode(%q) = %v, want garbage", tc.in, err)
			}
		})
	}
}
