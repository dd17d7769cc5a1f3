package prefork

import (
	"fmt"
	"strings"

	"github.com/actd/actd/protocol"
)

// A slot's life is one state machine. Its states and events are below; each
// accept mode has its own table of transitions (dispatchTable,
// exclusiveTable, sharedTable), and every message from a child, every order
// the master sends, and every start, close and reap goes through step. A
// message with no transition from the slot's state is garbage: onMessage
// reports it, and the child is killed. The diagram in doc.go is drawn from
// these tables (machine_test.go keeps it so).

// state is where a slot's child is in the protocol.
type state uint8

const (
	empty      state = iota // no child
	starting                // spawned, no hello yet
	greeted                 // said hello, not yet ready
	standby                 // exclusive: ready, not yet told to register its listeners
	idle                    // waiting for an order (exclusive: registered, waiting for a connection)
	ordered                 // sent an accept order (exclusive: told to register), no answer yet
	moving                  // exclusive: told to register again, behind a lower slot
	movingBusy              // exclusive: told to register again, serving a connection first
	busy                    // serving a connection
	running                 // shared mode: up, state unknown to the master
	exiting                 // back-channel closed, waiting to be reaped
	numStates
)

var stateNames = [numStates]string{"empty", "starting", "greeted", "standby", "idle", "ordered",
	"moving", "movingBusy", "busy", "running", "exiting"}

// stateLetters are the scoreboard letters (slot.letter).
const stateLetters = ".SSIIAABBRE"

func (s state) String() string { return stateNames[s] }

func (s state) letter() byte { return stateLetters[s] }

// starting reports whether a child in state s has not been ready yet.
func (s state) starting() bool { return s == starting || s == greeted }

// spare reports whether a child in state s can take a connection soon:
// starting or idle (as Apache counts its spare servers).
func (s state) spare() bool { return s.starting() || s == standby || s == idle }

// event is what moves a slot: a message from its child, or something the
// master did or saw.
type event uint8

const (
	evSpawn   event = iota // the master started the child
	evHello                // H
	evIdle                 // I
	evBusy                 // B
	evServed               // S
	evPong                 // O
	evRequest              // R
	evKeep                 // K: a connection given back (handoff mode)
	evTally                // T: request counts (tally.go)
	evOrder                // the master sent A
	evHandoff              // the master sent C: a connection handed over (handoff mode)
	evClose                // the back-channel closed, or the master stopped reading it
	evReap                 // the child was reaped
	numEvents
)

var eventNames = [numEvents]string{"spawn", "H", "I", "B", "S", "O", "R", "K", "T", "A", "C", "close", "reap"}

func (e event) String() string { return eventNames[e] }

// messageEvent returns the event of a type a child may send, and false
// for any other type.
func messageEvent(t protocol.Type) (event, bool) {
	switch t {
	case protocol.Hello:
		return evHello, true
	case protocol.Idle:
		return evIdle, true
	case protocol.Busy:
		return evBusy, true
	case protocol.Served:
		return evServed, true
	case protocol.Pong:
		return evPong, true
	case protocol.Request:
		return evRequest, true
	case protocol.Keep, protocol.Write: // Write: given back with its response to finish (offload.go)
		return evKeep, true
	case protocol.Tally:
		return evTally, true
	}
	return 0, false
}

// stay is a transition's target that leaves the state, and its since,
// as they are. A transition to the state it comes from restarts since.
const stay = numStates

// table is one mode's transitions: table[from][ev] is the next state, or
// invalid.
type table [numStates][numEvents]state

const invalid state = numStates + 1

// rule is a set of transitions: from each of from, ev leads to to.
type rule struct {
	from []state
	ev   event
	to   state
}

// talking lists the states of a slot whose back-channel is open.
var talking = []state{starting, greeted, standby, idle, ordered, moving, movingBusy, busy}

// protocolRules are the transitions every mode with a back-channel has.
var protocolRules = []rule{
	{[]state{empty}, evSpawn, starting},
	{[]state{starting}, evHello, greeted},
	{talking, evPong, stay},
	{[]state{busy, movingBusy}, evRequest, stay},
	{talking[1:], evTally, stay}, // any state after hello
	{talking, evClose, exiting},
	{[]state{exiting}, evReap, empty},
}

var dispatchTable = newTable(protocolRules, []rule{
	{[]state{greeted}, evIdle, idle},
	{[]state{idle}, evOrder, ordered},
	{[]state{ordered}, evBusy, busy},
	{[]state{ordered}, evIdle, idle}, // the order found nothing
	{[]state{busy}, evBusy, busy},    // the next, under KeepAccepting
	{[]state{busy}, evServed, busy},  // short ones, under KeepAccepting
	{[]state{busy}, evIdle, idle},
})

