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

from .http import HEADS_SEEN, seen_request

HEAD_LIMIT = 32768  # bytes looked at: acceptfilter.HeadLimit
LINE_LIMIT = 8192  # the longest request line (acceptfilter.LineLimit): a longer one is 414
FILTERS = ("data", "http")  # ACTD_ACCEPT_FILTER values a worker screens for
PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT
CRLF = b"\r\n"
# a method token, SP, a target of visible bytes, SP, HTTP/D.D
REQUEST_LINE = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [\x21-\x7e\x80-\xff]+ HTTP/[0-9]\.[0-9]")
# a bare LF, a bare CR, a control byte other than HTAB: has_fault's rule
# as a regular expression (the tests check one against the other; a
# search costs about four times has_fault's count)
FAULT = re.compile(rb"(?<!\r)\n|\r(?!\n|\Z)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# the bytes has_fault deletes: every control byte but HTAB, CR and LF among them
CONTROLS = bytes(range(0x09)) + bytes(range(0x0a, 0x20)) + b"\x7f"
HEX = re.compile(rb"[0-9a-fA-F]*")
# a field name that can frame a body; where none is in the peek (most
# requests), body_whole need not parse the head (see names_framing)
FRAMING = re.compile(rb"content-length|transfer-encoding", re.IGNORECASE)

# one_plain_head's head: REQUEST_LINE, then field lines (no control byte
# but HTAB, none named content-length or transfer-encoding in any case,
# as parse_body splits names), then the empty line
PLAIN_HEAD = re.compile(REQUEST_LINE.pattern + rb"\r\n(?:(?!(?i:content-length|transfer-encoding)(?::|\r\n))"
                        rb"[\t\x20-\x7e\x80-\xff]+\r\n)*\r\n")

READY, WAIT, GONE = "ready", "wait", "gone"  # what look() finds


def ready(filter, head):
    """Return whether head, the bytes a client has sent so far (peeked
    right after accept, at most HEAD_LIMIT), makes its connection ready
    under filter ("data" or "http"): acceptfilter's Whole.

    An empty head never is. data: any byte. http: HEAD_LIMIT bytes, or
    what head_ready() says, and then the body rule: a request whose body
    body_whole() finds not all there is not ready.
    """
    if not head:
        return False
    if filter == "data":
        return True
    head = bytes(head)
    return (len(head) >= HEAD_LIMIT or head_ready(head)) and body_whole(head)


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
        return len(rest) > LINE_LIMIT + 1 or has_fault(rest)
    if line > LINE_LIMIT or not REQUEST_LINE.fullmatch(rest, 0, line):
        return True
    return rest.find(b"\r\n\r\n") >= 0 or has_fault(rest)


def has_fault(head):
    """Return whether head (bytes) holds a bare LF, a bare CR but at its
    end (a LF may follow), or a control byte other than HTAB: whether
    FAULT.search(head) finds one, counted in C. Deleting every control
    byte (CR and LF included) removes two bytes per CRLF and one for a
    last CR exactly when there is no fault."""
    gone = len(head) - len(head.translate(None, CONTROLS))
    return gone != 2 * head.count(CRLF) + head.endswith(b"\r")


def names_framing(peek):
    """Return whether peek names Content-Length or Transfer-Encoding in
    any case (FRAMING.search, with no regular expression: a search of a
    short head costs several times a lower() and two finds)."""
    low = peek.lower()  # find, not in: bytes' in tries the needle as an int first, an exception
    return low.find(b"content-length") >= 0 or low.find(b"transfer-encoding") >= 0


def one_plain_head(peek):
    """Return whether peek is one whole request head and nothing more, a
    good one that frames no body (most GETs): then it is ready, and its
    requests span all of it (actd.exact.whole_span), found with one
    anchored match (PLAIN_HEAD) instead of a parse of its fields: a
    request line head_ready takes, of at most LINE_LIMIT bytes, lines of
    visible bytes, spaces and tabs, none a Content-Length or
    Transfer-Encoding field (parse_body's names), and the empty line,
    within HEAD_LIMIT."""
    return (len(peek) <= HEAD_LIMIT and PLAIN_HEAD.fullmatch(peek) is not None
            and (len(peek) <= LINE_LIMIT or peek.find(CRLF) <= LINE_LIMIT))


def body_whole(peek):
    """Return whether the body the head at the start of peek announces is
    all within peek (docs/protocol.md, "The body rule"): True for no whole
    head, no body, or framing the server refuses at once (parse_body), and
    for a chunked body with a fault (chunked_end), and at once for a peek
    that names neither Content-Length nor Transfer-Encoding."""
    if not names_framing(peek):
        return True  # parse_body would find no body
    body = parse_body(peek)
    if body is None:
        return True
    head, length, chunked = body
    if chunked:
        return chunked_end(peek, head) != 0
    return len(peek) - head >= length


def parse_body(peek):
    """Return (head, length, chunked) for the whole, well framed head at
    the start of peek: head its bytes (CRLFs before the request line and
    the CRLF CRLF included), length its Content-Length (0: none), chunked
    whether it is Transfer-Encoding: chunked. None if peek holds no whole
    head, a fault of the head rule, or framing answered at once without
    a body: several Content-Length or a bad one, Transfer-Encoding with
    Content-Length, in HTTP/1.0, or other than chunked alone."""
    start = 0
    while peek.startswith(CRLF, start):
        start += 2
    end = peek.find(b"\r\n\r\n", start)
    if end < 0 or end + 4 > HEAD_LIMIT or head_ready(peek[:end + 2]):
        return None
    lines = peek[start:end].split(CRLF)
    http11 = lines[0].endswith(b"HTTP/1.1")
    lengths = codings = length = 0
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name, value = name.lower(), value.strip(b" \t")
        if name == b"content-length":
            lengths += 1
            length = int(value) if 0 < len(value) <= 18 and value.isdigit() else -1
        elif name == b"transfer-encoding":
            codings += 1
            chunked = value.lower() == b"chunked"
    if lengths > 1 or lengths == 1 and length < 0:
        return None
    if codings > 1 or codings == 1 and (lengths > 0 or not http11 or not chunked):
        return None
    return end + 4, length, chunked


def chunked_end(peek, at):
    """Scan the chunked body that starts at peek[at:]: return where it
    ends (after its last chunk, trailers and final CRLF) once peek holds
    it, -1 at a fault the server answers with 400 at once (a malformed
    chunk-size line, chunk data not followed by CRLF, a bare LF in a
    trailer line), or 0 while it may go on."""
    while True:
        line = peek.find(CRLF, at)
        if line < 0:
            return -1 if peek.find(b"\n", at) >= 0 or len(peek) - at > LINE_LIMIT else 0
        size = chunk_size(peek[at:line])
        if size is None:
            return -1
        at = line + 2
        if size == 0:
            return trailers_end(peek, at)
        if size > len(peek) - at - 2:
            return 0
        at += size
        if not peek.startswith(CRLF, at):
            return -1
        at += 2


def trailers_end(peek, at):
    """Return where the trailer section at peek[at:] ends (after its empty
    line), -1 at a bare LF, 0 while it may go on."""
    while True:
        line = peek.find(CRLF, at)
        if line < 0:
            return -1 if peek.find(b"\n", at) >= 0 or len(peek) - at > HEAD_LIMIT else 0
        if peek.find(b"\n", at, line) >= 0:
            return -1
        empty, at = line == at, line + 2
        if empty:
            return at


def chunk_size(line):
    """Return the size a chunk-size line (without its CRLF) starts with:
    1 to 16 hex digits, below 2**63, then anything (extensions); None for
    a line that does not start so, or holds a bare LF."""
    digits = HEX.match(line).end()
    if digits == 0 or digits > 16 or b"\n" in line:
        return None
    size = int(line[:digits], 16)
    return size if size < 1 << 63 else None


class Screen:
    """Looks at accepted connections under one filter. (Each peek is a
    recv of its own: into one reused buffer, the copy out of it cost more
    than the allocation recv makes.)"""

    __slots__ = ("filter", "last", "plain", "known")

    def __init__(self, filter):
        self.filter = filter
        self.last = b""  # what the last look peeked
        self.plain = False  # ... was one plain head (one_plain_head)
        self.known = None  # ... the Request http.parse kept for it, if it was one it had parsed (seen_request)

    def look(self, sock, rule=None):
        """Peek at what sock's client has sent, without taking it.

        Returns READY if ready() says so (or rule, a function of the bytes
        peeked, for a listener with a rule of its own: TLS's); WAIT if not,
        or if nothing has come yet; GONE if the client has closed or the
        socket failed (the caller closes it). What it peeked, if anything,
        stays in self.last (exact reading's first bound: actd.exact.Span),
        and self.plain says whether it was one plain head (one_plain_head:
        ready, and the bound is its length), the common case, judged first;
        self.known as judge sets it. A head http.parse kept (seen_request)
        costs no call more.
        """
        try:
            peek = sock.recv(HEAD_LIMIT, PEEK)
        except BlockingIOError:
            return WAIT
        except OSError:
            return GONE
        if not peek:
            return GONE
        if rule is None and self.filter == "http" and peek[-4:] == b"\r\n\r\n":
            known = HEADS_SEEN.get(peek[:-4])  # seen_request, inline
            if known is not None and not known.chunked and known.length == 0:
                self.last, self.plain, self.known = peek, True, known
                return READY
        return self.judge(peek, rule)

    def judge(self, peek, rule=None):
        """Return READY or WAIT for peek, bytes a client has sent (not
        empty), as look does, keeping them in self.last and self.plain:
        look's second half, for a peek taken elsewhere (after a PROXY
        header, by the same recv); self.known is the Request of a peek
        that is a head http.parse kept (actd.lean serves it)."""
        self.last = peek
        if rule is not None:
            self.plain, self.known = False, None
            return READY if rule(peek) else WAIT
        self.known = seen_request(peek) if self.filter == "http" else None
        self.plain = self.known is not None or (self.filter == "http" and one_plain_head(peek))
        return READY if self.plain or ready(self.filter, peek) else WAIT
