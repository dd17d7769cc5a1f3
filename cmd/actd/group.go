package main

// group runs the master's lifetimes together, in the shape of oklog/run:
// every member runs in its own goroutine, the first to return stops all the
// others, and run waits for all of them. Its zero value is an empty group.
type group struct {
	members []member
}

// member is one lifetime: execute runs until it is done or interrupted;
// interrupt makes execute return soon, and may be called after it has.
type member struct {
	name      string
	execute   func() error
	interrupt func(error)
}

// add puts a member in the group. Call it before run.
func (g *group) add(name string, execute func() error, interrupt func(error)) {
	g.members = append(g.members, member{name, execute, interrupt})
}

// groupError is the error a member returned, with the member's name.
type groupError struct {
	member string
	err    error
}

func (e *groupError) Error() string { return e.member + ": " + e.err.Error() }
func (e *groupError) Unwrap() error { return e.err }

// run starts every member, waits for the first to return, interrupts all of
// them with its error and waits until every member has returned.
//
// It returns nil for an empty group or when the first member returned nil,
// else that member's error wrapped in a *groupError naming it. The errors
// of the members that returned after it are dropped.
func (g *group) run() error {
	if len(g.members) == 0 {
		return nil
	}
	done := make(chan error, len(g.members))
	for _, m := range g.members {
		go func() {
			err := m.execute()
			if err != nil {
				err = &groupError{m.name, err}
			}
			done <- err
		}()
	}
	first := <-done
	for _, m := range g.members {
		m.interrupt(first)
	}
	for range len(g.members) - 1 {
		<-done
	}
	return first
}
