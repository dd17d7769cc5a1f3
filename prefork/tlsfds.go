package prefork

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// tlsFiles is one generation's certificates as its children get them: per
// listener that terminates TLS, a sealed memfd holding the chain PEM then
// the key PEM (docs/protocol.md, "TLS"). Each reload makes its own from
// the files it read; the generation a reload replaced keeps its own until
// the next reload (abandon.go may restore it).
type tlsFiles struct {
	on  []bool // per listener: it terminates TLS
	fds []int  // the memfds, in listener order, one per listener on
}

// newTLSFiles makes the memfds for cfg.TLS on listeners. It returns a
// *FieldError for a certificate that names no listener, or an error if a
// memfd cannot be made (none is left open then).
func newTLSFiles(certs map[string][]byte, listeners []*listener) (tlsFiles, error) {
	which, err := tlsFor(certs, listeners)
	if err != nil {
		return tlsFiles{}, err
	}
	t := tlsFiles{on: make([]bool, len(listeners))}
	for i, pem := range which {
		if pem == nil {
			continue
		}
		fd, err := sealedMemfd("actd-tls-"+listeners[i].Name, pem)
		if err != nil {
			t.close()
			return tlsFiles{}, fmt.Errorf("certificate for listener %s: %w", listeners[i].Name, err)
		}
		t.on[i], t.fds = true, append(t.fds, fd)
	}
	return t, nil
}

// sealedMemfd returns a close-on-exec memfd holding data, sealed against
// any change.
func sealedMemfd(name string, data []byte) (int, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, fmt.Errorf("memfd_create: %w", err)
	}
	for done := 0; done < len(data); {
		n, err := unix.Pwrite(fd, data[done:], int64(done))
		if err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("write memfd: %w", err)
		}
		done += n
	}
	seals := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("seal memfd: %w", err)
	}
	return fd, nil
}

// close closes t's memfds (children have their own copies).
func (t *tlsFiles) close() {
	for _, fd := range t.fds {
		unix.Close(fd)
	}
	t.fds = nil
}

// names returns the names of the listeners that terminate TLS, as a
// --tls-cert value shows them: "NAME" or "NAME,NAME".
func (t tlsFiles) names(listeners []*listener) string {
	var names []string
	for i, on := range t.on {
		if on {
			names = append(names, listeners[i].Name)
		}
	}
	return strings.Join(names, ",")
}

// any reports whether a listener terminates TLS.
func (t tlsFiles) any() bool { return len(t.fds) > 0 }

// onListener reports whether listener l terminates TLS.
func (t tlsFiles) onListener(l int) bool { return l >= 0 && l < len(t.on) && t.on[l] }

// env returns the EnvTLS entry for children whose first TLS memfd is at
// fd first, or "" for no TLS.
func (t tlsFiles) env(first int) string {
	var entries []string
	for i, on := range t.on {
		if on {
			entries = append(entries, strconv.Itoa(i)+"="+strconv.Itoa(first+len(entries)))
		}
	}
	if len(entries) == 0 {
		return ""
	}
	return protocol.EnvTLS + "=" + strings.Join(entries, " ")
}

// unfitTLS refuses the hello of child s when a listener terminates TLS and
// s did not announce protocol.CapTLS (abandon.go: at start the pool stops,
// exit 78 naming tls-cert; a reload's generation is abandoned). It
// reports whether it did.
func (p *Pool) unfitTLS(s *slot) bool {
	if !p.spec.tls.any() || s.caps.Has(protocol.CapTLS) {
		return false
	}
	p.unfit(s, &FieldError{Field: "tls-cert", Value: p.spec.tls.names(p.listeners),
		Allowed: fmt.Sprintf("unset for this worker: child %d (pid %d) does not terminate TLS (its hello announces %v, "+
			"no tls capability: docs/protocol.md, \"TLS\"); drop --tls-cert and --tls-key, or run a worker of protocol revision 6 "+
			"that terminates TLS (the built-in handler, the Go library's Serve or Listener, python3 -m actd.wsgi, plackup -s Actd)",
			s.num, s.pid, s.caps)})
	return true
}

// helloLook is the holder's look at head, the bytes a connection on a
// TLS listener sent so far: the ClientHello rule, and no body.
func (h *holder) helloLook(head []byte) look {
	if acceptfilter.HelloReady(head) {
		return isReady
	}
	return notYet
}

// tlsKept closes what child s gave back (Keep) or handed over to finish
// (Write) on a TLS listener, unless it is a connection not ready (Keep
// with NotReady, before its handshake): the master can neither hold nor
// finish a TLS session. It reports whether it did.
func (p *Pool) tlsKept(s *slot, m protocol.Message, fds [2]int) bool {
	if !p.spec.tls.onListener(int(m.Listener)) || m.Type == protocol.Keep && m.Value == protocol.NotReady {
		return false
	}
	closeFDs(fds)
	p.log.Warn("a TLS connection was given back; closed it (a worker that announces tls keeps its TLS connections)",
		"slot", s.num, "pid", s.pid, "listener", m.Listener, "message", m.Type.String())
	return true
}
