package worker

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// acceptOne accepts one connection from listener fd and returns it as a
// blocking socket fd (close-on-exec), its peer recorded (peer.go), or -1
// when there is none (another child took it, or the client gave up). Resource errors (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) are returned for the caller to back off on; they leave the
// connection queued.
func acceptOne(fd int) (int, error) {
	for {
		nfd, err := accept4(fd)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ECONNABORTED):
			return -1, nil
		case err != nil:
			return -1, fmt.Errorf("accept: %w", err)
		}
		return nfd, nil
	}
}

// pause spaces out accept attempts after resource errors, so a child out of
// file descriptors does not spin: 10ms doubling up to 1s; a success resets it.
type pause time.Duration

func (p *pause) wait() {
	*p = pause(min(max(2*time.Duration(*p), 10*time.Millisecond), time.Second))
	time.Sleep(time.Duration(*p))
}

func (p *pause) reset() { *p = 0 }

// retry decides whether a child that has just served a connection tries to
// accept the next one at once instead of waiting for an event. Always, while
// such tries find connections; after one finds none, only after the next
// 1, 2, 4 ... 64 connections, so a pool that is not saturated pays one
// fruitless accept per 64 connections at most.
type retry struct{ skip, backoff int }

// due reports whether to try now.
func (r *retry) due() bool {
	if r.skip > 0 {
		r.skip--
		return false
	}
	return true
}

// record notes what a try found.
func (r *retry) record(found bool) {
	if found {
		r.backoff = 0
		return
	}
	r.backoff = min(max(2*r.backoff, 1), 64)
	r.skip = r.backoff
}

// accept4 is accept4(2) that records the peer's address (setPeer) without
// decoding it into a unix.Sockaddr: unix.Accept4 would, which costs an
// allocation and, for IPv4 and IPv6, a getsockopt(SO_PROTOCOL) per
// connection. The PROXY trust check and RemoteAddr then need no
// getpeername(2).
func accept4(fd int) (int, error) {
	var rsa unix.RawSockaddrAny
	size := uint32(unix.SizeofSockaddrAny)
	nfd, _, errno := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&size)), unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	setPeer(int(nfd), &rsa)
	return int(nfd), nil
}
