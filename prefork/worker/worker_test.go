package worker

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr bool
		want    Env
	}{
		{"dispatch", map[string]string{"LISTEN_FDS": "2", "ACTD_ACCEPT_MODE": "dispatch", "ACTD_CHANNEL_FD": "5", "ACTD_SLOT": "3"},
			false, Env{Mode: prefork.Dispatch, Listeners: []int{3, 4}, Channel: 5, Slot: 3}},
		{"shared needs no channel", map[string]string{"LISTEN_FDS": "1", "ACTD_ACCEPT_MODE": "shared"},
			false, Env{Mode: prefork.Shared, Listeners: []int{3}, Channel: -1, Slot: -1}},
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
// has run busyReportAfter, then Idle.
func TestLateBusy(t *testing.T) {
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
		if err := b.done(true); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(typ prefork.Type, value uint32) {
		t.Helper()
		m, err := master.recv2()
		if err != nil || m.Type != typ || m.Value != value {
			t.Errorf("got %+v, %v; want %v with value %d", m, err, typ, value)
		}
	}
	serve(0)
	serve(0)
	serve(0)
	if err := b.flush(); err != nil { // its wait for the next connection timed out
		t.Fatal(err)
	}
	expect(prefork.Served, 3)
	if err := b.flush(); err != nil { // nothing new: nothing sent
		t.Fatal(err)
	}
	serve(0)
	serve(4 * busyReportAfter) // the short one goes out first
	expect(prefork.Served, 1)
	expect(prefork.Busy, 0)
	expect(prefork.Idle, 0)
	for range servedBatch { // a full batch goes out without a flush
		serve(0)
	}
	expect(prefork.Served, servedBatch)
}

// recv2 reads a child's message (recv accepts master types only).
func (c channel) recv2() (prefork.Message, error) {
	var buf [prefork.MessageSize]byte
	n, err := unix.Read(int(c), buf[:])
	if err != nil {
		return prefork.Message{}, err
	}
	return prefork.Decode(buf[:n])
}
