package prefork

import (
	"errors"
	"testing"
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
	} {
		t.Run(m.Type.String(), func(t *testing.T) {
			var buf [MessageSize]byte
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
		{"version 0", []byte{'I', 0, 0, 0, 0, 0, 0, 0}},
		{"version 2", []byte{'I', 2, 0, 0, 0, 0, 0, 0}},
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
		{Accept, false, true}, {Ping, false, true}, {Drain, false, true}, {'x', false, false},
	} {
		if tc.typ.FromChild() != tc.child || tc.typ.FromMaster() != tc.master {
			t.Errorf("%v: FromChild, FromMaster = %v, %v; want %v, %v",
				tc.typ, tc.typ.FromChild(), tc.typ.FromMaster(), tc.child, tc.master)
		}
	}
}

// FuzzDecode: Decode never panics, accepts only 8-byte version-1 messages of
// a known type, and what it accepts encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{'H', 1, 0, 0, 0, 0, 0x10, 0})
	f.Add([]byte{'A', 1, 0, 2, 0, 0, 0, 0})
	f.Add([]byte("garbage!"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrGarbage) {
				t.Fatalf("Decode(%v) error %v does not wrap ErrGarbage", b, err)
			}
			return
		}
		var buf [MessageSize]byte
		if got := m.Encode(buf[:]); string(got) != string(b) {
			t.Fatalf("Encode(Decode(%v)) = %v", b, got)
		}
	})
}
