"""What the adapter tells the journal: priorities for its stderr, and
entries of its own (Native, for the access log).

A child's stderr is the master's, the journal when actd runs as a service:
each line becomes an entry at priority 6 (info), so an application's
traceback would be a run of info entries that `journalctl -p err` never
shows. journald reads a "<N>" prefix on a line as that line's priority
(SyslogLevelPrefix=, on by default), but only a stream that is the
journal should get one: systemd names it in JOURNAL_STREAM
("DEVICE:INODE" of the stream it connected), which a child inherits with
the master's stderr. Elsewhere (a terminal, a file, a pipe) lines stay as
they are.

Native sends whole entries, with fields of their own, over journald's
native protocol (the access log, and error: an application's exception as
one entry holding the whole traceback) (systemd's "Native Journal Protocol"): one datagram per
entry to SOCKET, each field KEY=value and a newline, or, for a value with
a newline, KEY, a newline, its length as a little-endian u64, the value
and a newline.
"""

import os
import socket
import struct
import sys

ERR = 3  # syslog priority of an error
IDENTIFIER = "actd"  # SYSLOG_IDENTIFIER: what the journal names the master's stream, and so the adapter's stderr


def prefix(stream, priority, environ=os.environ):
    """Return "<priority>" if stream is the journal (JOURNAL_STREAM names
    its device and inode), else ""."""
    want = environ.get("JOURNAL_STREAM", "")
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return ""
    return f"<{priority}>" if want == f"{st.st_dev}:{st.st_ino}" else ""


def lines(text, tag):
    """Return text with tag before each of its lines."""
    if not tag:
        return text
    return "".join(tag + line for line in text.splitlines(keepends=True))


SOCKET = "/run/systemd/journal/socket"


def encode(fields):
    """Return the datagram for fields, (NAME, value str) pairs."""
    out = []
    for name, value in fields:
        raw = value.encode("utf-8", "surrogateescape")
        if b"\n" in raw:
            out += (name.encode("ascii"), b"\n", struct.pack("<Q", len(raw)), raw, b"\n")
        else:
            out += (name.encode("ascii"), b"=", raw, b"\n")
    return b"".join(out)


class Native:
    """A datagram socket to the journal."""

    def __init__(self, sock):
        self.sock = sock

    @classmethod
    def connect(cls, path=SOCKET):
        """Return a Native connected to path, or None if there is no
        journal there. The socket is close-on-exec."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            return None
        return cls(sock)

    def send(self, fields):
        """Send one entry; False if the journal did not take it (gone, or
        the entry too large for a datagram)."""
        try:
            self.sock.send(encode(fields))
        except OSError:
            return False
        return True


def error(text, fields=(), stream=None, environ=os.environ):
    """Log text (an error and its traceback) at priority err. When stream
    (default sys.stderr) is the journal, text is one native entry with
    fields, (NAME, value str) pairs, besides MESSAGE, PRIORITY and
    SYSLOG_IDENTIFIER; when the journal's socket does not take it (gone, or
    the entry too large), or stream is not the journal, text goes to
    stream in one write, each line prefixed "<3>" if stream is the journal,
    as is otherwise."""
    stream = stream or sys.stderr
    tag = prefix(stream, ERR, environ)
    if tag and _send((("MESSAGE", text.rstrip("\n")), ("PRIORITY", str(ERR)),
                      ("SYSLOG_IDENTIFIER", IDENTIFIER), *fields)):
        return
    stream.write(lines(text, tag))
    stream.flush()


def _send(fields):
    """Send one entry on a socket of its own (errors are rare: none is
    kept, so none is shared across a fork); False if it was not taken."""
    native = Native.connect(SOCKET)
    if native is None:
        return False
    try:
        return native.send(fields)
    finally:
        native.sock.close()
