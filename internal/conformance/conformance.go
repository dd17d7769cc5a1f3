// Package conformance is the HTTP/1.1 framing corpus every actd worker kind
// is held to (docs/http.md): one case per rule of RFC 9112 sections 2-7 and
// RFC 9110 that decides where a request ends or whether it is taken at all.
//
// Each case is sent on a fresh connection in one write, followed by a
// second, valid request (Follow). A good case must be answered twice with
// 200; a bad one once, with its status, and then the connection closed: a
// worker that reads a request's boundary otherwise answers a different
// count, which is how a hidden (smuggled) request shows. Cases marked Alone
// are sent without Follow: their head has no CRLF CRLF, and a worker (or the
// master's accept filter) that waited for one would answer nothing.
//
// The package is data and a client; the tests of each worker kind start
// the worker under actd and call Check for every case.
package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Target is the request target of every case: the test applications of
// every worker kind answer 200 there (the built-in handler anywhere).
const Target = "/echo"

// Follow is the valid request sent after each case on the same
// connection, in the same write.
const Follow = "GET " + Target + "?follow HTTP/1.1\r\nHost: follow\r\n\r\n"

// Case is one framing rule, as a request that keeps or breaks it.
type Case struct {
	Name    string // short, unique: a subtest's name
	Rule    string // the RFC and section, and the rule in a few words
	Request string // the raw bytes
	// Status is 200 for a request to be served (Request and Follow are
	// both answered 200), else the one status to answer before closing.
	Status int
	Alone  bool // sent without Follow (a head no CRLF CRLF ends)
}

// Bytes returns what the case sends: Request, then Follow unless Alone.
func (c Case) Bytes() string {
	if c.Alone {
		return c.Request
	}
	return c.Request + Follow
}

// Wanted returns the statuses Check expects, in order.
func (c Case) Wanted() []int {
	if c.Status == 200 && !c.Alone {
		return []int{200, 200}
	}
	return []int{c.Status}
}

// Check sends c to the server at addr on network ("tcp", "unix") in one
// write and reads its answers, for at most bound. It returns nil if the
// answers' statuses are c.Wanted() and, for a bad case, the server then
// closed the connection; an error saying what came otherwise (too many
// answers, too few, another status, the connection left open).
func Check(network, addr string, c Case, bound time.Duration) error {
	return check(network, addr, c, bound, 0)
}

// CheckTrickled is Check with c sent one byte at a time, every apart (so
// that a reader sees every prefix: the master's accept filter looks at
// each); a bad case's bytes stop at the first byte of an answer (the
// server closes then, and a write could reset the connection before the
// answer is read).
func CheckTrickled(network, addr string, c Case, bound, every time.Duration) error {
	return check(network, addr, c, bound, every)
}

func check(network, addr string, c Case, bound, every time.Duration) error {
	conn, err := net.DialTimeout(network, addr, bound)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(bound))
	r := bufio.NewReader(conn)
	if every == 0 {
		if _, err := io.WriteString(conn, c.Bytes()); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	} else {
		answered := make(chan struct{})
		stop := sync.OnceFunc(func() { close(answered) })
		defer stop()
		go trickle(conn, c.Bytes(), every, answered)
		if c.Status != 200 {
			r.Peek(1)
			stop()
		}
	}
	want := c.Wanted()
	got, err := answers(r, len(want), c.Status != 200)
	if err != nil || !slices.Equal(got, want) {
		return fmt.Errorf("got answers %v (%v), want %v", got, err, want)
	}
	return nil
}

// trickle writes b to w a byte at a time, every apart, until it is all
// written, a write fails, or answered is closed.
func trickle(w io.Writer, b string, every time.Duration, answered <-chan struct{}) {
	for i := range len(b) {
		select {
		case <-answered:
			return
		case <-time.After(every):
		}
		if _, err := io.WriteString(w, b[i:i+1]); err != nil {
			return
		}
	}
}

// answers reads responses from r: n of them, then (if toEOF) up to the end
// of the stream, where any further response is counted too. It returns the
// statuses and nil, or those read so far and what stopped it.
func answers(r *bufio.Reader, n int, toEOF bool) ([]int, error) {
	var got []int
	for len(got) < n || toEOF {
		if _, err := r.Peek(1); err != nil {
			if toEOF && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
				return got, nil // closed; reset if bytes we sent were left unread
			}
			return got, fmt.Errorf("after %d answers: %w", len(got), err)
		}
		resp, err := http.ReadResponse(r, &http.Request{Method: "GET"})
		if err != nil {
			return got, fmt.Errorf("answer %d: %w", len(got)+1, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
		if err != nil {
			return got, fmt.Errorf("answer %d body: %w", len(got), err)
		}
	}
	return got, nil
}
