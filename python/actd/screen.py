"""Children first under an accept filter: is an accepted connection ready?

A worker that announces the screen capability (protocol revision 4,
docs/protocol.md, "Accept filters: children first") accepts by itself
and looks at each connection at once: one whose request is there is
served, one that is not goes to the master (K), which holds it. The rule
is the master's own (prefork/acceptfilter, Filter.Ready); ready() is the
one place it is written here.
"""

import socket

HEAD_LIMIT = 32768  # bytes looked at: acceptfilter.HeadLimit
FILTERS = ("data", "http")  # ACTD_ACCEPT_FILTER values a worker screens for
PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT

READY, WAIT, GONE = "ready", "wait", "gone"  # what look() finds


def ready(filter, head):
    """Return whether head, the bytes a client has sent so far, makes its
    connection ready under filter ("data" or "http").

    data: any byte. http: an empty line (the end of a request head,
    "\\n\\r\\n" or "\\n\\n") is there, or HEAD_LIMIT bytes came (the
    server then answers the head that is too long). An empty head is
    never ready.
    """
    if filter == "data" or len(head) >= HEAD_LIMIT:
        return len(head) > 0
    return b"\n\r\n" in head or b"\n\n" in head


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
        return READY if ready(self.filter, self.buf[:n]) else WAIT
