package prefork

// Whether the loop's epoll set reports the listeners: every accept mode
// watches them through these, each at its own times (dispatch.go,
// exclusive.go, handoff.go).

// addListeners adds every listener to the loop's epoll set, watched if on
// (edge-triggered where l.edge is set) and registered but unwatched if not.
// It returns the first epoll_ctl error.
func (p *Pool) addListeners(on bool) error {
	for _, l := range p.listeners {
		if err := p.poll.add(l.FD, listenEvents(l, on), kindListener, l.index); err != nil {
			return err
		}
		l.armed = on
	}
	return nil
}

// watchListener starts or stops watching l. An epoll_ctl error is logged
// and leaves l as it was.
func (p *Pool) watchListener(l *listener, on bool) {
	if l.armed == on {
		return
	}
	if err := p.poll.arm(l.FD, listenEvents(l, on), kindListener, l.index); err != nil {
		p.log.Error("watch listener", "listener", l.Name, "err", err)
		return
	}
	l.armed = on
}

// watchListeners is watchListener for every listener.
func (p *Pool) watchListeners(on bool) {
	for _, l := range p.listeners {
		p.watchListener(l, on)
	}
}

// listenEvents returns the epoll events that watch l, or none.
func listenEvents(l *listener, on bool) uint32 {
	switch {
	case !on:
		return 0
	case l.edge:
		return eventIn | eventEdge
	}
	return eventIn
}