// handoffRules are dispatch mode under an accept filter (handoff.go): the
// master accepts and hands connections over (C); a child may give one back
// (K) before its I.
var handoffRules = []rule{
	{[]state{greeted}, evIdle, idle},
	{[]state{idle}, evHandoff, ordered},
	{[]state{ordered}, evBusy, busy},
	{[]state{ordered}, evIdle, idle}, // it closed the connection at once
	{[]state{busy}, evKeep, stay},
	{[]state{busy}, evIdle, idle},
}

// filterTable is dispatch mode under an accept filter: the handoff rules,
// and those of children that accept by themselves (screenRules, screen.go).
var filterTable = newTable(protocolRules, handoffRules, screenRules)

var exclusiveTable = newTable(protocolRules, []rule{
	{[]state{greeted}, evIdle, standby},
	{[]state{standby}, evOrder, ordered},
	{[]state{ordered}, evIdle, idle}, // registered
	{[]state{idle}, evBusy, busy},
	{[]state{idle}, evServed, stay},
	{[]state{busy}, evIdle, idle},
	{[]state{idle}, evOrder, moving}, // register again: a lower slot came after
	{[]state{moving}, evIdle, idle},  // registered again
	{[]state{moving}, evServed, stay},
	{[]state{moving}, evBusy, movingBusy}, // accepted before it read the order
	{[]state{movingBusy}, evIdle, moving},
})

var sharedTable = newTable([]rule{
	{[]state{empty}, evSpawn, running},
	{[]state{running}, evReap, empty},
})

func newTable(sets ...[]rule) *table {
	t := new(table)
	for i := range t {
		for j := range t[i] {
			t[i][j] = invalid
		}
	}
	for _, rules := range sets {
		for _, r := range rules {
			for _, from := range r.from {
				t[from][r.ev] = r.to
			}
		}
	}
	return t
}

// next returns the state after ev from s, and false if there is no such
// transition.
func (t *table) next(s state, ev event) (state, bool) {
	to := t[s][ev]
	if to == stay {
		return s, true
	}
	return to, to != invalid
}

// step moves slot s along ev by the pool's table. It reports false, leaving
// s as it is, if the table has no such transition. A slot that leaves idle
// leaves the idle set.
func (p *Pool) step(s *slot, ev event) bool {
	switch to := p.table[s.state][ev]; to {
	case invalid:
		return false
	case stay:
	default:
		if s.state == idle && to != idle {
			p.idle.remove(s.num)
		}
		s.state, s.since = to, p.now
	}
	if ev != evPong && ev != evRequest && ev != evTally {
		p.pace.wake(p.now, p.cfg.tickPeriod())
	}
	return true
}

// move is step for what the master does or sees (evSpawn, evOrder,
// evClose), followed by the mode's moved.
func (p *Pool) move(s *slot, ev event) bool {
	from := s.state
	if !p.step(s, ev) {
		return false
	}
	p.mode.moved(s, from, s.state, ev)
	return true
}

// diagram lists t's transitions from every state reachable from empty, one
// line per state: "from: ev → to, ev, ..." (an event without a target
// leaves the state as it is).
func (t *table) diagram() string {
	var b strings.Builder
	reach := t.reachable()
	for from := range numStates {
		if !reach[from] {
			continue
		}
		var edges []string
		for ev := range numEvents {
			switch to := t[from][ev]; to {
			case invalid:
			case stay:
				edges = append(edges, ev.String())
			default:
				edges = append(edges, fmt.Sprintf("%v → %v", ev, to))
			}
		}
		fmt.Fprintf(&b, "%-12s%s\n", state(from).String()+":", strings.Join(edges, ", "))
	}
	return b.String()
}

// reachable returns the states t can reach from empty.
func (t *table) reachable() [numStates]bool {
	var seen [numStates]bool
	todo := []state{empty}
	seen[empty] = true
	for len(todo) > 0 {
		from := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for ev := range numEvents {
			if to, ok := t.next(from, ev); ok && !seen[to] {
				seen[to] = true
				todo = append(todo, to)
			}
		}
	}
	return seen
}

// working reports whether a child in state st has a connection in hand or
// an order to answer: a drain waits for it, not a deadline.
func (st state) working() bool {
	return st == busy || st == movingBusy || st == ordered || st == moving
}
