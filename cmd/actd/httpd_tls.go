package main

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/actd/actd/prefork/worker"
)

// httpsHandler returns the built-in handler for connections on listeners
// that terminate TLS (--tls-cert): the library hands it each one as a
// *tls.Conn after the handshake (worker.ServeKeepFDTLS). It answers as
// httpHandler does, with the same framing rules, limits (--max-request-body
// included) and statuses (readRequestWith), the same access log, client
// address and /bytes/N and /files/NAME; but it keeps an idle keep-alive
// connection itself for keepAliveIdle (a TLS session never goes back to the
// master) and writes every response itself.
func httpsHandler(delay time.Duration, files string) worker.Handler {
	conn := &tlsConn{}
	h := newHandlerState(conn, files)
	ans, r, large, access, rules := h.ans, h.r, h.large, h.access, h.rules
	return func(c net.Conn) {
		conn.c = c
		client := clientText(c.RemoteAddr())
		ans.openAddr(c.RemoteAddr())
		access.openAddr(client)
		r.Reset(conn)
		for {
			worker.Yield()
			conn.begin()
			h.kind = ""
			rules.reset()
			again, status := readRequestWith(r, h.seen, rules)
			if status == 408 && conn.got == 0 && r.Buffered() == 0 {
				status = closeQuietly // idle, not slow
			}
			if status != 0 {
				if status != closeQuietly {
					access.done(status, int64(len(reasons[status])+1))
					c.Write(errorResponse(status))
				}
				return
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			var err error
			switch {
			case h.kind != "":
				err = large.write(c, h.kind, h.arg, again)
				access.done(large.status, large.sent)
			case again:
				_, err = c.Write(ans.keep)
				access.done(200, int64(ans.size))
			default:
				_, err = c.Write(ans.closing)
				access.done(200, int64(ans.size))
			}
			worker.Report("")
			if err != nil || !again {
				return
			}
		}
	}
}

// clientText is a as HOST:PORT for the access log and the replies, "-"
// for an address that is not TCP (a unix socket).
func clientText(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.String()
	}
	return "-"
}

// tlsConn bounds the reads of one request on a TLS connection as fdConn
// does a plain one's: each wait by keepAliveIdle, the whole request by
// requestDeadline; a read past either is errDeadline (408, or a quiet
// close if nothing came).
type tlsConn struct {
	c     net.Conn
	since time.Time
	got   int
}

func (t *tlsConn) begin() { t.since, t.got = time.Now(), 0 }

func (t *tlsConn) Read(p []byte) (int, error) {
	deadline := time.Now().Add(keepAliveIdle)
	if end := t.since.Add(requestDeadline); end.Before(deadline) {
		deadline = end
	}
	t.c.SetReadDeadline(deadline)
	n, err := t.c.Read(p)
	t.got += n
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return n, errDeadline
	}
	return n, err
}

// write answers a large-body request (kind, arg from route) on w.
func (b *bodies) write(w io.Writer, kind, arg string, keepAlive bool) error {
	if kind == "/bytes/" {
		b.status, b.sent = 404, 10 // notFound's, unless a body is sent
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || n > maxGenerated {
			_, err = w.Write(notFound(keepAlive))
			return err
		}
		b.status, b.sent = 200, int64(n)
		_, err = w.Write(b.generated(n, keepAlive))
		return err
	}
	b.status, b.sent = 404, 10
	if b.files == "" || arg == "" || strings.ContainsAny(arg, "/\\") || arg[0] == '.' {
		_, err := w.Write(notFound(keepAlive))
		return err
	}
	f, err := os.Open(filepath.Join(b.files, arg))
	if err != nil {
		_, err = w.Write(notFound(keepAlive))
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		_, err = w.Write(notFound(keepAlive))
		return err
	}
	b.status, b.sent = 200, st.Size()
	if _, err := w.Write(bodyHead(st.Size(), keepAlive)); err != nil {
		return err
	}
	n, err := io.CopyN(w, f, st.Size())
	if err == nil && n < st.Size() {
		err = io.ErrUnexpectedEOF
	}
	return err
}
