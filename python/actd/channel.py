"""The back-channel to the actd master (docs/protocol.md).

Every message is one SOCK_SEQPACKET packet: an 8-byte header (type, wire
format, listener, value) and, for a request report (R), up to MAX_TEXT
bytes of UTF-8 text. A connection handed over (C) or given back (K),
revision 3, has its file descriptor attached (SCM_RIGHTS); so has a
connection a screening child (revision 4) accepted and found not ready.
A response handed to the master (W) and one it gives back (U), revision 5,
carry two (the connection, the data) and a 16-byte trailer (offset,
length). From revision 6, between the master and a worker that announced
"proxy", a C or K may carry the client's address after its header, a W
or U after its trailer: UTF-8 text HOST:PORT, at most MAX_ADDRESS bytes,
present only when a PROXY header gave it.
"""

import array
import os
import socket
import struct
from collections import namedtuple

from .proxy import join as join_address, split as split_address

# The wire table, as package protocol has it up to REVISION (names: the Go
# names in upper case); protocol/languages_test.go checks that they agree.
HEADER = struct.Struct("!cBHI")  # type, wire format, listener (u16), value (u32)
WIRE = 1
MAX_TEXT = 248  # protocol.MaxText: a packet is at most 256 bytes
TRAILER = struct.Struct("!QQ")  # W and U, after the header: offset, length of the data
TRAILER_SIZE = 16
REVISION = 6  # the protocol revision this package is written for
HANDOFF = 1  # capability bit 0: takes C, may send K (revision 3)
SCREEN = 4  # capability bit 2: accepts by itself under a filter, K from any state (revision 4)
OFFLOAD = 8  # capability bit 3: may send W, takes U (revision 5)
PROXY = 16  # capability bit 4: reads PROXY headers, address trailers on C, K, W, U (revision 6)
TLS = 32  # capability bit 5: terminates TLS on the listeners in ACTD_TLS (revision 6)
CAP_PROXY, CAP_TLS = PROXY, TLS  # the same, should the Go names take the prefix
MAX_ADDRESS = 48  # bytes of an address trailer
NOT_READY = 1  # K's value for a connection accepted and found not ready; 0: kept alive, parked
KEEP_ALIVE = 1  # W's and U's value: park the connection once the data is sent; 0: close it
FD_SPACE = socket.CMSG_SPACE(2 * array.array("i").itemsize)  # room for two fds (U)

# child -> master
HELLO, IDLE, BUSY, PONG, SERVED, REQUEST = b"H", b"I", b"B", b"O", b"S", b"R"
KEEP = b"K"
WRITE = b"W"  # revision 5: finish this response (two fds, trailer)
TALLY = b"T"  # revision 6, optional: request counts since the last T (binary trailer: actd.tally)
# master -> child
ACCEPT, PING, DRAIN = b"A", b"P", b"D"
KEEP_ACCEPTING = 1  # an A's value: accept more on that listener after this one
CONNECTION = b"C"
UNSENT = b"U"  # revision 5: a W the master did not take: write it yourself
# master -> zygote (preload, revision 3), which says hello with CAP_FORK
FORK = b"F"
CAP_FORK = 2  # capability bit 1: takes F (actd.zygote)
EOF = b""  # receive's type when the master is gone


# What a U brings, as receive_fd returns it in place of a single fd: the
# connection and the data (file descriptors, the caller's to close), and
# the range of the data to send.
Unsent = namedtuple("Unsent", "conn data offset length")


class Garbage(Exception):
    """The master sent something that is not a message of this protocol."""


