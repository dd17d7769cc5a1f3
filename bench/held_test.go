package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFilterServersPaths starts the default pool's two servers with a real
// actd and counts, through its control socket, what the master held while
// clients that send their request at once are served: the built-in handler
// takes them itself (children first, and TCP_DEFER_ACCEPT queues them with
// their request in), while actd-filter-http-master, the same handler as a
// revision-3 worker, has every one of them held by the master.
func TestFilterServersPaths(t *testing.T) {
	tl := testActd(t)
	const requests = 40
	tests := []struct {
		server     string
		masterHeld bool // every connection held by the master, else (nearly) none
	}{
		{"actd-filter-http", false},
		{"actd-filter-http-master", true},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			l, _ := loadByName("close-8")
			p, err := startFor(tl, tt.server, l, 2)
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			defer p.stop()
			m, err := p.countHeld(func() (runMeasure, error) {
				for range requests {
					if err := getOnce(addr(p.port), p.path); err != nil {
						return runMeasure{}, err
					}
				}
				return runMeasure{conns: requests}, nil
			})
			if err != nil {
				t.Fatalf("requests: %v", err)
			}
			t.Logf("%s: %d of %d connections held by the master", tt.server, m.held, requests)
			if !m.heldKnown {
				t.Fatalf("got no held count from actd status, want one")
			}
			if tt.masterHeld && m.held < requests {
				t.Errorf("got %d of %d connections held by the master, want all (master-first path)", m.held, requests)
			}
			if !tt.masterHeld && m.held*2 >= requests {
				t.Errorf("got %d of %d connections held by the master, want (nearly) none (children first)", m.held, requests)
			}
		})
	}
}

// testActd builds this checkout's actd into the tools of a test, or
// skips the test without a go command or outside the repository.
func testActd(t *testing.T) *tools {
	t.Helper()
	if _, err := exec.LookPath(goBinary()); err != nil {
		t.Skipf("no go command to build actd: %v", err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Skipf("not in the actd repository: %v", err)
	}
	tl := &tools{dir: t.TempDir()}
	if tl.actd, err = buildActd(root, filepath.Join(tl.dir, "actd")); err != nil {
		t.Fatalf("build actd: %v", err)
	}
	return tl
}
