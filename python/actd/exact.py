"""Exact reading: never read past the request served on a connection that
may go back to the master (docs/protocol.md, "Accept filters: pipelined and
partial next requests").

K needs no byte of the next request read. So on such a connection the
first read of each request peeks (MSG_PEEK), finds where the request ends
by the framing of docs/http.md, and reads no further than the whole
requests the peek shows. A next request that the peek shows not whole (the
children's rule, actd.screen.ready) is not read at all: NotWhole, and the
connection goes back to the master, which holds it until it is. The rule
is Go's (cmd/actd/httpd_exact.go); the cost is one recv(MSG_PEEK) per
request, but for a screening child's first, whose screen has peeked, and
its next ones, whose keep-alive wait peeked (actd.glance).
"""

import socket

from . import screen
from .screen import one_plain_head  # whole_span's shortcut, which a screening child takes first

PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT


class NotWhole(Exception):
    """The next request on a connection that may go back is not whole:
    none of it was read."""


def request_span(peek):
    """Return (span, whole) for the request at the start of peek: span its
    length, whole whether peek holds all of it. For one not whole, span is
    its length if its head tells it (Content-Length), else None: a head not
    yet whole, a chunked body whose end is not in peek, or a head the
    server answers with an error and a close."""
    body = screen.parse_body(peek)
    if body is None:
        return None, False
    head, length, chunked = body
    if chunked:
        end = screen.chunked_end(peek, head)
        return (end, True) if end > 0 else (None, False)
    return head + length, head + length <= len(peek)


def whole_span(peek):
    """Return how many bytes at the start of peek are whole requests, or,
    if not even the first is whole, its span (request_span). A peek that
    is one plain head (one_plain_head) is its own length, at once."""
    if one_plain_head(peek):
        return len(peek)
    return spans(peek)


def spans(peek):
    """whole_span's walk, request by request."""
    at = 0
    while at < len(peek):
        span, whole = request_span(peek[at:])
        if not whole:
            return span if at == 0 else at
        at += span
    return at


class Span:
    """How far the reads of the request in hand may go. begin() starts a
    request whose bytes are not in the reader's buffer; allowed() is the
    most the next read may take, took() counts what it took."""

    __slots__ = ("left", "start", "next", "prior", "prior_span")

    def __init__(self, seen=None, plain=False):
        """seen: what a peek just showed of the connection's first request
        (a screening child's, actd.screen.Screen.last), if any; the first
        read then needs no peek of its own. plain: seen is known to be
        one plain head (actd.screen.Screen.plain), its own span."""
        self.left = None  # bytes still allowed; None: no bound
        self.start = True  # the next read is a request's first: peek
        self.next = False  # ... of a next request, which may go back
        # the last peek found whole, and its span: a client that sends the
        # same requests again (a poll, a benchmark) costs a compare, not a
        # walk; kept for this connection only
        self.prior = self.prior_span = None
        if seen:
            self.start = False
            self.left = len(seen) if plain else whole_span(seen)

    def begin(self, peek=None):
        """Start a next request on the connection; peek: what a peek just
        showed of it (actd.glance: b"" for a client gone), if one did, so
        the first read need not peek again. Raises NotWhole for a next
        request that peek shows not whole."""
        self.next = True
        if peek is None:
            self.start = True
            return
        self.start = False
        self._bound(peek)

    def allowed(self, conn, size):
        """Return how many bytes (at most size) the next read from conn (an
        actd.connection.Connection) may take. Raises NotWhole for a next
        request that is not whole."""
        if self.start:
            self.start = False
            self._look(conn)
        if not self.left or self.left < 0:
            self.left = None  # none left, yet the framing wants more: read on
            return size
        return min(size, self.left)

    def took(self, n):
        """Count n bytes read."""
        if self.left is not None:
            self.left -= n

    def whole(self, buf):
        """Return whether buf, bytes read past the request served, is
        whole requests: else they are part of a next one."""
        return whole_span(buf) == len(buf)

    def _look(self, conn):
        try:
            peek = conn.sock.recv(screen.HEAD_LIMIT, PEEK)
        except BlockingIOError:
            peek = None
        except OSError:
            peek = b""  # the read that follows sees the fault
        self._bound(peek)

    def _bound(self, peek):
        """Set how far reads may go from peek (None: nothing came yet,
        b"": end of file or a fault); NotWhole as allowed's."""
        if not peek:
            self.left = None
            if peek is None and self.next:
                raise NotWhole("no byte of the next request yet")
            return
        if peek == self.prior:
            self.left = self.prior_span
            return
        span = whole_span(peek)
        whole = span is not None and 0 < span <= len(peek)
        if self.next and not whole and not screen.ready("http", peek):
            raise NotWhole("the next request is not whole")
        self.left = span
        if whole:
            self.prior, self.prior_span = peek, span
