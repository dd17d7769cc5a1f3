"""The back-channel to the actd master (docs/protocol.md).

Every message is one SOCK_SEQPACKET packet: an 8-byte header (type, wire
format, listener, value) and, for a request report (R), up to MAX_TEXT
bytes of UTF-8 text.
"""

import os
import socket
import struct

HEADER = struct.Struct("!cBHI")  # type, wire format, listener (u16), value (u32)
WIRE = 1
MAX_TEXT = 248  # protocol.MaxText: a packet is at most 256 bytes
REVISION = 2  # the protocol revision this package is written for

# child -> master
HELLO, IDLE, BUSY, PONG, SERVED, REQUEST = b"H", b"I", b"B", b"O", b"S", b"R"
# master -> child
ACCEPT, PING, DRAIN = b"A", b"P", b"D"
EOF = b""  # receive's type when the master is gone


class Garbage(Exception):
    """The master sent something that is not a message of this protocol."""


class Channel:
    """The child's end of the back-channel.

    revision is the master's ACTD_PROTOCOL: a request report (R) goes out
    only to a master of revision 2 or later.
    """

    def __init__(self, sock, revision):
        self.sock = sock
        self.revision = revision
        self.fd = sock.fileno()

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

    def receive(self):
        """Return the master's next message as (type, listener, value).

        The type is EOF when the master is gone. Raises Garbage for a
        packet that is not an 8-byte message of wire format 1.
        """
        try:
            msg = self.sock.recv(64)
        except ConnectionResetError:
            msg = b""
        if not msg:
            return EOF, 0, 0
        if len(msg) != HEADER.size:
            raise Garbage(f"a {len(msg)}-byte packet, want {HEADER.size}: {msg!r}")
        kind, wire, listener, value = HEADER.unpack(msg)
        if wire != WIRE:
            raise Garbage(f"wire format {wire}, want {WIRE}")
        return kind, listener, value


def truncate(text):
    """Return text as UTF-8, at most MAX_TEXT bytes, cut between characters."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= MAX_TEXT:
        return raw
    return raw[:MAX_TEXT].decode("utf-8", "ignore").encode("utf-8")
