"""A client connection: reads and writes under the server's --timeout.

A connection's first read polls the socket first, for at most the timeout:
a child that waited for connections usually accepts one before its request
is in (unless the request is known to be there: a screening child peeked,
or the master handed the connection over once it was). Every later read and write usually can go ahead at once (the rest
of a request follows its head, a response fits the socket's send buffer):
each is tried without waiting (MSG_DONTWAIT), so it costs its one system
call, and only one that would wait polls. A client that stalls so holds the child no longer than the
timeout per read or write, and a quick one costs no setsockopt
(SO_RCVTIMEO, SO_SNDTIMEO) and no kernel timer. sendfile(2), which cannot
be tried so, runs under SO_SNDTIMEO, set when a response first uses it.

A connection whose PROXY header was peeked, not read (actd.worker:
ahead) reads it with the request's first bytes, in one recv, and drops
it.

A response's last write may instead hand the rest to the master when the
client stops taking bytes for actd.offload.PATIENCE (send_last,
sendfile_last): the socket is then the master's.
"""

import errno
import os
import select
import socket
import struct

from .offload import PATIENCE

DONTWAIT = socket.MSG_DONTWAIT
INET = (socket.AF_INET, socket.AF_INET6)


class Connection:
    """One connected stream socket, borrowed: the caller closes it.

    timeout is in seconds (0: none); arrived: bytes are known to be there,
    so the first read need not poll; ahead: bytes before the request (a
    PROXY header known to be in) that the first read takes and drops. A read or write that waited that long raises
    BlockingIOError (as one under SO_RCVTIMEO or SO_SNDTIMEO does); one
    the client reset raises ConnectionError.
    """

    __slots__ = ("sock", "fd", "timeout", "read", "armed", "streaming", "ahead")

    def __init__(self, sock, timeout, arrived=False, ahead=0):
        self.sock = sock
        self.fd = sock.fileno()
        self.timeout = timeout
        self.ahead = ahead  # bytes the first read drops
        self.read = arrived and not ahead  # the first read is done, or need not poll
        self.armed = False  # SO_SNDTIMEO is set, for sendfile
        self.streaming = False  # TCP_NODELAY is set

    def pending(self):
        """Return bytes read off the socket but not yet returned (TLS's)."""
        return 0

    def recv(self, size):
        """Return 1 to size bytes, or b"" at end of file."""
        if not self.read:
            self.read = True
            if self.ahead:
                return self._past_ahead(size)
            self._wait(select.POLLIN)
        while True:
            try:
                return self.sock.recv(size, DONTWAIT)
            except BlockingIOError:
                self._wait(select.POLLIN)

    def _past_ahead(self, size):
        """The first read: the ahead bytes (in already) and 1 to size
        bytes after them, which are returned; b"" at end of file. One
        recv, almost always: a balancer sends the request with its
        header."""
        ahead, self.ahead = self.ahead, 0
        try:
            data = self.sock.recv(ahead + size, DONTWAIT)
        except BlockingIOError:  # cannot be, as the header is in; but wait if so
            return self._rest_of_ahead(b"", ahead, size)
        if len(data) > ahead:
            return data[ahead:]
        if not data:
            return b""
        return self._rest_of_ahead(data, ahead, size)

    def _rest_of_ahead(self, data, ahead, size):
        """_past_ahead's end when its recv found data, no more than the
        ahead bytes: read on, waiting as recv does, until a byte past
        them comes (returned, up to size) or the client closes (b"")."""
        while len(data) <= ahead:
            try:
                more = self.sock.recv(ahead + size - len(data), DONTWAIT)
            except BlockingIOError:
                self._wait(select.POLLIN)
                continue
            if not more:
                return b""
            data += more
        return data[ahead:]

    def sendall(self, data):
        """Send all of data (bytes)."""
        try:
            sent = self.sock.send(data, DONTWAIT)
        except BlockingIOError:
            sent = 0
        if sent == len(data):
            return
        rest = memoryview(data)[sent:]
        while rest:
            self._wait(select.POLLOUT)
            try:
                rest = rest[self.sock.send(rest, DONTWAIT):]
            except BlockingIOError:
                pass

    def send_last(self, data, finish):
        """Send all of data (bytes), the end of a response; if the client
        takes no byte for PATIENCE, offer the rest to finish (a callable
        taking a memoryview). Returns True if finish took it (then the
        connection is the master's), False once all is sent."""
        try:
            sent = self.sock.send(data, DONTWAIT)
        except BlockingIOError:
            sent = 0
        rest = memoryview(data)[sent:]
        while rest:
            if not self._ready(select.POLLOUT, PATIENCE):
                if finish(rest):
                    return True
                self._wait(select.POLLOUT)
            try:
                rest = rest[self.sock.send(rest, DONTWAIT):]
            except BlockingIOError:
                pass
        return False

    def sendfile_last(self, file, count, finish):
        """sendfile, for the end of a response: if the client takes no byte
        for PATIENCE, offer the rest to finish(fd, offset, length). Returns
        (bytes sent, whether finish took the rest). The socket is
        non-blocking meanwhile, and stays so once the master has it."""
        self.no_delay()
        source, start = file.fileno(), file.tell()
        sent, taken = 0, False
        os.set_blocking(self.fd, False)
        try:
            while sent < count:
                try:
                    n = os.sendfile(self.fd, source, start + sent, count - sent)
                except BlockingIOError:
                    if not self._ready(select.POLLOUT, PATIENCE):
                        taken = finish(source, start + sent, count - sent)
                        if taken:
                            break
                        self._wait(select.POLLOUT)
                    continue
                if n == 0:
                    break
                sent += n
        finally:
            if not taken:
                os.set_blocking(self.fd, True)
            file.seek(start + sent)
        return sent, taken

    def _ready(self, event, seconds):
        """Return whether the socket is ready for event within seconds."""
        p = select.poll()
        p.register(self.fd, event)
        return bool(p.poll(seconds * 1000))

    def _wait(self, event):
        """Wait until the socket is ready for event; BlockingIOError after
        the timeout."""
        p = select.poll()
        p.register(self.fd, event)
        if not p.poll(self.timeout * 1000 if self.timeout > 0 else None):
            raise BlockingIOError(errno.EAGAIN, f"no progress in {self.timeout:g} s")

    def sendfile(self, file, count):
        """Send count bytes of file (a regular file) from its position with
        sendfile(2), and move the position past what went; return that.
        Fewer if the file ends first."""
        self._arm()
        self.no_delay()
        source, start = file.fileno(), file.tell()
        sent = 0
        try:
            while sent < count:
                n = os.sendfile(self.fd, source, start + sent, count - sent)
                if n == 0:
                    break
                sent += n
        finally:
            file.seek(start + sent)
        return sent

    def no_delay(self):
        """Turn Nagle's algorithm off before a response's second send: a
        small segment must not wait for the client's delayed ACK. A response
        sent in one piece (most are) needs no such system call."""
        if not self.streaming:
            self.streaming = True
            if self.sock.family in INET:
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _arm(self):
        if not self.armed:
            self.armed = True
            timeval = struct.pack("ll", int(self.timeout), int(self.timeout % 1 * 1e6))
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
