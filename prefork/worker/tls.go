package worker

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// TLS termination (docs/protocol.md, "TLS"). Under a master of revision 6
// that names listeners in ACTD_TLS, Serve, ServeEnv, Listener and
// ServeKeepFDTLS load each listener's certificate from the memfd the
// master passed, announce the tls capability, and serve the connections
// of those listeners through crypto/tls: TLS 1.2 at least, Go's default
// ciphers, ALPN http/1.1, a handshake bounded by HandshakeTimeout. Such a
// connection is never given back to the master (Keep) nor handed over to
// finish (Finish reports ErrNoOffload for it). ServeFD and ServeKeepFD
// handle plain fds only: under ACTD_TLS their hello has no tls, and the
// master refuses them (exit 78).

// HandshakeTimeout bounds a TLS handshake, from the connection's accept:
// a client that has not finished it by then is closed.
const HandshakeTimeout = 10 * time.Second

// tlsSince is the protocol revision that added protocol.CapTLS.
const tlsSince = 6

// terminator is the TLS configuration of each listener that terminates
// TLS, by listener index.
type terminator map[int]*tls.Config

// on returns listener l's configuration, nil if it serves plain.
func (t terminator) on(l int) *tls.Config { return t[l] }

// parseTLSEnv reads EnvTLS: space-separated INDEX=FD entries. It returns
// nil for an unset or empty value, or an error naming the variable.
func parseTLSEnv(v string, listeners int) (map[int]int, error) {
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return nil, nil
	}
	m := make(map[int]int, len(fields))
	for _, f := range fields {
		i, fd, ok := strings.Cut(f, "=")
		l, err1 := strconv.Atoi(i)
		n, err2 := strconv.Atoi(fd)
		if !ok || err1 != nil || err2 != nil || l < 0 || l >= listeners || n < 0 {
			return nil, fmt.Errorf("%s=%q: want INDEX=FD entries for listeners 0 to %d", protocol.EnvTLS, v, listeners-1)
		}
		m[l] = n
	}
	return m, nil
}

// loadTLS reads the certificates env.TLS names (below revision 6: none)
// and closes their memfds. It returns nil, nil for none, or an error
// naming the listener whose certificate does not load.
func (e Env) loadTLS() (terminator, error) {
	if len(e.TLS) == 0 || e.Revision < tlsSince {
		return nil, nil
	}
	t := terminator{}
	for l, fd := range e.TLS {
		pem, err := preadAll(fd)
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate of listener %d (fd %d): %w", l, fd, err)
		}
		cert, err := tls.X509KeyPair(pem, pem)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate of listener %d (fd %d): %w", l, fd, err)
		}
		t[l] = &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"http/1.1"},
		}
	}
	return t, nil
}

// preadAll reads file fd from offset 0 with pread (its offset is shared
// with every other child's copy).
func preadAll(fd int) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size)
	for done := 0; done < len(buf); {
		n, err := unix.Pread(fd, buf[done:], int64(done))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf[:done], nil
		}
		done += n
	}
	return buf, nil
}

// handshake runs tc's server handshake within HandshakeTimeout.
func handshake(tc *tls.Conn) error {
	tc.SetDeadline(time.Now().Add(HandshakeTimeout))
	ctx, cancel := context.WithTimeout(context.Background(), HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return err
	}
	return tc.SetDeadline(time.Time{})
}

// serveTLS is serveEnvKeep for a server that can take TLS connections:
// it loads env's certificates, and tls turns the server of plain
// connections h into one that serves listener l's through TLS with cfg.
func serveTLS(ctx context.Context, env Env, h connServer, keep keepServer, tls func(h connServer, t terminator) connServer) error {
	t, err := env.loadTLS()
	if err != nil {
		return err
	}
	if t != nil {
		env.tls, h = t, tls(h, t)
	}
	return serveEnvKeep(ctx, env, h, keep)
}

// tlsServer returns h's server for the connections of the listeners t
// names (those of others go to plain): each is a conn with a TLS server
// session over it, h called after the handshake, closed after h returns.
func (h Handler) tlsServer(plain connServer, t terminator) connServer {
	w := newWakers()
	return func(fd, l int) {
		cfg := t.on(l)
		if cfg == nil {
			plain(fd, l)
			return
		}
		c := newConn(fd, w, nil)
		if c == nil {
			return
		}
		defer c.Close()
		tc := tls.Server(c, cfg)
		if handshake(tc) != nil {
			return
		}
		h(tc)
		tc.Close()
	}
}

// ServeKeepFDTLS is ServeKeepFD for a server that also terminates TLS:
// the connections of listeners that terminate TLS go to tlsHandler after
// the handshake, as a *tls.Conn; the others to h. opts are h's choices
// (ReadsHeader).
func ServeKeepFDTLS(ctx context.Context, h KeepFDHandler, tlsHandler Handler, opts ...Option) error {
	env, err := FromEnv()
	if err != nil {
		return err
	}
	env.readsHeader = has(opts, ReadsHeader)
	return serveTLS(ctx, env, h.server(), h.keeper(), tlsHandler.tlsServer)
}

// listenerConn returns the conn Accept hands out for fd, accepted on
// listener l: fd's conn, or a TLS session over it after its handshake;
// nil, with fd closed and the close told, if the handshake failed.
func (l *listener) listenerConn(fd, li int) net.Conn {
	c := newConn(fd, l.wake, l.closed)
	if c == nil {
		return nil
	}
	cfg := l.tls.on(li)
	if cfg == nil {
		return c
	}
	tc := tls.Server(c, cfg)
	if err := handshake(tc); err != nil {
		c.Close()
		<-l.closed
		return nil
	}
	return tc
}

// terminates reports whether listener l's connections are TLS ones,
// which never go back to the master.
func (e Env) terminates(l int) bool { return e.tls.on(l) != nil }
