"""start_response and the response on the wire (PEP 3333, RFC 9112).

The body is framed by the application's Content-Length if it gave one, by
the length of a one-element list or tuple (most frameworks return one),
else chunked for HTTP/1.1 and by closing the connection for HTTP/1.0.

With a finisher (actd.offload.Finisher), the write that ends a framed
body (a one-element body sent with its head, or a regular file's
sendfile) may hand the rest to the master when the client reads slowly;
the response is then finished, and the connection the master's.
"""

import os
import time
from email.utils import formatdate

HOP_BY_HOP = frozenset(("CONNECTION", "KEEP-ALIVE", "PROXY-AUTHENTICATE", "PROXY-AUTHORIZATION",
                        "TE", "TRAILERS", "TRANSFER-ENCODING", "UPGRADE"))
NO_BODY = ("1", "204", "304")  # statuses (prefixes) that have no body
# what _send_head does with a response header, by its name: NAME_KINDS
# keeps the answer for the names seen (up to NAME_KINDS_LIMIT), so a
# response costs no str.upper() per header
PLAIN, LENGTH, CONNECTION, HOP = "plain", "length", "connection", "hop"
NAME_KINDS = {}
NAME_KINDS_LIMIT = 1024
# start_response's checks remember what they found good (exact types
# only), up to CHECKED_LIMIT statuses and headers, and headers only with
# a value of at most REMEMBERED_VALUE characters
GOOD_STATUSES = set()
GOOD_HEADERS = set()
CHECKED_LIMIT = 1024
REMEMBERED_VALUE = 256
# _send_head's heads by what makes them (status, version, HEAD or not,
# keep-alive asked, length unknown, a body refused, the headers), built
# once each (build_head), up to HEADS_LIMIT of them, none with Set-Cookie
HEADS = {}
HEADS_LIMIT = 1024
# the Content-Length field (with its CRLF) of each body length sent, up
# to HEADS_LIMIT of them: a lookup, not a bytes % per response
CONTENT_LENGTHS = {}


