package worker

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr bool
		want    Env
	}{
		{"dispatch", map[string]string{"LISTEN_FDS": "2", "ACTD_ACCEPT_MODE": "dispatch", "ACTD_CHANNEL_FD": "5", "ACTD_SLOT": "3"},
			false, Env{Mode: protocol.Dispatch, Listeners: []int{3, 4}, Channel: 5, Slot: 3}},
		{"shared needs no channel", map[string]string{"LISTEN_FDS": "1", "ACTD_ACCEPT_MODE": "shared"},
			false, Env{Mode: protocol.Shared, Listeners: []int{3}, Channel: -1, Slot: -1}},
		{"no LISTEN_FDS", map[string]string{"ACTD_ACCEPT_MODE": "dispatch", "ACTD_CHANNEL_FD": "4"}, true, Env{}},
		{"bad mode", map[string]string{"LISTEN_FDS": "1", "ACTD_ACCEPT_MODE": "roundrobin", "ACTD_CHANNEL_FD": "4"}, true, Env{}},
		{"no channel", map[string]string{"LISTEN_FDS": "1", "ACTD_ACCEPT_MODE": "exclusive"}, true, Env{}},
		{"bad number", map[string]string{"LISTEN_FDS": "x", "ACTD_ACCEPT_MODE": "dispatch", "ACTD_CHANNEL_FD": "4"}, true, Env{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"LISTEN_FDS", "ACTD_ACCEPT_MODE", "ACTD_CHANNEL_FD", "ACTD_SLOT"} {
				t.Setenv(k, tc.env[k])
				if _, ok := tc.env[k]; !ok {
					unsetenv(t, k)
				}
			}
			got, err := FromEnv()
			if (err != nil) != tc.wantErr {
				t.Fatalf("FromEnv() error = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (got.Mode != tc.want.Mode || got.Channel != tc.want.Channel || got.Slot != tc.want.Slot ||
				len(got.Listeners) != len(tc.want.Listeners) || got.Listeners[0] != tc.want.Listeners[0]) {
				t.Errorf("FromEnv() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "") // restores the old value after the test
	if err := unix.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}

// TestLateBusy: short connections are counted and reported together in one
// Served (on flush, or before a Busy); a long one is reported Busy once it
// has run busyReportAfter (checked at most every busyRecheck while
// connections follow one another), then Idle. Fake time (synctest), real
// back-channel.
func TestLateBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(pair[0])
		defer unix.Close(pair[1])
		master := channel(pair[1])
		b := newLateBusy(channel(pair[0]))
		serve := func(work time.Duration) {
			b.start(2)
			time.Sleep(work)
			synctest.Wait() // the timer's report, if any, has gone out
			if err := b.done(true); err != nil {
				t.Fatal(err)
			}
		}
		expect := func(typ protocol.Type, value uint32) {
			t.Helper()
			m, err := master.recv2()
			if err != nil || m.Type != typ || m.Value != value {
				t.Errorf("got %+v, %v; want %v with value %d", m, err, typ, value)
			}
		}
		// Fake time, from 0; the comments say when.
		serve(0) // 0: sets the timer for 5ms
		serve(0)
		serve(0)
		if err := b.flush(); err != nil { // its wait for the next connection timed out
			t.Fatal(err)
		}
		expect(protocol.Served, 3)
		if err := b.flush(); err != nil { // nothing new: nothing sent
			t.Fatal(err)
		}
		time.Sleep(busyRecheck) // 5: the timer found the child idle and lapsed
		serve(0)                // 50: sets it for 55; 50ms since the last report: reported at once
		expect(protocol.Served, 1)
		serve(3 * time.Millisecond) // 50-53
		serve(6 * time.Millisecond) // 53-59: 2ms old at 55, checked again at 105
		serve(busyRecheck)          // 59-109: reported at 105, after the short ones
		expect(protocol.Served, 2)
		expect(protocol.Busy, 0)
		expect(protocol.Idle, 0)
		time.Sleep(busyRecheck)    // 109-159: idle
		serve(2 * busyReportAfter) // 159-169: reported at 164
		expect(protocol.Busy, 0)
		expect(protocol.Idle, 0)
		if err := b.flush(); err != nil {
			t.Fatal(err)
		}
		for range servedBatch { // a full batch goes out without a flush
			serve(0)
		}
		expect(protocol.Served, servedBatch)
	})
}

// recv2 reads a child's message (recv accepts master types only).
func (c channel) recv2() (protocol.Message, error) {
	var buf [protocol.MessageSize]byte
	n, err := unix.Read(int(c), buf[:])
	if err != nil {
		return protocol.Message{}, err
	}
	return protocol.Decode(buf[:n])
}

// TestRetry: tries go on while they find connections; after a miss they
// pause for 1, 2, 4 ... 64 connections.
func TestRetry(t *testing.T) {
	tests := []struct {
		name  string
		found []bool // what each try finds, in turn
		want  string // per connection: t tried, . skipped
	}{
		{"saturated", []bool{true, true, true, true}, "tttt"},
		{"misses back off", []bool{false, false, false, false}, "t.t..t....t"},
		{"a find resets", []bool{false, false, true, true}, "t.t..tt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r retry
			var got []byte
			for tries := 0; tries < len(tt.found); {
				if !r.due() {
					got = append(got, '.')
					continue
				}
				got = append(got, 't')
				r.record(tt.found[tries])
				tries++
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	var r retry
	for range 20 {
		r.record(false)
	}
	if r.backoff != 64 {
		t.Errorf("backoff after 20 misses: %d, want the cap 64", r.backoff)
	}
}
