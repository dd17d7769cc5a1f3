package protocol

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestTallyAdd: a status counts under its code, its class or other, and a
// duration in the first bucket whose bound it does not pass.
func TestTallyAdd(t *testing.T) {
	for _, tc := range []struct {
		status int
		d      time.Duration
		label  string
		le     string // the bucket's bound, in µs, or "+Inf"
	}{
		{200, 0, "200", "5000"},
		{200, 5 * time.Millisecond, "200", "5000"}, // bounds are inclusive, as Prometheus's le
		{404, 5*time.Millisecond + time.Microsecond, "404", "10000"},
		{413, 300 * time.Millisecond, "413", "500000"},
		{101, time.Second, "1xx", "1000000"},
		{206, 2 * time.Second, "2xx", "2500000"},
		{307, 10 * time.Second, "3xx", "10000000"},
		{418, 11 * time.Second, "4xx", "+Inf"},
		{599, time.Hour, "5xx", "+Inf"},
		{99, -time.Second, "other", "5000"},
		{600, 0, "other", "5000"},
		{0, 0, "other", "5000"},
	} {
		var got Tallies
		got.Add(tc.status, tc.d)
		code, bucket := -1, -1
		for i, n := range got.Codes {
			if n == 1 {
				code = i
			}
		}
		for i, n := range got.Buckets {
			if n == 1 {
				bucket = i
			}
		}
		le := "+Inf"
		if bucket < len(TallyBounds) && bucket >= 0 {
			le = strconv.FormatUint(TallyBounds[bucket], 10)
		}
		if code < 0 || TallyLabel(code) != tc.label || bucket < 0 || le != tc.le || got.Count() != 1 {
			t.Errorf("Add(%d, %v): code %d (%q), bucket le %s, count %d; want %q, le %s, count 1",
				tc.status, tc.d, code, TallyLabel(max(code, 0)), le, got.Count(), tc.label, tc.le)
		}
		if want := uint64(max(tc.d, 0) / time.Microsecond); got.Micros != want {
			t.Errorf("Add(%d, %v): Micros %d, want %d", tc.status, tc.d, got.Micros, want)
		}
	}
}

// TestTallyRoundTrip: a Tally decodes to what was encoded, in a packet of
// MessageSize+TallySize bytes that fits MaxPacket.
func TestTallyRoundTrip(t *testing.T) {
	full := Tallies{Micros: 1<<64 - 1}
	for i := range full.Codes {
		full.Codes[i] = uint64(i + 1)
	}
	for i := range full.Buckets {
		full.Buckets[i] = 1<<32 - 1 - uint64(i)
	}
	over := Tallies{}
	over.Codes[0] = 1 << 40 // cut to the u32 maximum
	cut := Tallies{}
	cut.Codes[0] = 1<<32 - 1
	for _, tc := range []struct {
		name string
		in   *Tallies
		want Tallies
	}{
		{"nil", nil, Tallies{}},
		{"zero", &Tallies{}, Tallies{}},
		{"full", &full, full},
		{"over u32", &over, cut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf [MaxPacket]byte
			b := Message{Type: Tally, Tallies: tc.in}.Encode(buf[:])
			if len(b) != MessageSize+TallySize || len(b) > MaxPacket {
				t.Fatalf("packet of %d bytes, want %d (at most %d)", len(b), MessageSize+TallySize, MaxPacket)
			}
			m, err := Decode(b)
			if err != nil || m.Type != Tally || m.Tallies == nil || *m.Tallies != tc.want {
				t.Errorf("Decode = %+v (%+v), %v; want a tally of %+v", m, m.Tallies, err, tc.want)
			}
		})
	}
}

// TestTallyWireFormat: the trailer's first count is 200's, its u64 sum last.
func TestTallyWireFormat(t *testing.T) {
	var tl Tallies
	tl.Add(200, 3*time.Millisecond)
	var buf [MaxPacket]byte
	b := Message{Type: Tally, Tallies: &tl}.Encode(buf[:])
	if string(b[:8]) != "T\x01\x00\x00\x00\x00\x00\x00" || string(b[8:12]) != "\x00\x00\x00\x01" {
		t.Errorf("header and first count % x, want T 01 00.. then 00 00 00 01", b[:12])
	}
	if got := b[len(b)-8:]; string(got) != "\x00\x00\x00\x00\x00\x00\x0b\xb8" {
		t.Errorf("sum % x, want 3000 µs", got)
	}
}

// TestTallyGarbage: a Tally with a trailer cut short or too long is garbage.
func TestTallyGarbage(t *testing.T) {
	header := []byte{'T', 1, 0, 0, 0, 0, 0, 0}
	for _, n := range []int{0, 1, TallySize - 1, TallySize + 1, MaxText} {
		in := append(append([]byte{}, header...), make([]byte, n)...)
		if _, err := Decode(in); !errors.Is(err, ErrGarbage) {
			t.Errorf("Decode(tally with %d trailer bytes) error = %v, want ErrGarbage", n, err)
		}
	}
}
