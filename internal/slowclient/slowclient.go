// Package slowclient opens the slow and silent connections that the tests
// and the benchmark hold against a pool, the clients of issue 13: a slow
// one sends the start of a request head, then one header byte per period,
// and never finishes it; a silent one sends nothing. It also has issue
// 21's clients (exchange.go): one whose body comes slowly (Post) and one
// that takes its answer slowly (Read).
package slowclient

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Head is what a slow connection sends first.
const Head = "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "

// Conns are the connections Open made.
type Conns struct {
	Slow, Silent []net.Conn
}

// Open dials slow+silent TCP connections to addr, dialers at a time, each
// given dialWait, and sends Head on the slow ones. It returns those that
// connected, and the dial and write errors joined (nil if none failed).
func Open(addr string, slow, silent, dialers int, dialWait time.Duration) (Conns, error) {
	conns := make([]net.Conn, slow+silent)
	errs := make([]error, len(conns))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(dialers, 1) {
		wg.Go(func() {
			for i := range next {
				conns[i], errs[i] = dial(addr, i < slow, dialWait)
			}
		})
	}
	for i := range conns {
		next <- i
	}
	close(next)
	wg.Wait()
	return Conns{Slow: connected(conns[:slow]), Silent: connected(conns[slow:])}, errors.Join(errs...)
}

// dial connects to addr and, for a slow connection, sends Head.
func dial(addr string, slow bool, wait time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil || !slow {
		return c, err
	}
	if _, err := c.Write([]byte(Head)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func connected(conns []net.Conn) []net.Conn {
	var out []net.Conn
	for _, c := range conns {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// Trickle writes one header byte to every slow connection each period
// until stop closes. A write waits at most 10 ms: a peer that stopped
// reading does not hold up the others.
func (c Conns) Trickle(period time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			for _, s := range c.Slow {
				s.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
				s.Write([]byte("x"))
			}
		}
	}
}

// Len returns the number of connections open.
func (c Conns) Len() int { return len(c.Slow) + len(c.Silent) }

// Close closes every connection.
func (c Conns) Close() {
	for _, s := range append(c.Slow, c.Silent...) {
		s.Close()
	}
}
