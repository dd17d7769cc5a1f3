"""The lean path: a request like many before it, answered in one frame.

Most requests to a busy pool repeat a few heads (a benchmark, a health
check, a client polling one URL) with no body, and most applications
answer with a one-element list. The full path (actd.wsgi's Server: a
Connection, a Reader, an exact Span, the head's parse, a Response and its
send) spends about a hundred Python calls on such a request; Lean.serve
takes it in a handful: read the head (or what a screening child peeked),
take the Request http.parse kept for it (HEADS_SEEN), copy the environ,
call the application, take the response head built for an answer like
this one before (actd.response.HEADS), send head and body in one send,
count it.

Anything else goes to the full path before a byte of it is sent, with
what the lean path did so far: a head not kept or not alone, HEAD, a
result other than a one-element list or tuple of bytes, write(),
start_response with exc_info or called from the result, a head not
built before (Set-Cookie), a send the socket does not take whole, a
failure of the application (logged as the full path logs it). The
application is called once either way (Server.open, Server.answer_first).
A connection kept alive is the full path's after its first request.
tests/test_lean.py checks that both paths give the same bytes and the
same environ.
"""

import select
import socket
import time

from . import http
from .response import (CONTENT_LENGTHS, GOOD_STATUSES, HEADS, Response, check_headers, check_status,
                       content_length, date_line)
from .wsgi import LOGGED, PASS_ON, log_error, request_env

DONTWAIT = socket.MSG_DONTWAIT
END = b"\r\n\r\n"
# what ends a connection quietly while the lean path sends: the client's
# going, and any other fault of the send (the full path logs it as the
# application's and closes)
GONE = (http.ClientGone, OSError)


def fits(server):
    """Return whether server's options let the lean path serve: not with
    --forwarded-allow-ips (the client is then in the headers)."""
    return not server.options.forwarded_allow


def kept():
    """The first request's answer for Server.serve_on when the lean path
    sent it and the connection stays open."""
    return True


