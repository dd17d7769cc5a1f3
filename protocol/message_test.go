package protocol

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []Message{
		{Type: Hello, Value: 4242},
		{Type: Idle},
		{Type: Busy, Listener: 3},
		{Type: Pong, Value: 1<<32 - 1},
		{Type: Served, Listener: 1},
		{Type: Accept, Listener: 65535},
		{Type: Ping, Value: 7},
		{Type: Drain},
		{Type: Conn, Listener: 2},
		{Type: Keep, Listener: 1},
		{Type: Fork, Listener: 4095},
	} {
		t.Run(m.Type.String(), func(t *testing.T) {
			var buf [MaxPacket]byte
			got, err := Decode(m.Encode(buf[:]))
			if err != nil || got != m {
				t.Errorf("Decode(Encode(%+v)) = %+v, %v; want %+v, nil", m, got, err, m)
			}
		})
	}
}

func TestMessageWireFormat(t *testing.T) {
	var buf [MessageSize]byte
	got := Message{Type: Busy, Listener: 0x0102, Value: 0x03040506}.Encode(buf[:])
	want := []byte{'B', 1, 1, 2, 3, 4, 5, 6}
	if string(got) != string(want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
}

func TestDecodeGarbage(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short", []byte{'I', 1, 0, 0}},
		{"long", []byte{'I', 1, 0, 0, 0, 0, 0, 0, 0}},
		{"wire 0", []byte{'I', 0, 0, 0, 0, 0, 0, 0}},
		{"wire 2", []byte{'I', 2, 0, 0, 0, 0, 0, 0}},
		{"text too long", append([]byte{'R', 1, 0, 0, 0, 0, 0, 0}, make([]byte, MaxText+1)...)},
		{"text not UTF-8", []byte{'R', 1, 0, 0, 0, 0, 0, 0, 0xff, 0xfe}},
		{"unknown type", []byte{'Z', 1, 0, 0, 0, 0, 0, 0}},
		{"spamd line", []byte("I\x00\x00\x10\x01\n\x00\x00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(tc.in); !errors.Is(err, ErrGarbage) {
				t.Errorf("Decode(%q) error = %v, want ErrGarbage", tc.in, err)
			}
		})
	}
}

func TestTypeDirections(t *testing.T) {
	for _, tc := range []struct {
		typ           Type
		child, master bool
	}{
		{Hello, true, false}, {Idle, true, false}, {Busy, true, false}, {Pong, true, false}, {Served, true, false},
		{Request, true, false}, {Keep, true, false},
		{Accept, false, true}, {Conn, false, true}, {Ping, false, true}, {Drain, false, true}, {'x', false, false},
	} {
		if tc.typ.FromChild() != tc.child || tc.typ.FromMaster() != tc.master {
			t.Errorf("%v: FromChild, FromMaster = %v, %v; want %v, %v",
				tc.typ, tc.typ.FromChild(), tc.typ.FromMaster(), tc.child, tc.master)
		}
	}
}

// TestHasFD: only Conn, Keep, Write, Fork and Unsent carry file descriptors.
func TestHasFD(t *testing.T) {
	for _, e := range types {
		want := e.t == Conn || e.t == Keep || e.t == Write || e.t == Fork || e.t == Unsent
		if got := e.t.HasFD(); got != want {
			t.Errorf("%v.HasFD() = %v, want %v", e.t, got, want)
		}
	}
	if Type('x').HasFD() {
		t.Errorf("unknown type: HasFD() = true, want false")
	}
}

// FuzzDecode: Decode never panics, accepts only wire-format-1 messages of a
// known type (8 bytes, or a Request's header and text), and what it accepts
// encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{'H', 1, 0, 0, 0, 0, 0x10, 0})
	f.Add([]byte{'A', 1, 0, 2, 0, 0, 0, 0})
	f.Add([]byte("garbage!"))
	f.Add([]byte("R\x01\x00\x00\x00\x00\x00\x00GET /"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrGarbage) {
				t.Fatalf("Decode(%v) error %v does not wrap ErrGarbage", b, err)
			}
			return
		}
		var buf [MaxPacket]byte
		if got := m.Encode(buf[:]); string(got) != string(b) {
			t.Fatalf("Encode(Decode(%v)) = %v", b, got)
		}
	})
}