class Response:
    """One response: start_response's state and the bytes that go out on
    conn (an actd.connection.Connection).

    keep_alive starts as what the request asked for and ends as whether
    the connection may carry another request.
    """

    __slots__ = ("conn", "request", "keep_alive", "status", "headers", "sent", "length",
                 "chunked", "no_body", "written", "finisher", "body")

    def __init__(self, conn, request, keep_alive, finisher=None, body=None):
        self.conn = conn
        self.request = request
        self.keep_alive = keep_alive
        self.status = None
        self.headers = None
        self.sent = False  # the head went out
        self.length = None  # Content-Length the application gave, or None
        self.chunked = False
        self.no_body = False  # HEAD, 1xx, 204, 304: the body is not sent
        self.written = 0  # body bytes sent (or handed to the master)
        self.finisher = finisher  # the connection's actd.offload.Finisher, or None
        self.body = body  # the request's actd.http.Body, or None

    def start_response(self, status, headers, exc_info=None):
        """PEP 3333's start_response; returns the write callable."""
        if exc_info:
            try:
                if self.sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.status is not None:
            raise AssertionError("start_response called a second time without exc_info")
        self.status = check_status(status)
        self.headers = check_headers(headers)
        return self.write

    def write(self, data):
        """Send data (bytes) as part of the body, the head first if need be."""
        if self.status is None:
            raise AssertionError("write() before start_response()")
        if not self.sent:
            self._send_head(data, None)
            return
        self._send_body(data)

    def finish(self, result):
        """Send the application's iterable result and end the response."""
        for data in result:
            if not data:
                continue
            if not self.sent:
                self._send_head(data, one_length(result))
            else:
                self._send_body(data)
        self.end()

    def send_file(self, wrapper):
        """Send a wsgi.file_wrapper's file with sendfile(2) if it is a
        regular file; False if it is not (then it is iterated)."""
        size = file_size(wrapper.filelike)
        if size is None:
            return False
        if not self.sent:
            self._send_head(b"", size)
        if self.chunked or self.no_body:
            return False
        count = size if self.length is None else min(size, self.length - self.written)
        if count <= 0:
            return True
        if self.finisher is None or self.length is None or count < self.length - self.written:
            self.written += self.conn.sendfile(wrapper.filelike, count)
            return True
        sent, taken = self.conn.sendfile_last(wrapper.filelike, count, self._finish_file)
        self.written += count if taken else sent
        return True

    def _finish_file(self, fd, offset, length):
        return self.finisher.file(fd, offset, length, self._parks())

    def _finish_bytes(self, rest):
        return self.finisher.bytes(rest, self._parks())

    def _parks(self):
        """Return whether the master may park the connection once it has
        sent the rest: the response leaves it open, and the request's
        body is read whole."""
        return self.keep_alive and (self.body is None or self.body.done)

    def finished(self):
        """Return whether the response went to the master (a finisher's)."""
        return self.finisher is not None and self.finisher.done

    def end(self):
        """Send the head if not yet sent, and the last chunk if chunked."""
        if not self.sent:
            self._send_head(b"", 0)
        elif self.chunked and not self.no_body:
            self.conn.no_delay()
            self.conn.sendall(b"0\r\n\r\n")

    def _send_head(self, first, known):
        """Send the head with first, the start of the body; known is the
        whole body's length if known so. A head like an earlier one (its
        status, headers and framing) is taken from HEADS, built once."""
        request, body = self.request, self.body
        key = (self.status, request.version, request.method == "HEAD", self.keep_alive,
               known is None, body is not None and body.error is not None, *self.headers)
        head = HEADS.get(key)
        if head is None:
            try:
                head = build_head(key)  # a bad Content-Length raises here, nothing sent: 500
            except UnicodeEncodeError:
                self.sent = True  # as a head that could not go out whole: the connection closes
                raise
        self.sent = True
        start, fields, tail, self.keep_alive, self.no_body, self.chunked, length, sends_known = head
        if sends_known:  # its length is the one known
            length = known
            fields += CONTENT_LENGTHS.get(known) or content_length(known)
        self.length = length
        data = b"".join((start, date_line(), fields, tail, self._body_bytes(first)))
        if self.finisher is not None and self._ends_body():
            self.conn.send_last(data, self._finish_bytes)
            return
        self.conn.sendall(data)

    def _ends_body(self):
        """Return whether what is sent so far ends a body framed by its
        length (not a HEAD's, nor one of a status without body)."""
        return not self.no_body and self.length is not None and self.written >= self.length > 0

    def _send_body(self, data):
        """Send data as part of the body; nothing once the response went
        to the master (more than its Content-Length: dropped anyway)."""
        if data and not self.no_body and not self.finished():
            self.conn.no_delay()
            self.conn.sendall(self._body_bytes(data))

    def _body_bytes(self, data):
        if not isinstance(data, bytes):
            raise TypeError(f"the application gave {type(data).__name__}, want bytes")
        if self.no_body:
            return b""
        if self.chunked:
            self.written += len(data)
            return b"%x\r\n%s\r\n" % (len(data), data) if data else b""
        if self.length is not None:
            data = data[:max(0, self.length - self.written)]  # never more than it said
        self.written += len(data)
        return data

    def complete(self):
        """Return whether the body sent matches its Content-Length."""
        return self.chunked or self.length is None or self.no_body or self.written >= self.length


def name_kind(name):
    """Return what a response header called name is: LENGTH
    (Content-Length), CONNECTION, HOP (another hop-by-hop field, dropped),
    or PLAIN (sent as given)."""
    key = name.upper()
    if key == "CONTENT-LENGTH":
        kind = LENGTH
    elif key == "CONNECTION":
        kind = CONNECTION
    else:
        kind = HOP if key in HOP_BY_HOP else PLAIN
    if len(NAME_KINDS) < NAME_KINDS_LIMIT:
        NAME_KINDS[name] = kind
    return kind


def build_head(key):
    """Return the Head of a response that key (as _send_head makes it)
    describes, and keep it in HEADS if there is room. A Head is (start,
    fields, tail, keep_alive, no_body, chunked, length, sends_known):
    the status line, the header fields up to the framing ones, and the
    framing fields with the empty line, as bytes; then what the
    response's attributes become; sends_known: the length known is sent
    as Content-Length after fields (and is the length), so the Head of
    a known-length body serves every length."""
    status, version, head_method, keep_alive, unknown, body_error = key[:6]
    lines = []
    length = None
    for name, value in key[6:]:
        kind = NAME_KINDS.get(name) or name_kind(name)
        if kind is not PLAIN:
            if kind is LENGTH:
                length = int(value)
            else:
                if kind is CONNECTION and "close" in value.lower():
                    keep_alive = False
                continue
        lines += (name, ": ", value, "\r\n")
    if body_error:
        keep_alive = False  # the application answered a body refused (413, 400): close
    no_status_body = status.startswith(NO_BODY)
    no_body = no_status_body or head_method
    known = length is None and not unknown and not no_status_body
    chunked = False
    tail = []
    if length is None and not known and not no_body:
        if version == "HTTP/1.1":
            chunked = True
            tail.append("Transfer-Encoding: chunked\r\n")
        else:
            keep_alive = False
    if not keep_alive:
        tail.append("Connection: close\r\n")
    elif version == "HTTP/1.0":
        tail.append("Connection: keep-alive\r\n")
    tail.append("\r\n")
    head = (f"{version} {status}\r\n".encode("latin-1"), "".join(lines).encode("latin-1"),
            "".join(tail).encode("latin-1"), keep_alive, no_body, chunked, length, known)
    if len(HEADS) < HEADS_LIMIT and not any(name.upper() == "SET-COOKIE" for name, _ in key[6:]):
        HEADS[key] = head  # but a cookie set, which outlives no response
    return head