class Channel:
    """The child's end of the back-channel.

    revision is the master's ACTD_PROTOCOL: a request report (R) goes out
    only to a master of revision 2 or later; from revision 3 on the
    channel is read with recvmsg, for the connections C carries. proxy is
    set by a worker that announced the proxy capability: C and U may then
    carry an address, which receive_fd leaves in address.
    """

    def __init__(self, sock, revision):
        self.sock = sock
        self.revision = revision
        self.fd = sock.fileno()
        self.proxy = False  # address trailers are taken (the worker announced PROXY)
        self.address = None  # the last C's or U's address trailer, (host, port), or None

    @classmethod
    def from_environ(cls, environ=os.environ):
        """Return the channel named by ACTD_CHANNEL_FD and ACTD_PROTOCOL.

        Raises ValueError if either is missing or not a number.
        """
        fd = int(environ["ACTD_CHANNEL_FD"])
        return cls(socket.socket(fileno=fd), int(environ.get("ACTD_PROTOCOL", "1")))

    def send(self, kind, listener=0, value=0):
        """Send one header-only message; OSError if the master is gone."""
        self.sock.send(HEADER.pack(kind, WIRE, listener, value))

    def report_request(self, text):
        """Send R with text (a str), cut to MAX_TEXT bytes of UTF-8.

        Does nothing under a revision-1 master, which does not know R.
        """
        if self.revision < 2:
            return
        self.sock.send(HEADER.pack(REQUEST, WIRE, 0, 0) + truncate(text))

    def send_fd(self, kind, listener, fd, value=0, address=None):
        """Send one message with fd attached (K), and after its header
        address ((host, port) from a PROXY header, or None: none);
        OSError if the master is gone."""
        socket.send_fds(self.sock, [HEADER.pack(kind, WIRE, listener, value) + self._trailer(address)], [fd])

    def send_write(self, listener, keep_alive, conn_fd, data_fd, offset, length, address=None):
        """Send W: the master finishes the response on conn_fd (accepted on
        listener) with length bytes of data_fd from offset, then parks the
        connection if keep_alive, else closes it; address as send_fd's.
        The caller still closes its copies. OSError if the master is gone."""
        head = HEADER.pack(WRITE, WIRE, listener, KEEP_ALIVE if keep_alive else 0)
        trailer = TRAILER.pack(offset, length) + self._trailer(address)
        socket.send_fds(self.sock, [head + trailer], [conn_fd, data_fd])

    def _trailer(self, address):
        """Return the address trailer to send: address, if proxy is on."""
        if not address or not self.proxy:
            return b""
        raw = join_address(*address)
        if len(raw) > MAX_ADDRESS:
            raise ValueError(f"address {raw!r} over {MAX_ADDRESS} bytes")
        return raw

    def peek(self):
        """Return the type of the master's next message, leaving it to be
        read: EOF if the master is gone, None if no message waits."""
        try:
            head = self.sock.recv(HEADER.size, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return None
        except ConnectionResetError:
            return EOF
        return head[:1]

    def receive(self):
        """Return the master's next message as (type, listener, value).

        The type is EOF when the master is gone. Raises Garbage for a
        packet that is not an 8-byte message of wire format 1, or that
        carries a file descriptor (see receive_fd).
        """
        kind, listener, value, fd = self.receive_fd()
        if fd is not None:
            close_all(fd[:2] if isinstance(fd, Unsent) else [fd])
            raise Garbage(f"{kind!r} with a file descriptor")
        return kind, listener, value

    def receive_fd(self):
        """Return the master's next message as (type, listener, value, fd).

        fd is the file descriptor a C carries (blocking, close-on-exec, the
        caller's to close), an Unsent for a U, else None. The type is EOF
        when the master is gone. A C's or U's address trailer (when proxy
        is on) is left in address, as (host, port). Raises Garbage as receive does, for a C
        without exactly one file descriptor, a U without exactly two and
        its trailer, or another type with one.
        """
        msg, fds = self._read()
        self.address = None
        if not msg:
            close_all(fds)
            return EOF, 0, 0, None
        unsent = msg[:1] == UNSENT
        size, count = (HEADER.size + TRAILER_SIZE, 2) if unsent else (HEADER.size, 1)
        if (self.proxy and msg[:1] in (CONNECTION, UNSENT) and size < len(msg) <= size + MAX_ADDRESS
                and len(fds) == count):
            try:
                self.address, msg = split_address(msg[size:]), msg[:size]
            except (ValueError, UnicodeDecodeError):
                close_all(fds)
                raise Garbage(f"a bad address trailer: {msg!r}") from None
        if len(msg) != size or (fds and len(fds) != count) or (msg[:1] in (CONNECTION, UNSENT)) != bool(fds):
            close_all(fds)
            raise Garbage(f"a {len(msg)}-byte packet with {len(fds)} file descriptors: {msg!r}")
        try:
            kind, listener, value = self._unpack(msg[:HEADER.size])
        except Garbage:
            close_all(fds)
            raise
        if unsent:
            return kind, listener, value, Unsent(fds[0], fds[1], *TRAILER.unpack(msg[HEADER.size:]))
        return kind, listener, value, fds[0] if fds else None

    def _read(self):
        """Read one packet: (bytes, file descriptors), (b"", []) at EOF."""
        try:
            if self.revision < 3:
                return self.sock.recv(64), []
            # socket.recv_fds would do, but drops its flags argument (Python 3.11)
            msg, ancillary, flags, _ = self.sock.recvmsg(128, FD_SPACE, socket.MSG_CMSG_CLOEXEC)
        except ConnectionResetError:
            return b"", []
        if not ancillary and not flags & socket.MSG_CTRUNC:
            return msg, []  # most messages: no descriptor
        fds = array.array("i")
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        if flags & socket.MSG_CTRUNC:
            close_all(fds)
            raise Garbage("more than two file descriptors attached")
        return msg, list(fds)

    def _unpack(self, msg):
        kind, wire, listener, value = HEADER.unpack(msg)
        if wire != WIRE:
            raise Garbage(f"wire format {wire}, want {WIRE}")
        return kind, listener, value


def close_all(fds):
    for fd in fds:
        os.close(fd)


def truncate(text):
    """Return text as UTF-8, at most MAX_TEXT bytes, cut between characters."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= MAX_TEXT:
        return raw
    return raw[:MAX_TEXT].decode("utf-8", "ignore").encode("utf-8")