func TestTypeString(t *testing.T) {
	for _, tc := range []struct {
		typ  Type
		want string
	}{
		{Idle, "idle"}, {Request, "request"}, {'X', "'X' (0x58)"}, {0, "0x00"}, {0xff, "0xff"},
	} {
		if got := tc.typ.String(); got != tc.want {
			t.Errorf("Type(%#x).String() = %q, want %q", byte(tc.typ), got, tc.want)
		}
	}
}

func TestCaps(t *testing.T) {
	for _, tc := range []struct {
		caps Caps
		want string
	}{
		{0, "none"}, {CapHandoff, "handoff"}, {CapHandoff | CapFork, "handoff,fork"}, {CapFork | 0x100, "fork,+0x0100"},
		{CapTLS, "tls"}, {CapHandoff | CapProxy | CapTLS, "handoff,proxy,tls"}, {CapTLS | 0x40, "tls,+0x0040"},
	} {
		if got := tc.caps.String(); got != tc.want {
			t.Errorf("Caps(%#x).String() = %q, want %q", uint16(tc.caps), got, tc.want)
		}
	}
	if !(CapHandoff | CapFork).Has(CapFork) || CapHandoff.Has(CapFork) {
		t.Errorf("Has: got wrong answers")
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", MaxText) // 2 bytes each
	for _, tc := range []struct {
		name, in string
		wantLen  int
	}{
		{"short", "GET /", 5},
		{"cut at a character", long, MaxText},
		{"invalid UTF-8 replaced", "a\xffb", len("a\uFFFDb")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.in)
			if len(got) != tc.wantLen || !utf8.ValidString(got) {
				t.Errorf("Truncate: got %d bytes (valid %v), want %d valid", len(got), utf8.ValidString(got), tc.wantLen)
			}
		})
	}
}

func TestSince(t *testing.T) {
	if Since(Hello) != 1 || Since(Request) != 2 || Since('x') != 0 {
		t.Errorf("Since: got %d %d %d, want 1 2 0", Since(Hello), Since(Request), Since('x'))
	}
	for _, e := range types {
		if e.revision > Version {
			t.Errorf("%v is of revision %d, beyond Version %d", e.t, e.revision, Version)
		}
	}
}

// TestWriteTrailer: a Write or an Unsent carries its Offset and Length after the header,
// and decodes only with exactly that trailer.
func TestWriteTrailer(t *testing.T) {
	for _, typ := range []Type{Write, Unsent} {
		t.Run(typ.String(), func(t *testing.T) { testTrailer(t, typ) })
	}
}

func testTrailer(t *testing.T, typ Type) {
	m := Message{Type: typ, Listener: 2, Value: KeepAlive, Offset: 1<<40 + 3, Length: 4 << 20}
	b := m.Encode(make([]byte, MaxPacket))
	if len(b) != MessageSize+TrailerSize {
		t.Fatalf("got %d bytes, want %d", len(b), MessageSize+TrailerSize)
	}
	got, err := Decode(b)
	if err != nil || got != m {
		t.Errorf("got %+v, %v; want %+v", got, err, m)
	}
	for _, n := range []int{MessageSize, MessageSize + TrailerSize - 1, MessageSize + TrailerSize + 1} {
		short := append([]byte{}, b...)
		short = append(short, make([]byte, TrailerSize)...)[:n]
		if _, err := Decode(short); !errors.Is(err, ErrGarbage) {
			t.Errorf("a write of %d bytes: got %v, want garbage", n, err)
		}
	}
}
