package prefork_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/prefork"
	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"
)

// TestReloadIntoIncapableWorker: a reload into a worker that cannot do what
// the settings ask is abandoned, and the pool keeps running on the old
// generation: a zygote without fork under Preload (the Go worker cannot
// fork), children without handoff under a filter, children that never
// start, a zygote that never says hello (its queued forks, released as it
// is retired, once re-abandoned the generation and stopped the pool). The
// reload's channel closes, the snapshot says why, the old children answer,
// and a later reload starts a generation of its own.
func TestReloadIntoIncapableWorker(t *testing.T) {
	for _, tc := range []struct {
		name    string
		filter  acceptfilter.Filter
		worker  string // the old generation's
		into    string // the new generation's
		preload bool
		// startTimeout is the new generation's: fastConfig's 5 s where a
		// hello must come, which a loaded machine's slow exec does not
		// miss; shorter where none comes (the thing tested), but 2 s
		// where a crash must come first (the reason says "worker failing").
		startTimeout time.Duration
		key          string // Abandoned.Key
		reason       string
	}{
		{"preload without fork", acceptfilter.None, "echo", "echo", true, 5 * time.Second, "preload", "without the fork capability"},
		{"filter without handoff", acceptfilter.HTTP, "keephttp", "nohandoff", false, 5 * time.Second, "accept-filter", "does not take handed-off connections"},
		{"no child starts", acceptfilter.None, "echo", "crash", false, 2 * time.Second, "", "no child of generation 2 said hello within start-timeout 2s; worker failing"},
		{"zygote never starts", acceptfilter.None, "echo", "nohello", true, 500 * time.Millisecond, "", "no child of generation 2 said hello within start-timeout 500ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fastConfig(protocol.Dispatch)
			cfg.Filter = tc.filter
			p := startPool(t, cfg, tc.worker)
			old := snapshot(t, p).Slots
			into := cfg
			into.Preload, into.StartTimeout = tc.preload, tc.startTimeout
			into.Program = workerProgram(p.program, tc.into)
			gen, ready, err := p.Reload(into)
			if err != nil || gen != 2 {
				t.Fatalf("Reload = %d, %v; want generation 2", gen, err)
			}
			select {
			case <-ready:
			case <-time.After(10 * time.Second):
				t.Fatal("the reload's channel still open after 10s")
			}
			s := snapshot(t, p)
			if a := s.Abandoned; a == nil || a.Generation != 2 || a.Serving != 1 || a.Key != tc.key || !strings.Contains(a.Reason, tc.reason) {
				t.Errorf("got abandoned %+v, want generation 2 for 1, key %q, reason %q", a, tc.key, tc.reason)
			}
			if s.Generation != 1 {
				t.Errorf("got generation %d, want 1 serving on", s.Generation)
			}
			checkServedBy(t, p, tc.filter, old)
			select {
			case err := <-p.runErr:
				t.Fatalf("the pool stopped: %v", err)
			default:
			}
			if ready, err := p.reload(cfg); err != nil {
				t.Fatal(err)
			} else {
				<-ready
			}
			if s := snapshot(t, p); s.Generation != 3 {
				t.Errorf("after a good reload: generation %d, want 3", s.Generation)
			}
		})
	}
}

// checkServedBy sends requests (HTTP under a filter) and checks that
// children of the old generation answer them: those in old, or one the
// pool started since in place of a child the abandoned generation lost (a
// fork killed for its missing hello counts as a child to replace).
func checkServedBy(t *testing.T, p *testPool, filter acceptfilter.Filter, old []prefork.SlotInfo) {
	t.Helper()
	for i := range 5 {
		var body string
		var err error
		if filter == acceptfilter.None {
			body, err = request(p.addr, "after")
		} else {
			body, err = get(p.addr, "/after")
		}
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		answered := func(s prefork.SlotInfo) bool { return strings.Contains(body, " pid="+strconv.Itoa(s.PID)+" ") }
		if slices.ContainsFunc(old, answered) {
			continue
		}
		if now := snapshot(t, p).Slots; !slices.ContainsFunc(now, func(s prefork.SlotInfo) bool {
			return answered(s) && s.Generation == old[0].Generation
		}) {
			t.Errorf("request %d answered %q, want a child of generation %d: one of %+v, or one started since (now %+v)",
				i, body, old[0].Generation, old, now)
		}
	}
}

// workerProgram returns prog running the test worker name instead.
func workerProgram(prog prefork.Program, name string) prefork.Program {
	prog.Env = slices.DeleteFunc(slices.Clone(prog.Env), func(kv string) bool {
		return strings.HasPrefix(kv, envWorker+"=")
	})
	prog.Env = append(prog.Env, envWorker+"="+name)
	return prog
}
