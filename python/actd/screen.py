"""Children first under an accept filter: is an accepted connection ready?

A worker that announces the screen capability (protocol revision 4,
docs/protocol.md, "Accept filters: children first") accepts by itself
and looks at each connection at once: one whose request is there is
served, one that is not goes to the master (K), which holds it. The rule
is the master's own (prefork/acceptfilter, Filter.Ready; docs/http.md,
"What ends a head"); ready() is the one place it is written here, and
python/screen_test.go checks both against one table.
"""

import re
import socket

HEAD_LIMIT = 32768  # bytes looked at: acceptfilter.HeadLimit
LINE_LIMIT = 8192  # the longest request line (acceptfilter.LineLimit): a longer one is 414
FILTERS = ("data", "http")  # ACTD_ACCEPT_FILTER values a worker screens for
PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT
CRLF = b"\r\n"
# a method token, SP, a target of visible bytes, SP, HTTP/D.D
REQUEST_LINE = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [\x21-\x7e\x80-\xff]+ HTTP/[0-9]\.[0-9]")
# a bare LF, a bare CR, a control byte other than HTAB
FAULT = re.compile(rb"(?<!\r)\n|\r(?!\n|\Z)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

READY, WAIT, GONE = "ready", "wait", "gone"  # what look() finds


def ready(filter, head):
    """Return whether head, the bytes a client has sent so far, makes its
    connection ready under filter ("data" or "http").

    An empty head never is. data: any byte. http: HEAD_LIMIT bytes, or
    what head_ready() says.
    """
    if not head:
        return False
    return filter == "data" or len(head) >= HEAD_LIMIT or head_ready(bytes(head))


def head_ready(head):
    """Return whether head (bytes) can be answered at once (docs/http.md,
    "What ends a head"): it holds a whole head (CRLF CRLF after the request
    line, CRLFs before it skipped), or a fault no more bytes can mend (a
    bare LF or CR, a control byte other than HTAB, a malformed request line
    or one over LINE_LIMIT). False for one that may still become good, and
    for one that is nothing but CRLFs."""
    start = 0
    while head.startswith(CRLF, start):
        start += 2
    rest = head[start:]
    line = rest.find(CRLF)
    if line < 0:
        return len(rest) > LINE_LIMIT + 1 or FAULT.search(rest) is not None
    if line > LINE_LIMIT or not REQUEST_LINE.fullmatch(rest, 0, line):
        return True
    return rest.find(b"\r\n\r\n") >= 0 or FAULT.search(rest) is not None


class Screen:
    """Looks at accepted connections under one filter, with one buffer
    reused for every peek."""

    __slots__ = ("filter", "buf")

    def __init__(self, filter):
        self.filter = filter
        self.buf = bytearray(HEAD_LIMIT)

    def look(self, sock):
        """Peek at what sock's client has sent, without taking it.

        Returns READY if ready() says so; WAIT if not, or if nothing has
        come yet; GONE if the client has closed or the socket failed (the
        caller closes it).
        """
        try:
            n = sock.recv_into(self.buf, HEAD_LIMIT, PEEK)
        except BlockingIOError:
            return WAIT
        except OSError:
            return GONE
        if n == 0:
            return GONE
        return READY if ready(self.filter, bytes(memoryview(self.buf)[:n])) else WAIT
