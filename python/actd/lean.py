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
A connection kept alive stays on the lean path while its next requests
are such heads (Lean._loop waits for each as Server.serve_on would, a
screening child's wait peeking it, and reads exactly that); the full
path answers any that is not, and gives the connection back at the next
(Server.serve_on returns True, Server.lean set).
tests/test_lean.py checks that both paths give the same bytes and the
same environ.
"""

import select
import socket
import time
from functools import partial

from . import http
from .exact import PEEK
from .screen import HEAD_LIMIT
from .response import (CONTENT_LENGTHS, GOOD_STATUSES, HEADS, Response, check_headers, check_status,
                       content_length, date_line)
from .wsgi import LOGGED, PASS_ON, log_error, request_env

DONTWAIT = socket.MSG_DONTWAIT
END = b"\r\n\r\n"
# what ends a connection quietly while the lean path sends: the client's
# going, and any other fault of the send (the full path logs it as the
# application's and closes)
GONE = (http.ClientGone, OSError)
# _loop's states between two requests (None or False: the connection is over)
WAIT = 2  # the lean path answered: wait for the next request
TAKE = True  # the full path answered, and waited for the next (Server.serve_on's True)


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
        copy. Its next requests go the same way when they can (_loop).
        The caller closes sock."""
        server = self.server
        hooks = server.hooks
        if request is None:
            taken = self._read(sock, hooks)
            if not taken:
                if taken is None:  # nothing read: the full path's
                    self._loop(sock, addr, local, server.serve_on(*server.open(sock, addr), local))
                return  # the client closed before a request, or failed
            request = usable(taken)
            if request is None:
                self._loop(sock, addr, local, server.serve_on(*server.open(sock, addr, taken, taken), local))
                return
        else:
            taken = hooks.seen
            if request.method == "HEAD":
                self._loop(sock, addr, local, server.serve_on(*server.open(sock, addr), local))
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
                # (no bytes: the full path meets the fault again)
                opened = server.open(sock, addr, got, got) if got else server.open(sock, addr)
                self._loop(sock, addr, local, server.serve_on(*opened, local))
                return
        self._loop(sock, addr, local, self._answer(sock, addr, local, taken, request, self._client(addr),
                                                   server.templates.get(local) or server._template(local)))

    def resume(self, sock, addr, local):
        """Go on with a connection the full path served so far (Server.serve),
        at a next request it has waited for and read nothing of, as _loop
        does after the full path's TAKE."""
        self._loop(sock, addr, local, TAKE)

    def _loop(self, sock, addr, local, state):
        """Go on with the connection after a request: state WAIT (the lean
        path answered it: wait for the next), TAKE (the full path answered
        it, waited for the next, read nothing of it: Server.serve_on's
        True), or None (the connection is over; a false serve_on's
        answer). Each next request is answered the lean way if it can
        be, else the full way, until the connection is over."""
        server = self.server
        hooks = server.hooks
        client = template = None
        while state:
            if state is WAIT and not hooks.wait_next(sock.fileno(), server.options.keep_alive):
                return  # idle, closed, or an order: the caller closes it (or gives it back: hooks.give_back)
            got = self._take(sock, addr, local)
            if type(got) is not tuple:
                state = got  # the full path answered it: TAKE, or over
                continue
            if client is None:
                client = self._client(addr)
                template = server.templates.get(local) or server._template(local)
            state = self._answer(sock, addr, local, got[0], got[1], client, template)

    @staticmethod
    def _client(addr):
        """Return (REMOTE_ADDR, REMOTE_PORT, None) for peer addr, as
        actd.wsgi's remote_address."""
        return (str(addr[0]), str(addr[1]), None) if type(addr) is tuple else ("", "", None)

    def _answer(self, sock, addr, local, taken, request, client, template):
        """Answer request (a head http.parse kept, no body, not HEAD; taken
        its bytes, all that was read) from client, (REMOTE_ADDR,
        REMOTE_PORT, None), with an environ from template; return _loop's
        state: WAIT if the lean path sent the response and the connection
        waits for a next request, else what Server.serve_on returned for
        the full path's answer (TAKE, or None once the connection is
        over)."""
        server = self.server
        server.hooks.request(request.describe)
        began = None
        if server.access_log:
            began = (0.0 if server.tally_only else time.time(), time.monotonic_ns())
        environ = template.copy()
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
                    return self._send(sock, addr, local, taken, request, client, began, status, call.headers,
                                      head, result[0])
        response = call.take()
        first = (lambda: server.answer_first(request, client, began, environ, response, outcome))
        return server.serve_on(*call.opened, local, first)

    def _take(self, sock, addr, local):
        """Take the next request on a connection whose wait for it said it
        came (hooks.wait_next, as Server.serve_on waits), and return
        (taken, request) if it is one the lean path answers: a head
        http.parse kept, alone, no body, not HEAD. Else the full path
        answers it, with whatever was read (Server.open), and what
        Server.serve_on returned is returned: TAKE, or None once the
        connection is over (as it is when the client closed or broke it).

        A screening child's wait peeked (hooks.glimpse; if it polled
        instead, the peek is made here, as exact reading would): it reads
        exactly that peek; any other reads what came."""
        server = self.server
        hooks = server.hooks
        if hooks.parkable:
            glimpse = hooks.glimpse
            if glimpse is None:  # the wait polled (the master spoke): peek, as exact reading would
                glimpse = hooks.glimpse = peek(sock)
            request = usable(glimpse) if glimpse else None
            if request is None:
                return self._rest_full(sock, addr, local)
            try:
                taken = sock.recv(len(glimpse), DONTWAIT)
            except OSError:
                return self._rest_full(sock, addr, local)  # the full path meets the fault again
            if len(taken) == len(glimpse):
                return taken, request
        else:
            try:
                taken = sock.recv(http.READ_SIZE, DONTWAIT)
            except BlockingIOError:
                return self._rest_full(sock, addr, local)  # nothing yet: the full path waits
            except (ConnectionError, TimeoutError):
                return None  # gone: as the full path's read
            if not taken:
                return None
            request = usable(taken)
            if request is not None:
                return taken, request
        return server.serve_on(*server.open(sock, addr, taken, taken), local)

    def _rest_full(self, sock, addr, local):
        """Serve the connection's next request (after its wait, nothing of
        it read) the full path's way; return what Server.serve_on
        returned."""
        server = self.server
        conn, reader, remote = server.open(sock, addr, b"")
        return server.serve_on(conn, reader, remote, local, partial(server.next_one, conn, reader, remote, local))

    def _send(self, sock, addr, local, taken, request, client, began, status, headers, head, body):
        """Send the response of head (an actd.response.build_head Head) and
        body, as Response._send_head would, and end the request as _one
        does; return _loop's state: WAIT if the connection stays open, None
        once it is over, or what Server.serve_on returned when the full
        path went on with it (the rest of a response it sent)."""
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
                if server.tally_only:  # Server._log's first case, inline: this runs per request
                    server.access_log.add(status[:3], (time.monotonic_ns() - began[1]) // 1000)
                else:
                    server._log(request, client[0], began, status[:3], len(body))
        if keep and opened is not None:
            return server.serve_on(*opened, local, kept)  # the rest went the full path's way: it goes on
        return WAIT if keep else None

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


def peek(sock):
    """Return what sock's client has sent, without taking it, as exact
    reading's own peek does (actd.exact.Span._look): None if nothing
    yet, b"" for end of file or a fault."""
    try:
        return sock.recv(HEAD_LIMIT, PEEK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def usable(taken):
    """Return the Request http.parse kept for taken, the bytes read or
    peeked of a request, if they are one such head and nothing more, the
    request has no body and is not HEAD: one the lean path answers. Else
    None."""
    if taken[-4:] != END:
        return None
    request = http.HEADS_SEEN.get(taken[:-4])
    if request is None or request.length or request.chunked or request.method == "HEAD":
        return None
    return request


def request_env_kept(request):
    """Return the environ keys request alone sets, made once and kept
    (Request.env), as actd.wsgi's _environ keeps them for a request
    http.parse gave again."""
    request.env = request_env(request, {})
    return request.env