class Lean:
    """The lean path of one Server (actd.wsgi), whose hooks are an
    actd.worker.Worker (or a stand-in with its attributes)."""

    __slots__ = ("server",)

    def __init__(self, server):
        self.server = server

    def serve(self, sock, addr, local, request=None):
        """Serve connection sock from addr, accepted on listener local (a
        plain one: no TLS), as Server.serve does. request
        is the Request http.parse kept for what a screening child peeked
        (hooks.seen: one head, no body; actd.screen), else None: the head
        is read first (polled for unless hooks.arrived()). A connection
        may start with a PROXY header the worker peeked but left unread
        (hooks.ahead bytes, addr its client's; a screening or an
        exclusive-mode child's): the recv that takes the request takes
        it too and drops it, the header of a screened head without a
        copy. The caller closes sock."""
        server = self.server
        hooks = server.hooks
        if request is None:
            taken = self._read(sock, hooks)
            if not taken:
                if taken is None:
                    server.serve(sock, addr, local)  # nothing read: all the full path's
                return  # the client closed before a request, or failed
            request = http.HEADS_SEEN.get(taken[:-4]) if taken[-4:] == END else None
            if request is None or request.length or request.chunked or request.method == "HEAD":
                server.serve_on(*server.open(sock, addr, taken, taken), local)
                return
        else:
            taken = hooks.seen
            if request.method == "HEAD":
                server.serve(sock, addr, local)
                return
            ahead = hooks.ahead  # a PROXY header before the request: taken by the same recv
            want = ahead + len(taken)
            try:
                got = sock.recv(want, DONTWAIT)
            except OSError:
                got = b""
            if len(got) == want:
                if ahead:
                    hooks.ahead = 0  # got is the header and taken: taken stands for it, no copy
            else:
                if ahead and got:
                    if len(got) < ahead:
                        return  # part of a header the peek showed whole: cannot be; the caller closes
                    got, hooks.ahead = got[ahead:], 0
                if got:
                    server.serve_on(*server.open(sock, addr, got, got), local)
                else:
                    server.serve(sock, addr, local)  # the full path meets the fault again
                return
        hooks.request(request.describe)
        began = None
        if server.access_log:
            began = (0.0 if server.tally_only else time.time(), time.monotonic_ns())
        client = (str(addr[0]), str(addr[1]), None) if type(addr) is tuple else ("", "", None)
        environ = (server.templates.get(local) or server._template(local)).copy()
        environ.update(request.env or request_env_kept(request))
        environ["REMOTE_ADDR"] = client[0]
        environ["REMOTE_PORT"] = client[1]
        keep_alive = request.keep_alive and server.options.keep_alive > 0
        call = Call((server, sock, addr, taken, request, keep_alive))
        try:
            result = server.app(environ, call.start_response)
        except PASS_ON as err:
            outcome = (None, err)
        except Exception:
            log_error(environ)
            outcome = (None, LOGGED)
        else:
            outcome = (result, None)
            status = call.status
            if (call.response is None and not call.odd and status is not None
                    and (type(result) is list or type(result) is tuple) and len(result) == 1
                    and type(result[0]) is bytes):
                head = HEADS.get((status, request.version, False, keep_alive, False, False, *call.headers))
                if head is not None:
                    self._send(sock, addr, local, taken, request, client, began, status, call.headers, head,
                               result[0])
                    return
        response = call.take()
        first = (lambda: server.answer_first(request, client, began, environ, response, outcome))
        server.serve_on(*call.opened, local, first)

    def _send(self, sock, addr, local, taken, request, client, began, status, headers, head, body):
        """Send the response of head (an actd.response.build_head Head) and
        body, as Response._send_head would, end the request as _one does,
        and go on with the connection if it stays open."""
        server = self.server
        hooks = server.hooks
        start, fields, tail, keep, no_body, _, length, sends_known = head
        if sends_known:
            length = len(body)
            fields += CONTENT_LENGTHS.get(length) or content_length(length)
        if no_body:
            body = b""
        elif len(body) > length:
            body = body[:max(0, length)]  # never more than it said
        data = b"".join((start, date_line(), fields, tail, body))
        opened = None
        try:
            try:
                sent = sock.send(data, DONTWAIT)
            except BlockingIOError:
                sent = 0
            if sent != len(data):
                opened = server.open(sock, addr, taken)
                keep = self._rest(opened[0], request, keep, status, headers, head, length, len(body),
                                  memoryview(data)[sent:])
            keep = keep and (no_body or len(body) >= length)
        except GONE:
            return
        finally:
            hooks.request_done()
            if began:
                server._log(request, client[0], began, status[:3], len(body))
        if keep:
            server.serve_on(*(opened or server.open(sock, addr, taken)), local, kept)

    def _rest(self, conn, request, keep, status, headers, head, length, written, rest):
        """Send rest, the end of a response the socket did not take whole,
        the full path's way (a Response's: its last write may go to the
        master); return whether the connection stays open (not if it went
        to the master)."""
        response = Response(conn, request, keep, self.server.finisher, None)
        response.status, response.headers, response.sent = status, headers, True
        response.no_body, response.length, response.written = head[4], length, written
        if response.finisher is not None and response._ends_body():
            conn.send_last(rest, response._finish_bytes)
        else:
            conn.sendall(rest)
        return keep and not response.finished()

    def _read(self, sock, hooks):
        """Return the first bytes of the connection's first request: b""
        if the client closed or reset it first, or sent nothing within
        the timeout, None if nothing came yet of one that arrived (the
        full path then waits). Polls first, unless hooks.arrived(). Other
        faults raise OSError, as the full path's read does. A PROXY header
        the worker left (hooks.ahead) is read with them and dropped
        (_past_header)."""
        if not hooks.arrived():
            timeout = self.server.options.timeout
            p = select.poll()
            p.register(sock.fileno(), select.POLLIN)
            if not p.poll(timeout * 1000 if timeout > 0 else None):
                return b""
        try:
            if hooks.ahead:
                return self._past_header(sock, hooks)
            return sock.recv(http.READ_SIZE, DONTWAIT)
        except BlockingIOError:
            return None
        except (ConnectionError, TimeoutError):
            return b""

    @staticmethod
    def _past_header(sock, hooks):
        """_read's recv for a connection whose PROXY header the worker
        left for it (hooks.ahead bytes, in already: an exclusive-mode
        child's, Worker._read_header): the header and the request's first
        bytes in one recv, the header dropped. Returns those bytes, b"" if
        the client closed, None if no byte past the header came yet (the
        header read, or as much of it as came: hooks.ahead is what is
        left, for the full path's first read to drop)."""
        ahead = hooks.ahead
        data = sock.recv(http.READ_SIZE + ahead, DONTWAIT)
        if len(data) > ahead:
            hooks.ahead = 0
            return data[ahead:]
        if not data:
            return b""
        hooks.ahead = ahead - len(data)
        return None


class Call:
    """The application's call on the lean path: its start_response and
    write, and what they were given, until the full path takes the
    request over (take): then its Response's."""

    # what start_response was given, and after take the Response and
    # Server.open's (conn, reader, remote): class defaults, so that a
    # Call costs one attribute store to make
    status = headers = response = opened = None
    odd = False  # start_response was given exc_info

    def __init__(self, context):
        self.context = context  # (server, sock, addr, taken, request, keep_alive)

    def start_response(self, status, headers, exc_info=None):
        """PEP 3333's start_response, as Response.start_response checks
        it; nothing has gone out yet, so exc_info replaces what an earlier
        call gave (and the full path sends the answer)."""
        if self.response is not None:
            return self.response.start_response(status, headers, exc_info)
        if exc_info:
            exc_info = None
            self.odd = True
        elif self.status is not None:
            raise AssertionError("start_response called a second time without exc_info")
        self.status = status if type(status) is str and status in GOOD_STATUSES else check_status(status)
        self.headers = check_headers(headers)
        return self.write

    def write(self, data):
        """PEP 3333's write(): the full path's, from here on."""
        return self.take().write(data)

    def take(self):
        """Return the Response that answers the request the full path's
        way, made at the first call (self.opened: Server.open's) with
        what start_response was given."""
        if self.response is None:
            server, sock, addr, taken, request, keep_alive = self.context
            self.opened = server.open(sock, addr, taken)
            response = Response(self.opened[0], request, keep_alive, server.finisher, None)
            response.status, response.headers = self.status, self.headers
            self.response = response
        return self.response


def request_env_kept(request):
    """Return the environ keys request alone sets, made once and kept
    (Request.env), as actd.wsgi's _environ keeps them for a request
    http.parse gave again."""
    request.env = request_env(request, {})
    return request.env
