"""The keep-alive wait of a connection that may go back to the master, in
one system call.

Between two requests on such a connection (a screening child's, docs/
protocol.md, "Accept filters: children first") the worker waits
GIVE_BACK_GRACE for the next request, gives the connection back (K) if
none came, and else peeks at it for exact reading (actd.exact) before it
reads. glance() does both in one blocking recv(MSG_PEEK): the socket is
blocking, and SO_RCVTIMEO, set once a connection (at its first wait, so
a connection closed after one request never pays for it), bounds the
peek to the grace; EAGAIN means "idle: give it back". No other read of
the adapter waits on SO_RCVTIMEO: actd.connection reads with
MSG_DONTWAIT and polls for what is left of --timeout, and
actd.exact's own peeks do not wait.

A poll would also have watched the back-channel. The master's orders
there (a ping, a "register again", a drain, its end) are rare, so
instead the kernel says when one comes: Hearing sets O_ASYNC on the
channel, and SIGIO sets a flag the wait looks at (actd.worker's
wait_next takes the poll then, which reads them as before).
"""

import fcntl
import os
import signal
import socket
import struct

from .screen import HEAD_LIMIT

GIVE_BACK_GRACE = 0.001  # seconds a connection that may go back may keep its child idle
GRACE = struct.pack("ll", 0, int(GIVE_BACK_GRACE * 1e6))  # SO_RCVTIMEO's timeval


def glance(sock, armed):
    """Wait up to GIVE_BACK_GRACE for the next request on sock (a
    blocking socket) and return what came, without taking it; armed: its
    SO_RCVTIMEO is set already (else it is set here).

    Returns None if nothing came (the connection is idle), b"" if the
    client closed or broke the connection (the read that follows sees
    which), else 1 to HEAD_LIMIT bytes.
    """
    if not armed:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, GRACE)
    try:
        return sock.recv(HEAD_LIMIT, socket.MSG_PEEK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


class Hearing:
    """Whether the master has said something on the back-channel since
    the last look: SIGIO, which the kernel sends the process when a
    message (or end of file) comes on the channel fd. spoken is the flag;
    the caller clears it before it reads the channel."""

    def __init__(self, fd):
        """Ask for SIGIO on fd, to this process. Raises OSError if fd is
        not a socket the kernel signals for."""
        self.spoken = True  # until the first look: whatever came before
        signal.signal(signal.SIGIO, self._heard)
        fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)

    def _heard(self, signum, frame):
        self.spoken = True
