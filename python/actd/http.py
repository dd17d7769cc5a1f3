"""HTTP/1.x requests read from a socket: heads, bodies, and what is wrong.

The parser keeps the framing rules every actd worker kind keeps
(docs/http.md, checked by the corpus in internal/conformance): it is strict
where leniency has served request smuggling (two Content-Length values,
Content-Length with Transfer-Encoding, a space before a colon, folded header
lines, bare LF or CR, a missing or repeated Host) and answers such requests
with 400; it takes what RFC 9112 asks servers to take (empty lines before
the request line, absolute-form targets, chunk extensions, trailers). A head
that can no longer become good is answered at once, without waiting for its
CRLF CRLF, as actd's accept filter hands it over at once.
"""

import fcntl
import re
import sys
import termios
from urllib.parse import unquote_to_bytes

HEAD_LIMIT = 32768  # bytes of a request head, empty lines before it and its CRLF CRLF included
LINE_LIMIT = 8192  # bytes of the request line, without its CRLF
FIELD_LIMIT = 100  # header fields in one request
CHUNK_LINE_LIMIT = 4096
READ_SIZE = 65536
# parse remembers fields it split (up to FIELDS_SEEN_LIMIT fields of at
# most FIELD_SEEN_SIZE characters): Host, User-Agent, Accept... come again
FIELDS_SEEN = {}
FIELDS_SEEN_LIMIT = 1024
FIELD_SEEN_SIZE = 256
NOT_REMEMBERED = frozenset(("AUTHORIZATION", "PROXY-AUTHORIZATION", "COOKIE"))
# parse remembers the Requests it made from whole heads (up to
# HEADS_SEEN_LIMIT of at most HEAD_SEEN_SIZE bytes), but for a target
# with a query or fields NOT_REMEMBERED: a benchmark, a health check, a
# client polling one URL send one head again and again
HEADS_SEEN = {}
HEADS_SEEN_LIMIT = 1024
HEAD_SEEN_SIZE = 1024
# and the header fields of a head (after its request line), likewise
# bounded, with no fields NOT_REMEMBERED: many targets, one client's fields
BLOCKS_SEEN = {}
NO_FIELDS = ({}, 0)  # a head of a request line alone: no fields, no Host

TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
TOKEN_STR = re.compile(TOKEN.pattern.decode("ascii"))
VERSION = re.compile(rb"HTTP/(\d)\.(\d)")
BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
BAD_TARGET = re.compile(rb"[\x00-\x20\x7f]")
# a chunk-size line: the size, then spaces and extensions of visible bytes
CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[\t\x20-\x7e\x80-\xff]*)?")
# what no head may hold: a bare CR (but at the end: a LF may follow), a
# bare LF, a control byte but HTAB
HEAD_FAULT = re.compile(rb"\r(?=[^\n])|(?<!\r)\n|^\n|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# parse's fast path: a request line and header fields (each with its CRLF)
# that the checks below would all pass; anything else goes the slow way.
REQUEST_LINE = re.compile(rb"(" + TOKEN.pattern + rb") ([^\x00-\x20\x7f]+) HTTP/1\.([0-9])")
FIELDS = re.compile(rb"(?:" + TOKEN.pattern + rb":[^\x00-\x08\x0a-\x1f\x7f]*\r\n)*")


class BadRequest(Exception):
    """A request the server answers with status and closes the connection."""

    status = "400 Bad Request"


class HeadTooLarge(BadRequest):
    status = "431 Request Header Fields Too Large"


class ContentTooLarge(BadRequest):
    status = "413 Content Too Large"


class LineTooLong(BadRequest):
    status = "414 URI Too Long"


class BadVersion(BadRequest):
    status = "505 HTTP Version Not Supported"


class BadCoding(BadRequest):
    status = "501 Not Implemented"


class ClientGone(Exception):
    """The client closed the connection, or stopped sending, mid-request."""


def queued(conn):
    """Return whether bytes wait in the receive queue of conn (a
    Connection), without taking them (FIONREAD); True if it cannot tell
    (the read that follows will)."""
    try:
        n = fcntl.ioctl(conn.fd, termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return True
    return int.from_bytes(n, sys.byteorder) > 0


class Reader:
    """Buffered reads from a connection (anything with recv(n), such as an
    actd.connection.Connection); pipelined bytes stay in buf. With exact
    (an actd.exact.Span), no read goes past the whole requests a peek
    shows."""

    __slots__ = ("conn", "buf", "exact")

    def __init__(self, conn, exact=None):
        self.conn = conn
        self.buf = b""
        self.exact = exact  # an actd.exact.Span on a connection that may go back

    def fill(self):
        """Read more into buf; False at EOF. Raises ClientGone on a timeout
        or a reset, actd.exact.NotWhole for a next request not whole."""
        size = self.exact.allowed(self.conn, READ_SIZE) if self.exact else READ_SIZE
        try:
            data = self.conn.recv(size)
        except (BlockingIOError, TimeoutError, ConnectionError) as err:
            raise ClientGone(str(err)) from None
        self.buf += data
        if self.exact:
            self.exact.took(len(data))
        return bool(data)

    def head(self, limit=HEAD_LIMIT):
        """Return the next request head, without its final CRLF CRLF.

        Returns None if the client closed the connection (or sent nothing but
        empty lines) before a request began. Raises HeadTooLarge past limit,
        LineTooLong for a long request line, BadRequest (or BadVersion) as
        soon as the bytes in show a head that can no longer be good,
        ClientGone at EOF mid-head.
        """
        if not self.buf and not self.fill():
            return None
        buf = self.buf
        end = buf.find(b"\r\n\r\n")
        if 0 < end <= LINE_LIMIT and end <= limit - 4 and buf[0] != 13:  # whole, short, no CRLF first
            self.buf = buf[end + 4:]
            return buf[:end]
        skipped = 0  # empty lines (CRLF) before the request line
        while True:
            while self.buf.startswith(b"\r\n"):
                self.buf = self.buf[2:]
                skipped += 2
            buf = self.buf
            end = buf.find(b"\r\n\r\n")
            if not 0 <= end <= min(LINE_LIMIT, limit - skipped - 4):  # else its lines are short enough
                check_size(buf, len(buf) if end < 0 else end + 4, limit - skipped)
            if end >= 0:
                self.buf = buf[end + 4:]
                return buf[:end]
            check_partial(buf)
            if not self.fill():
                if self.buf.strip(b"\r\n"):
                    raise ClientGone("closed in the middle of a request head")
                return None

    def read(self, n):
        """Return 1 to n bytes; raises ClientGone at EOF."""
        if not self.buf and not self.fill():
            raise ClientGone("closed in the middle of a request body")
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def line(self, limit):
        """Return one CRLF-ended line without its CRLF; BadRequest past limit."""
        while True:
            end = self.buf.find(b"\r\n")
            if end > limit:
                raise BadRequest(f"a line over {limit} bytes in a chunked body")
            if end >= 0:
                line, self.buf = self.buf[:end], self.buf[end + 2:]
                return line
            if len(self.buf) > limit:
                raise BadRequest(f"a line over {limit} bytes in a chunked body")
            if not self.fill():
                raise ClientGone("closed in the middle of a chunked body")


def check_size(buf, size, limit):
    """Raise LineTooLong or HeadTooLarge if the head in buf[:size] (or its
    start) is too long."""
    first = buf.find(b"\r\n", 0, size)
    if (first < 0 and size > LINE_LIMIT + 1) or first > LINE_LIMIT:
        raise LineTooLong(f"request line over {LINE_LIMIT} bytes")
    if size > limit:
        raise HeadTooLarge(f"request head over {limit} bytes")


def check_partial(buf):
    """Raise BadRequest (or BadVersion) if buf, the start of a head, can no
    longer become a good one: a bare CR or LF, a control byte, a bad
    request line."""
    if HEAD_FAULT.search(buf):
        raise BadRequest("bare CR or LF, or a control byte, in a request head")
    first = buf.find(b"\r\n")
    if first >= 0:
        request_line(buf[:first])


class Request:
    """One parsed request head. Header names are upper case with "-", values
    str (latin-1, as PEP 3333 has them); repeated fields are joined with ",".
    Nobody changes a Request once made (parse may hand it out again, then
    seen is True; its headers may be another's), but env: a dict of the environ keys the request alone
    sets, kept by actd.wsgi for a request seen."""

    __slots__ = ("method", "target", "version", "headers", "length", "chunked",
                 "keep_alive", "expect_continue", "seen", "env")

    def __init__(self, method, target, version, headers):
        self.method, self.target, self.version, self.headers = method, target, version, headers
        if "TRANSFER-ENCODING" in headers or "CONTENT-LENGTH" in headers:
            self.length, self.chunked = body_framing(headers, version)
        else:
            self.length, self.chunked = 0, False
        self.keep_alive = wants_keep_alive(headers, version)
        self.expect_continue = ("EXPECT" in headers and version == "HTTP/1.1" and
                                headers["EXPECT"].lower() == "100-continue")
        self.seen = False
        self.env = None

    def has_body(self):
        return self.chunked or self.length > 0

    def describe(self):
        """Return "METHOD target" without the query (it may carry tokens),
        as reported to the master."""
        return f"{self.method} {self.target.partition('?')[0]}"

    def split_target(self):
        """Return (path, query) of the target; the path percent-decoded
        into latin-1 as PEP 3333's PATH_INFO (each byte one character)."""
        target = self.target
        if not target.startswith("/") and "://" in target:  # absolute-form
            rest = target.split("://", 1)[1]
            slash = rest.find("/")
            target = rest[slash:] if slash >= 0 else "/"
        path, _, query = target.partition("?")
        if "#" in path:
            path = path.partition("#")[0]
        if "#" in query:
            query = query.partition("#")[0]
        if "%" in path:
            path = unquote_to_bytes(path.encode("latin-1")).decode("latin-1")
        return path, query


def parse(head):
    """Return the Request in head (bytes, without the final CRLF CRLF).

    Raises BadRequest (or a subclass) for anything malformed. A head
    parsed before may give the same Request (HEADS_SEEN).
    """
    request = HEADS_SEEN.get(head)
    if request is not None:
        return request
    line, crlf, fields = head.partition(b"\r\n")
    first = REQUEST_LINE.fullmatch(line)
    if first is None:
        return parse_strictly(head)  # something is wrong: find out what
    block = BLOCKS_SEEN.get(fields) if crlf else NO_FIELDS
    if block is None:
        if fields.count(b"\r\n") >= FIELD_LIMIT or FIELDS.fullmatch(fields + crlf) is None:
            return parse_strictly(head)
        block = split_fields(fields)
    headers, hosts = block
    method, target, minor = first.groups()
    version = "HTTP/1.0" if minor == b"0" else "HTTP/1.1"
    check_host(hosts, version)
    request = Request(method.decode("ascii"), target.decode("latin-1"), version, headers)
    if (len(head) <= HEAD_SEEN_SIZE and len(HEADS_SEEN) < HEADS_SEEN_LIMIT and target.find(b"?") < 0
            and NOT_REMEMBERED.isdisjoint(headers)):
        HEADS_SEEN[head] = request
        request.seen = True
    return request


def seen_plain(peek):
    """Return whether peek is a head parse gave a Request for before
    (HEADS_SEEN) of a request without a body, its CRLF CRLF, and nothing
    more: then it is ready under the screen's rule and its own span, as
    actd.screen.one_plain_head would find at several times the cost."""
    return seen_request(peek) is not None


def seen_request(peek):
    """Return the Request of peek if seen_plain(peek), else None."""
    if peek[-4:] != b"\r\n\r\n":
        return None
    request = HEADS_SEEN.get(peek[:-4])
    if request is None or request.chunked or request.length != 0:
        return None
    return request


def split_fields(fields):
    """Return (headers, hosts) of the header fields of a head parse found
    good (bytes, CRLF between them): the NAME: value dict, and how many
    named Host; remember them in BLOCKS_SEEN if short, unless they carry
    credentials (NOT_REMEMBERED)."""
    headers = {}
    hosts = 0
    for field in fields.decode("latin-1").split("\r\n"):
        name, value = FIELDS_SEEN.get(field) or split_field(field)
        if name in headers:
            value = headers[name] + "," + value
        headers[name] = value
        hosts += name == "HOST"
    if (len(fields) <= HEAD_SEEN_SIZE and len(BLOCKS_SEEN) < HEADS_SEEN_LIMIT
            and NOT_REMEMBERED.isdisjoint(headers)):
        BLOCKS_SEEN[fields] = headers, hosts
    return headers, hosts


def split_field(field):
    """Return (NAME, value) of a header field parse found good; remember
    it in FIELDS_SEEN if short (most requests repeat their fields), unless
    it carries credentials (NOT_REMEMBERED), which outlive no request."""
    name, _, value = field.partition(":")
    got = name.upper(), value.strip(" \t")
    if (len(field) <= FIELD_SEEN_SIZE and len(FIELDS_SEEN) < FIELDS_SEEN_LIMIT
            and got[0] not in NOT_REMEMBERED):
        FIELDS_SEEN[field] = got
    return got


def parse_strictly(head):
    """Return the Request in head as parse does, checking line by line;
    raises what the first fault calls for."""
    lines = head.split(b"\r\n")
    method, target, version = request_line(lines[0])
    if len(lines) - 1 > FIELD_LIMIT:
        raise HeadTooLarge(f"more than {FIELD_LIMIT} header fields")
    headers = {}
    hosts = 0
    for line in lines[1:]:
        name, value = header_field(line)
        if name in headers:
            value = headers[name] + "," + value
        headers[name] = value
        hosts += name == "HOST"
    check_host(hosts, version)
    return Request(method, target, version, headers)


def check_host(hosts, version):
    """Raise BadRequest unless Host came once (HTTP/1.1) or at most once
    (HTTP/1.0): RFC 9112 3.2."""
    if hosts > 1 or (hosts == 0 and version == "HTTP/1.1"):
        raise BadRequest("Host missing or repeated")


def request_line(line):
    """Return (method, target, version) of a request line, as str."""
    parts = line.split(b" ")
    if len(parts) != 3:
        raise BadRequest("malformed request line")
    method, target, version = parts
    if not TOKEN.fullmatch(method):
        raise BadRequest("malformed method")
    if not target or BAD_TARGET.search(target):
        raise BadRequest("malformed request target")
    m = VERSION.fullmatch(version)
    if not m:
        raise BadRequest("malformed HTTP version")
    if m.group(1) != b"1":
        raise BadVersion(f"{version.decode()} not supported")
    version = "HTTP/1.1" if m.group(2) != b"0" else "HTTP/1.0"
    return method.decode("ascii"), target.decode("latin-1"), version


def header_field(line):
    """Return (NAME, value) of one header line."""
    name, colon, value = line.partition(b":")
    if not colon or not TOKEN.fullmatch(name):
        raise BadRequest("malformed header field")  # also folded lines, a space before ":"
    value = value.strip(b" \t")
    if BAD_VALUE.search(value):
        raise BadRequest("control character in a header value")
    return name.decode("ascii").upper(), value.decode("latin-1")


def body_framing(headers, version):
    """Return (length, chunked): how the body is delimited (RFC 9112 6.3)."""
    coding = headers.get("TRANSFER-ENCODING")
    length = headers.get("CONTENT-LENGTH")
    if coding is not None:
        if length is not None:
            raise BadRequest("both Transfer-Encoding and Content-Length")
        if version == "HTTP/1.0":
            raise BadRequest("Transfer-Encoding in an HTTP/1.0 request")
        check_codings(coding)
        return 0, True
    if length is None:
        return 0, False
    if not length.isdigit() or not length.isascii():
        raise BadRequest("malformed Content-Length")  # also two values ("3,3")
    if len(length) > 18:
        raise ContentTooLarge("Content-Length over 18 digits")
    return int(length), False


def check_codings(coding):
    """Raise unless coding, the Transfer-Encoding values joined with ",",
    is chunked alone: BadRequest if chunked is not last, or comes twice, or
    a coding is empty (RFC 9112 6.3); BadCoding for another coding before
    chunked (none is decoded)."""
    codings = [c.strip(" \t").lower() for c in coding.split(",")]
    if codings[-1] != "chunked" or "chunked" in codings[:-1] or not all(map(TOKEN_STR.fullmatch, codings)):
        raise BadRequest(f"Transfer-Encoding {coding!r}: chunked must be the last coding, once")
    if len(codings) > 1:
        raise BadCoding(f"Transfer-Encoding {coding!r}: only chunked is supported")


def wants_keep_alive(headers, version):
    """Return whether the client asks for the connection to stay open."""
    tokens = headers.get("CONNECTION", "").lower()
    if version == "HTTP/1.1":
        return "close" not in tokens
    return "keep-alive" in tokens


class Body:
    """wsgi.input: the request body, decoded, ending at its end (EOF).

    More data comes from next_piece(), a subclass's; before the first
    read, on_first_read() (Expect: 100-continue) is called once.
    """

    def __init__(self, reader, on_first_read=None):
        self.reader = reader
        self.on_first_read = on_first_read
        self.buf = b""
        self.done = False
        self.error = None  # the BadRequest the body ended with: raised again on every read

    def _more(self):
        if self.error is not None:
            raise self.error
        if self.on_first_read is not None:
            self.on_first_read()
            self.on_first_read = None
        try:
            piece = self.next_piece()
        except BadRequest as err:
            self.error = err
            raise
        if not piece:
            self.done = True
        self.buf += piece

    def read(self, size=-1):
        while not self.done and (size is None or size < 0 or len(self.buf) < size):
            self._more()
        if size is None or size < 0:
            size = len(self.buf)
        data, self.buf = self.buf[:size], self.buf[size:]
        return data

    def readline(self, size=-1):
        while not self.done and b"\n" not in self.buf and (size is None or size < 0 or len(self.buf) < size):
            self._more()
        end = self.buf.find(b"\n") + 1 or len(self.buf)
        if size is not None and size >= 0:
            end = min(end, size)
        line, self.buf = self.buf[:end], self.buf[end:]
        return line

    def readlines(self, hint=-1):
        lines, total = [], 0
        for line in self:
            lines.append(line)
            total += len(line)
            if hint is not None and 0 < hint <= total:
                break
        return lines

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def finished(self):
        """Return whether the whole body has been read from the socket."""
        return self.done and not self.buf

    def discard(self, limit):
        """Read and drop what the application left, up to limit bytes.

        Returns True if the body ended so (the connection may carry another
        request), False if more is left, the body was never asked for, or
        it ended with an error (a BadRequest: the connection must close).
        """
        if self.on_first_read is not None or self.error is not None:
            return False  # 100 Continue not sent: the client may not send it
        self.buf = b""
        while not self.done and limit > 0:
            self._more()
            limit -= len(self.buf)
            self.buf = b""
        return self.done


class EmptyBody:
    """wsgi.input of a request without a body: at its end from the start,
    and without state, so that one (EMPTY) serves every such request and
    none costs an object of its own."""

    __slots__ = ()

    def read(self, size=-1):
        return b""

    def readline(self, size=-1):
        return b""

    def readlines(self, hint=-1):
        return []

    def __iter__(self):
        return self

    def __next__(self):
        raise StopIteration

    def finished(self):
        return True

    def discard(self, limit):
        return True


EMPTY = EmptyBody()


class LengthBody(Body):
    """A body of Content-Length bytes."""

    def __init__(self, reader, length, on_first_read=None):
        super().__init__(reader, on_first_read)
        self.remaining = length
        self.done = length == 0

    def next_piece(self):
        if self.remaining <= 0:
            return b""
        piece = self.reader.read(min(self.remaining, READ_SIZE))
        self.remaining -= len(piece)
        return piece


class ChunkedBody(Body):
    """A body in chunked transfer coding; trailer fields are read and dropped.

    With max_body (bytes; None: no limit), a chunk that would take the
    body past it raises ContentTooLarge before any of its data is read.
    """

    def __init__(self, reader, on_first_read=None, head_limit=HEAD_LIMIT, max_body=None):
        super().__init__(reader, on_first_read)
        self.left = 0  # bytes left in the current chunk
        self.head_limit = head_limit
        self.room = max_body  # bytes the chunks still to come may hold; None: no limit

    def next_piece(self):
        if self.left == 0:
            self.left = self._chunk_size()
            if self.left == 0:
                self._trailers()
                return b""
            if self.room is not None:
                self.room -= self.left
                if self.room < 0:
                    raise ContentTooLarge("a chunked body over the request body limit")
        piece = self.reader.read(min(self.left, READ_SIZE))
        self.left -= len(piece)
        if self.left == 0 and self.reader.line(2) != b"":
            raise BadRequest("chunk data longer than its size")
        return piece

    def _chunk_size(self):
        line = CHUNK_LINE.fullmatch(self.reader.line(CHUNK_LINE_LIMIT))
        if line is None:
            raise BadRequest("malformed chunk-size line")
        return int(line.group(1), 16)

    def _trailers(self):
        total = 0
        while True:
            line = self.reader.line(self.head_limit)
            if not line:
                return
            header_field(line)
            total += len(line)
            if total > self.head_limit:
                raise HeadTooLarge("trailer fields too large")
