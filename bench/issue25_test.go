package main

import (
	"slices"
	"strings"
	"testing"
)

// TestIssue25Options: -issue25 picks the access-log comparison's servers
// and loads and writes only its section; a flag given wins.
func TestIssue25Options(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		wantLoads []string
	}{
		{[]string{"-issue25"}, issue25Loads},
		{[]string{"-issue25", "-loads", "close-8"}, []string{"close-8"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o, err := parseOptions(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !o.issue25 || !slices.Equal(o.servers, issue25Servers) || !slices.Equal(o.loads, tc.wantLoads) || o.pool != 4 {
				t.Errorf("got servers %v loads %v pool %d issue25 %v, want %v %v 4 true", o.servers, o.loads, o.pool, o.issue25, issue25Servers, tc.wantLoads)
			}
		})
	}
}
