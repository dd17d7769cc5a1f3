"""A client connection: reads and writes under the server's --timeout.

Nearly every read and write on a connection can go ahead at once: the
request is in when the child accepts it, and a response fits the socket's
send buffer. Those cost one system call each (MSG_DONTWAIT). Only when one
would wait does the connection set the kernel's timeouts (SO_RCVTIMEO,
SO_SNDTIMEO) on the socket, once, and block under them: a client that
stalls still holds the child no longer than the timeout per read or
write, and a quick one costs no setsockopt at all.
"""

import os
import socket

DONTWAIT = socket.MSG_DONTWAIT
INET = (socket.AF_INET, socket.AF_INET6)


class Connection:
    """One connected stream socket, borrowed: the caller closes it.

    timeval is the timeout as struct timeval bytes (SO_RCVTIMEO's format).
    Errors are the socket's: BlockingIOError when a read or write waited
    the whole timeout, ConnectionError when the client reset.
    """

    __slots__ = ("sock", "fd", "timeval", "armed", "streaming")

    def __init__(self, sock, timeval):
        self.sock = sock
        self.fd = sock.fileno()
        self.timeval = timeval
        self.armed = False  # the kernel's timeouts are set
        self.streaming = False  # TCP_NODELAY is set

    def recv(self, size):
        """Return 1 to size bytes, or b"" at end of file."""
        try:
            return self.sock.recv(size, DONTWAIT)
        except BlockingIOError:
            self._arm()
            return self.sock.recv(size)

    def sendall(self, data):
        """Send all of data (bytes)."""
        try:
            sent = self.sock.send(data, DONTWAIT)
        except BlockingIOError:
            sent = 0
        if sent < len(data):
            self._arm()
            self.sock.sendall(memoryview(data)[sent:])

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
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, self.timeval)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, self.timeval)