def content_length(n):
    """Return the Content-Length field of n bytes, with its CRLF, and keep
    it in CONTENT_LENGTHS if there is room."""
    line = b"Content-Length: %d\r\n" % n
    if len(CONTENT_LENGTHS) < HEADS_LIMIT:
        CONTENT_LENGTHS[n] = line
    return line


def one_length(result):
    """Return the body's length if result is a one-element list or tuple."""
    if type(result) in (list, tuple) and len(result) == 1 and isinstance(result[0], bytes):
        return len(result[0])
    return None


def check_status(status):
    """Return status if it is "NNN Reason"; AssertionError otherwise.
    A status found good is remembered (GOOD_STATUSES)."""
    if type(status) is str and status in GOOD_STATUSES:
        return status
    if type(status) is not str or len(status) < 4 or not status[:3].isdigit() or status[3] != " ":
        raise AssertionError(f"status {status!r}: want a str like \"200 OK\"")
    if "\r" in status or "\n" in status:
        raise AssertionError("status with a line break")
    remember(GOOD_STATUSES, status)
    return status


def check_headers(headers):
    """Return headers if it is a list of (str, str) without line breaks;
    AssertionError otherwise. A header found good is remembered
    (GOOD_HEADERS): most responses repeat their predecessors' headers,
    and cost a lookup each."""
    if type(headers) is not list:
        raise AssertionError(f"headers are a {type(headers).__name__}, want a list")
    try:
        for item in headers:
            if type(item) is not tuple or item not in GOOD_HEADERS:
                check_header(item)
    except TypeError:  # an unhashable item: check_header says what is wrong
        for item in headers:
            check_header(item)
    return headers


def check_header(item):
    """Raise AssertionError unless item is a (str, str) tuple without line
    breaks, NUL, or a colon in the name; remember it if good."""
    if type(item) is not tuple or len(item) != 2:
        raise AssertionError(f"header {item!r}: want a (name, value) tuple")
    name, value = item
    if type(name) is not str or type(value) is not str:
        raise AssertionError(f"header {item!r}: want str name and value")
    if (":" in name or "\r" in name or "\n" in name or "\0" in name
            or "\r" in value or "\n" in value or "\0" in value):
        raise AssertionError(f"header {item!r}: line break or colon")
    if len(value) <= REMEMBERED_VALUE:
        remember(GOOD_HEADERS, item)


def remember(good, item):
    """Add item to good, a set of things found good, unless it holds
    CHECKED_LIMIT already."""
    if len(good) < CHECKED_LIMIT:
        good.add(item)


def file_size(filelike):
    """Return the bytes left in filelike if it is a regular file, else None."""
    try:
        fd = filelike.fileno()
        st = os.fstat(fd)
        pos = filelike.tell()
    except (AttributeError, OSError, ValueError):
        return None
    if not (st.st_mode & 0o170000 == 0o100000):
        return None
    return max(0, st.st_size - pos)


_date = [0, b""]


def date_line():
    """Return the Date header field with its CRLF, as bytes, made once a
    second."""
    now = int(time.time())
    if _date[0] != now:
        _date[0], _date[1] = now, b"Date: %s\r\n" % formatdate(now, usegmt=True).encode("ascii")
    return _date[1]


class FileWrapper:
    """wsgi.file_wrapper: iterates filelike in blocks; the server sends a
    regular file with sendfile(2) instead."""

    def __init__(self, filelike, blksize=8192):
        self.filelike = filelike
        self.blksize = blksize
        if hasattr(filelike, "close"):
            self.close = filelike.close

    def __iter__(self):
        return self

    def __next__(self):
        data = self.filelike.read(self.blksize)
        if data:
            return data
        raise StopIteration
