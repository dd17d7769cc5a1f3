package acceptfilter

import (
	"bytes"
	"testing"
)

// hello returns a ClientHello handshake message with a body of n bytes.
func hello(n int) []byte {
	return append([]byte{clientHello, byte(n >> 16), byte(n >> 8), byte(n)}, bytes.Repeat([]byte{0xab}, n)...)
}

// records cuts msg into handshake records of at most size bytes.
func records(msg []byte, size int) []byte {
	var out []byte
	for len(msg) > 0 {
		k := min(size, len(msg))
		out = append(out, recordHandshake, 3, 1, byte(k>>8), byte(k))
		out = append(out, msg[:k]...)
		msg = msg[k:]
	}
	return out
}

func TestHelloReady(t *testing.T) {
	one := records(hello(300), 1000)
	split := records(hello(300), 2) // the message's header split across records too
	big := records(hello(20000), 1<<14)
	for _, tc := range []struct {
		name string
		head []byte
		want bool
	}{
		{"nothing", nil, false},
		{"one byte of a record", one[:1], false},
		{"three bytes of a record", one[:3], false},
		{"record header only", one[:5], false},
		{"half the hello", one[:150], false},
		{"all but one byte", one[:len(one)-1], false},
		{"whole hello", one, true},
		{"whole hello and more", append(append([]byte{}, one...), 23, 3, 3, 0, 1, 0), true},
		{"split in 2-byte records, all but the last", split[:len(split)-1], false},
		{"split in 2-byte records", split, true},
		{"over two full records, first only", big[:recordHeader+1<<14], false},
		{"over two full records", big, true},
		{"plain HTTP", []byte("GET / HTTP/1.1\r\n"), true},
		{"one plain byte", []byte("G"), true},
		{"SSLv2-style first byte", []byte{0x80, 0x2e}, true},
		{"not version 3", []byte{recordHandshake, 2}, true},
		{"empty record", []byte{recordHandshake, 3, 1, 0, 0}, true},
		{"oversized record", []byte{recordHandshake, 3, 1, 0xff, 0xff}, true},
		{"alert record", []byte{21, 3, 1, 0, 2, 2, 40}, true},
		{"server hello", records(append([]byte{2, 0, 0, 1}, 0), 100), true},
		{"second record not handshake", append(records(hello(300), 100)[:105], 23, 3, 3), true},
		{"head limit", append(records(hello(HeadLimit), 1<<14)[:HeadLimit-1], 0), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HelloReady(tc.head); got != tc.want {
				t.Errorf("got %v, want %v for %d bytes", got, tc.want, len(tc.head))
			}
		})
	}
}
