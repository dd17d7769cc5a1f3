package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
)

// heldServers are the servers whose master holds connections under an
// accept filter: for them each run also counts the connections the master
// held from their start (the pool's Stats.Held), which tells the
// children-first path (few or none) from the master-first one (all).
var heldServers = []string{"actd-filter-http", "actd-filter-http-master", "wsgi-actd-filter-http"}

// countsHeld reports whether server is one of heldServers.
func countsHeld(server string) bool { return slices.Contains(heldServers, server) }

// heldCounter returns a function that asks the actd master behind the
// control socket at socket, with the actd binary at actd, how many
// connections it has held from their start.
func heldCounter(actd, socket string) func() (uint64, error) {
	return func() (uint64, error) {
		out, err := exec.Command(actd, "status", "--json", "--control-socket", socket).Output()
		if err != nil {
			return 0, fmt.Errorf("actd status: %w", err)
		}
		return heldFrom(out)
	}
}

// heldFrom reads the held-from-their-start counter from `actd status
// --json`'s document. It returns 0 if the document has none (no accept
// filter, or nothing held yet: the field is omitted when zero), or an error
// if it is not JSON.
func heldFrom(doc []byte) (uint64, error) {
	var st struct {
		Pool struct {
			Stats struct {
				Held uint64 `json:"held"`
			} `json:"stats"`
		} `json:"pool"`
	}
	if err := json.Unmarshal(doc, &st); err != nil {
		return 0, fmt.Errorf("actd status: %w", err)
	}
	return st.Pool.Stats.Held, nil
}

// countHeld runs measure and, for a server with a held counter, sets the
// connections its master held during it. The counter is read before and
// after measure, outside the run's window of master CPU. A count that
// fails leaves heldKnown false; it returns measure's error only.
func (p *serverProc) countHeld(measure func() (runMeasure, error)) (runMeasure, error) {
	if p.held == nil {
		return measure()
	}
	before, errBefore := p.held()
	m, err := measure()
	if err != nil {
		return m, err
	}
	after, errAfter := p.held()
	if errBefore == nil && errAfter == nil && after >= before {
		m.held, m.heldKnown = after-before, true
	}
	return m, nil
}
