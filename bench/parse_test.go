package main

import (
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want procStat
	}{
		{"plain", "42 (apache2) S 7 42 42 0 -1 4194560 1 0 0 0 12 30 0 0 20 0 1 0 5 1 1",
			procStat{pid: 42, ppid: 7, pgrp: 42, state: 'S'}},
		{"name with spaces and parens", "9 (a) b (c)) R 1 9 3 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 5 1 1",
			procStat{pid: 9, ppid: 1, pgrp: 9, state: 'R'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.line))
			if err != nil {
				t.Fatalf("parseStat: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1", "x (y) S 1 2"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): got no error, want one", bad)
		}
	}
}

func TestParseRollup(t *testing.T) {
	text := "55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:                8124 kB\nPss:                2051 kB\nPss_Anon:            900 kB\n"
	got := parseRollup([]byte(text))
	want := memory{rss: 8124 * 1024, pss: 2051 * 1024}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestParseSnmp(t *testing.T) {
	text := "Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoAlgorithm ActiveOpens PassiveOpens\nTcp: 1 10 2345\n"
	got, err := parseSnmp([]byte(text), "Tcp", "PassiveOpens")
	if err != nil || got != 2345 {
		t.Errorf("got %d, %v, want 2345, nil", got, err)
	}
	if _, err := parseSnmp([]byte(text), "Tcp", "Nope"); err == nil {
		t.Error("missing counter: got no error, want one")
	}
}

func TestParseWrk(t *testing.T) {
	out := "Running 4s test @ http://127.0.0.1:1/\n  2 threads and 8 connections\n" +
		"BENCH requests=40000 duration_us=4000000 p50_us=150 p99_us=2100 connect=1 read=2 write=3 status=4 timeout=5\n"
	got, err := parseWrk(out)
	if err != nil {
		t.Fatalf("parseWrk: %v", err)
	}
	want := wrkResult{requests: 40000, elapsed: 4 * time.Second, p50: 150 * time.Microsecond, p99: 2100 * time.Microsecond, errors: 15}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if rate := got.rate(); rate != 10000 {
		t.Errorf("rate: got %v, want 10000", rate)
	}
	for _, bad := range []string{"no summary", "BENCH requests=x duration_us=1", "BENCH requests=1 duration_us=0"} {
		if _, err := parseWrk(bad); err == nil {
			t.Errorf("parseWrk(%q): got no error, want one", bad)
		}
	}
}

func TestWrkSeconds(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{300 * time.Millisecond, "1s"},
		{time.Second, "1s"},
		{1500 * time.Millisecond, "2s"},
		{4 * time.Second, "4s"},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			if got := wrkSeconds(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
