"""The worker side of actd's accept modes (docs/protocol.md).

A Worker finds its listeners and back-channel in the environment actd
builds (LISTEN_FDS, ACTD_CHANNEL_FD, ACTD_ACCEPT_MODE, ACTD_PROTOCOL),
says hello, and then accepts connections the way its mode says:

    dispatch   block on the back-channel; accept one connection per A
               order (more under "keep accepting"), between B and I
    exclusive  after the master's go-ahead, register the listeners with
               EPOLLEXCLUSIVE in an epoll set of our own and accept by
               ourselves, reporting with B/I or batched S

Both answer P with O, and end on D or EOF (the master is gone) once the
connection in hand is done. The master sends A and P to a child it holds
idle, which may have taken a connection whose B (sent 5 ms into it,
actd.report) it has not read yet: a P or a "register again" that comes
while that connection waits for its client's next request leaves it
open (wait_next): the P is answered at once, the A carried out once the
connection ends, after its I. A D or EOF then ends the connection, once
a request its client had sent already is answered.

Each connection goes to serve(conn, addr, local), one at a time. Under an
accept filter (ACTD_PROTOCOL 3 or later, capability "handoff") the master
accepts, and hands each ready connection over as a file descriptor (C);
it is served like an accepted one, between B and I. Between two of its
requests, when nothing of the next one has arrived within GIVE_BACK_GRACE,
the worker gives such a connection back (K) instead of waiting for it: an
idle keep-alive client holds no child. A screening child waits so with
one blocking peek (actd.glance), and hears the master by SIGIO meanwhile.

Children first (ACTD_PROTOCOL 4 or later, ACTD_ACCEPT_FILTER data or
http, dispatch mode; capabilities "handoff" and "screen"): the worker
accepts by itself as in exclusive mode, and takes C at any time; it looks
at each connection it accepts (actd.screen) and serves it if its request
is there, else gives it to the master (K), which holds it until it is.
Any connection it serves may go back so between two requests.

Write completion (ACTD_PROTOCOL 5 or later, under a filter, with
ACTD_OFFLOAD_MAX above 0; capability "offload"): a response the client
reads slowly may go to the master with the connection (W, see finish);
a W the master did not take comes back to an idle child (U), which writes
it as one handed over (actd.unsent).

PROXY protocol (ACTD_PROTOCOL 6 or later, ACTD_PROXY_FROM set; capability
"proxy"): a connection the worker accepts itself on a listener from one
of its trusted networks starts with a PROXY header (actd.proxy), which
the worker reads before serving it, and whose address the application
sees. A screening child reads it too, but gives back (K) one whose header
is not whole yet without reading anything. Between the master and such a
worker, C, K, W and U carry the client's address when a header gave one.

TLS (ACTD_PROTOCOL 6 or later, ACTD_TLS set; capability "tls"): the
worker terminates TLS on the listeners ACTD_TLS names (actd.tls), after
any PROXY header. Such connections never go back to the master: no K, no
W; a screening child finds them ready by the ClientHello rule.
"""

import errno
import os
import select
import socket
import _socket
import sys
import time

from . import channel as ch
from . import proxy
from .glance import GIVE_BACK_GRACE, Hearing, glance
from .http import HEADS_SEEN
from .report import Reporter
from .screen import FILTERS, GONE, HEAD_LIMIT, PEEK, READY, WAIT, Screen
from .lean import usable
from .unsent import write_unsent

BATCH = 32  # connections accepted in a row without reading orders
BATCH_TIME = 0.050  # seconds of such a run
ACCEPT_AGAIN = (BlockingIOError, InterruptedError, ConnectionAbortedError)
OFFLOAD_SINCE = 5  # the protocol revision that added W and U
EDGE_SINCE = 6  # the protocol revision that added proxy and tls, and address trailers
HEADER_TIMEOUT = 30.0  # seconds a PROXY header may take; actd.wsgi sets its --timeout
HEADER_PEEK = proxy.HEADER_LIMIT + HEAD_LIMIT  # a screening child's peek: a PROXY header and a head
TAKEN = "taken"  # _screen_header's: a ready connection, all of it set
RESOURCE_ERRORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class Worker:
    """One actd child: listeners, back-channel, and the accept loop.

    serve(conn, addr, local) serves one accepted connection; local is the
    listener's own address; the Worker closes conn. quick, if given,
    serves those an exclusive-mode or screening child accepts on a plain
    listener (Worker.quick). Raises SystemExit with a message if the
    environment is not an actd child's of a supported mode.
    """

    def __init__(self, serve, environ=os.environ, quick=None):
        self.serve = serve
        # quick(conn, addr, local, known) serves a connection on a plain
        # listener (no TLS; no PROXY header but one a screening child left
        # for the request's recv, self.ahead) as serve would, the lean way
        # if it can (actd.lean); known: see self.known. None: serve alone.
        self.quick = quick
        self.mode = environ.get("ACTD_ACCEPT_MODE")
        if self.mode not in ("dispatch", "exclusive"):
            raise SystemExit(f"actd: ACTD_ACCEPT_MODE={self.mode}: want dispatch or exclusive, "
                             "as actd sets it (run under actd --accept dispatch|exclusive)")
        if int(environ.get("ACTD_PROTOCOL", "1")) < 1:
            raise SystemExit("actd: ACTD_PROTOCOL below 1: not an actd master")
        count = int(environ.get("LISTEN_FDS", "0"))
        self.listeners = [socket.socket(fileno=3 + i) for i in range(count)]
        self.locals = [local_address(s) for s in self.listeners]
        # what each listener's connections are (as ints: the properties
        # make enums, which costs more than the accept)
        self.kinds = [(int(s.family), int(s.type), s.proto) for s in self.listeners]
        self.again = Retry()
        self.channel = ch.Channel.from_environ(environ)
        self.screen = screen_for(environ, self.mode, self.channel.revision)  # a Screen, or None
        # a screening child's keep-alive wait is one peek (wait_next), the
        # channel heard by SIGIO meanwhile
        self.hearing = Hearing(self.channel.fd) if self.screen is not None else None
        self.offload_max = offload_for(environ, self.mode, self.channel.revision)  # 0: none
        self.trust = proxy_for(environ, self.channel.revision)  # an actd.proxy.Trust, or None
        self.tls = tls_for(environ, self.channel.revision)  # {listener index: ssl.SSLContext}
        # the class of each listener's accepted sockets: the C one, whose
        # making and closing run no Python code, but where ssl wraps them
        self.sockets = [socket.socket if i in self.tls else _socket.socket for i in range(count)]
        self.channel.proxy = self.trust is not None
        self.header_timeout = HEADER_TIMEOUT
        self.registered = False  # the listeners are in our epoll set
        self.owed = False  # an A came while a connection waited (_heard): register again after it
        self.reporter = Reporter(self.channel)
        # hooks for actd.wsgi, see arrived
        self.request = self.reporter.request
        self.request_done = self.reporter.request_done
        self.watch = select.poll()
        self.watch.register(self.channel.fd, select.POLLIN)
        self.pause = 0.0  # after an accept that failed for want of resources
        self.parkable = False  # the connection in hand may go back to the master (K)
        self.give_back = False  # ... and goes back to the master with K
        self.peeked = False  # its request is known to be in
        self.queued = False  # ... likely in: accepted after another, without waiting, or after its PROXY header
        self.seen = b""  # ... what the screen peeked of it, if it did
        self.plain = False  # ... and that was one plain head (actd.screen.one_plain_head)
        self.known = None  # ... the Request http.parse kept for that head, if it was one (actd.screen)
        self.listener = 0  # its listener's index
        self.finished = False  # ... and it went to the master with its response (W)
        self.address = None  # ... its client's (host, port), if a PROXY header gave it
        self.ahead = 0  # ... bytes of its PROXY header still unread: its first read takes them (actd.connection)
        self.secure = False  # ... it is a TLS connection (an ssl.SSLSocket)
        self.last = False  # ... it ends before the next request: the master said so (_await)
        self.held = None  # ... its socket, for the glance (wait_next)
        self.armed = False  # ... whose SO_RCVTIMEO is the grace (actd.glance)
        self.glimpse = None  # ... what the last wait_next peeked of its next request, if it did

    def run(self):
        """Say hello, then accept until a drain order or the master's EOF."""
        caps = capabilities(self.channel.revision, self.screen is not None, self.offload_max > 0,
                            self.trust is not None, bool(self.tls))
        self.channel.send(ch.HELLO, caps, os.getpid())
        self.channel.send(ch.IDLE)
        try:
            if self.mode == "exclusive" or self.screen is not None:
                self._exclusive()
            else:
                self._dispatch()
        finally:
            self.reporter.stop()  # a SIGALRM after the handler is gone kills

    # Hooks for the connection in hand (actd.wsgi calls them). Besides
    # these, request(text) notes a request on it (text() describes it) and
    # request_done() its answer: the Reporter's own methods, set in
    # __init__, so a request costs no call through the Worker (the
    # Reporter adds the PROXY header's client, reporter.client, itself).

    def arrived(self):
        """Return whether the connection in hand has its request in, or
        likely so, so that its first read need not wait: one handed over
        (C), found ready by a screening child, accepted from the queue
        right after another was served (its client has had that long), or
        one whose PROXY header was just read (a balancer sends the
        request's first bytes with it). A read that finds nothing polls."""
        return self.peeked or self.queued

    def offloads(self, fd):
        """Return the most bytes of a response on fd the master would
        finish (finish): 0 if it would not (no offload capability, or fd
        is not a connection in hand that may go to the master)."""
        if not self.parkable or self.finished or self.offload_max <= 0:
            return 0
        return self.offload_max

    def finish(self, fd, data_fd, offset, length, keep_alive):
        """Hand connection fd to the master with the rest of its response,
        length bytes of data_fd from offset (W); it parks the connection
        once sent if keep_alive, else closes it. Nothing of the next request
        may have been read. Returns True if sent: the caller then writes and
        reads fd no more, and the connection is not given back (K); False if
        the master does not take it (see offloads). OSError if the master is
        gone. The caller keeps and closes data_fd."""
        if length > self.offloads(fd) or offset < 0 or length < 0:
            return False
        self.channel.send_write(self.listener, keep_alive, fd, data_fd, offset, length, self.address)
        self.finished = True
        self.give_back = False
        return True

    def wait_next(self, fd, timeout):
        """Wait up to timeout seconds for the next request on fd.

        Returns True if fd is readable (data or EOF); False after the
        timeout, or when an order the connection must end for waits on
        the back-channel (a drain, or EOF from the master): the connection
        then ends so it is read. If the client had sent something by
        then, True once more for that request, and False the next time.
        A ping or a "register again" does not end the connection (_heard).
        A connection that may go back (handed over, or any under a filter
        for a screening child) waits only GIVE_BACK_GRACE: then False, and
        it goes back to the master. A screening child waits so by one peek
        (actd.glance), which it leaves in self.glimpse for exact reading,
        unless the master has spoken: then it polls, as the others do.
        """
        self.glimpse = None
        if self.parkable:
            timeout = GIVE_BACK_GRACE
            if self.hearing is not None and not self.hearing.spoken and not self.last:
                self.glimpse, self.armed = glance(self.held, self.armed), True
                ready = self.glimpse is not None
                if not ready or not self.hearing.spoken:
                    self.give_back = not ready
                    return ready
                timeout = 0  # an order came with the request: read as the poll would have
        if self.hearing is not None:
            self.hearing.spoken = False  # whatever comes from here on, the poll sees or flags again
        ready = False
        if not self.last:
            deadline = time.monotonic() + timeout
            self.watch.register(fd, select.POLLIN)
            try:
                events = self.watch.poll(timeout * 1000)
                ready = len(events) == 1 and events[0][0] == fd  # the client alone: most waits
                if events and not ready:
                    ready = self._await(fd, events, deadline)
            finally:
                self.watch.unregister(fd)
        self.give_back = self.parkable and not ready
        return ready

    def _await(self, fd, events, deadline):
        """Go on with a wait for fd (registered in self.watch) that found
        events, the channel's among them, until deadline (time.monotonic);
        return whether fd is readable. What the master says that the
        connection outlives (_heard) is carried out meanwhile. Anything
        else ends the wait: False, or if fd is readable too, True with
        self.last set."""
        while True:
            client = len(events) == 2 or events[0][0] == fd
            if not self._heard():
                self.last = client
                return client
            if client:
                return True
            events = self.watch.poll(max(0.0, deadline - time.monotonic()) * 1000)
            if not events:
                return False

    def _heard(self):
        """Read what the master said while the connection in hand waits
        for its client, if the connection outlives it, and return True: a
        ping (P), answered with O, or, in a child that registers its
        listeners (exclusive mode, a screening child), a "register again"
        (A), which the master sends a child it holds idle, not having read
        the B of this connection yet: it is owed, carried out once the
        connection ends (_register_owed). Returns False, the message left
        for the accept loop, for anything else: a drain, the master's EOF,
        an order the connection must end for."""
        kind = self.channel.peek()
        if kind == ch.PING:
            _, _, value = self.channel.receive()
            self.channel.send(ch.PONG, 0, value)
            return True
        if kind == ch.ACCEPT and (self.mode == "exclusive" or self.screen is not None):
            self.channel.receive()
            self.owed = True
            return True
        return False

    # dispatch mode

    def _dispatch(self):
        while True:
            kind, index, value, fd = self.channel.receive_fd()
            if kind == ch.CONNECTION:
                self._handed(index, fd)
            elif kind == ch.UNSENT and self.offload_max > 0:
                self._unsent(index, value, fd)
            elif kind == ch.ACCEPT:
                self._check_listener(index)
                self._order(index, value == ch.KEEP_ACCEPTING)
            elif kind == ch.PING:
                self.channel.send(ch.PONG, 0, value)
            elif kind in (ch.DRAIN, ch.EOF):
                return
            else:
                close_fds(fd)
                raise ch.Garbage(f"{kind!r} in dispatch mode")

    def _order(self, index, keep):
        got = self._accept(index)
        if got is None:
            self.channel.send(ch.IDLE)
            return
        self.channel.send(ch.BUSY, index)
        self.reporter.start(index, busy=True)
        self._serve(got, index)
        self.reporter.done(idle=False)
        if keep:
            self._keep_accepting(index)
        self.reporter.flush()
        self.channel.send(ch.IDLE)

    def _handed(self, index, fd):
        """Serve connection fd, handed over on listener index (C), as one
        accepted after an A; give it back (K) if it goes idle."""
        conn = socket.socket(fileno=fd)
        if index >= len(self.listeners):
            conn.close()
            self._check_listener(index)
        self.reporter.flush()  # a screening child's short connections, while idle
        self.channel.send(ch.BUSY, index)
        self.reporter.start(index, busy=True)
        self.parkable, self.give_back, self.peeked = index not in self.tls, False, True
        self.listener, self.finished, self.address = index, False, self.channel.address
        self.held = conn
        served = None
        try:
            addr = self.address or peer_address(conn)
            self.reporter.client = self.address
            if self.quick is not None and self.parkable and self._peek_handed(conn) is not None:
                served = conn
                self.quick(conn, addr, self.locals[index], self.known)
            else:
                served = self._secure(conn, index)
                if served is not None:
                    self.serve(served, addr, self.locals[index])
            self.reporter.done(idle=False)
            if self.give_back and not self.finished:
                self.channel.send_fd(ch.KEEP, index, conn.fileno(), 0, self.address)
        finally:
            self.parkable = self.peeked = self.finished = self.secure = self.last = self.armed = self.plain = False
            self.address = self.held = self.glimpse = self.reporter.client = self.known = None
            self.seen = b""
            close_both(conn, served)
        self.channel.send(ch.IDLE)

    def _peek_handed(self, conn):
        """Peek at the request of conn, a connection handed over on a plain
        listener (C: the master found it ready), as a screening child's
        screen does, into self.seen, self.plain and self.known; return
        the Request http.parse kept for it if it is one the lean path
        serves (actd.lean.usable: one kept head, no body, not HEAD), else
        None (the full path serves it, its exact reading bounded by the
        peek). Nothing is read."""
        try:
            peek = conn.recv(HEAD_LIMIT, PEEK)
        except OSError:
            return None  # nothing yet, or a fault: the full path's read meets it
        self.seen, self.plain, self.known = peek, False, usable(peek) if peek else None
        if self.known is not None:
            self.plain = True  # one head and nothing more: its own span
        return self.known

    def _unsent(self, index, value, got):
        """Write what U brought (got, an actd.channel.Unsent), taken on
        listener index, to its connection, between B and I; give the
        connection back (K) if value asks so, else close it."""
        if index >= len(self.listeners):
            close_fds(got)
            self._check_listener(index)
        address = self.channel.address
        self.reporter.flush()
        self.channel.send(ch.BUSY, index)
        try:
            if write_unsent(got) and value & ch.KEEP_ALIVE:
                self.channel.send_fd(ch.KEEP, index, got.conn, 0, address)
        finally:
            os.close(got.conn)
        self.channel.send(ch.IDLE)

    def _keep_accepting(self, index):
        end = time.monotonic() + BATCH_TIME
        for _ in range(BATCH - 1):
            if time.monotonic() >= end:
                return
            got = self._accept(index)
            if got is None:
                return
            self.reporter.start(index)
            self._serve(got, index)
            self.reporter.done(idle=False)

    # exclusive mode, and a screening child's dispatch mode

    def _exclusive(self):
        """Read orders and, after the first A, accept on the listeners,
        until a drain order or the master's EOF."""
        ep = select.epoll()
        ep.register(self.channel.fd, select.EPOLLIN)
        index_of = {s.fileno(): i for i, s in enumerate(self.listeners)}
        while True:
            wait = self.reporter.flush_in()
            ready = [fd for fd, _ in ep.poll(-1 if wait is None else wait)]
            if not ready:
                self.reporter.flush()
                continue
            if self.channel.fd in ready and not self._exclusive_order(ep):
                return  # orders first: a drain wins over a waiting connection
            for fd in ready:
                if fd in index_of:
                    self._burst(index_of[fd], ep)

    def _register(self, ep):
        """Put every listener at the back of its wait queue, in listener
        order: the first A's go-ahead, or a lower slot registered after us.
        An EPOLLEXCLUSIVE entry cannot be modified: deleted, then added."""
        if self.registered:
            for s in self.listeners:
                ep.unregister(s.fileno())
        for s in self.listeners:
            ep.register(s.fileno(), select.EPOLLIN | select.EPOLLEXCLUSIVE)
        self.registered = True

    def _register_again(self, ep):
        """Carry out an A: the short connections so far (S), register,
        then I, the master's sign that it is done."""
        self.reporter.flush()
        self._register(ep)
        self.channel.send(ch.IDLE)

    def _register_owed(self, ep):
        """Register again if an A came while a connection waited for its
        client (_heard), now that the connection ended and sent its I (if
        it was reported B): the master sees I for the connection, then I
        once registered again, as when the A comes after the connection
        (prefork/machine.go: movingBusy, moving, idle; an S before that
        first I would be invalid in movingBusy)."""
        if self.owed:
            self.owed = False
            self._register_again(ep)

    def _exclusive_order(self, ep):
        """Carry out one order; False on a drain or EOF."""
        kind, index, value, fd = self.channel.receive_fd()
        if kind == ch.ACCEPT:
            self._register_again(ep)
        elif kind == ch.CONNECTION and self.screen is not None:
            self._handed(index, fd)
            self._register_owed(ep)
        elif kind == ch.UNSENT and self.screen is not None and self.offload_max > 0:
            self._unsent(index, value, fd)
        elif kind == ch.PING:
            self.channel.send(ch.PONG, 0, value)
        elif kind in (ch.DRAIN, ch.EOF):
            self.reporter.flush()
            return False
        else:
            close_fds(fd)
            raise ch.Garbage(f"{kind!r} in {self.mode} mode")
        return True

    def _burst(self, index, ep):
        """Accept and serve on listener index while connections wait,
        up to BATCH in a row or for BATCH_TIME; after a connection, try the
        next accept at once only when self.again says so, and register
        again (in ep) if that is owed."""
        end = time.monotonic() + BATCH_TIME
        again = self.again
        for i in range(BATCH):
            if i > 0:
                if time.monotonic() >= end:
                    return
                if again.skip > 0:  # not again.due(), inline: this runs per connection
                    again.skip -= 1
                    return
            got = self._accept(index)
            if got is None:
                if i > 0:
                    again.record(False)
                return
            if i > 0:
                again.backoff = 0  # again.record(True), inline
            if self.screen is not None:
                got = self._screened(got, index)
                if got is None:
                    continue
                lean = self.quick is not None and self.known is not None
            else:
                lean = self.quick is not None and index not in self.tls
            self.reporter.start(index)
            self.queued = i > 0
            self._serve(got, index, self.screen is not None, lean)
            self.reporter.done(True)  # idle
            if self.owed:
                self._register_owed(ep)

    def _screened(self, got, index):
        """Return got, the connection just accepted on listener index, as
        (conn, addr) to serve if it is ready (addr from its PROXY header
        if it had one), else None. One not ready is closed, given to the
        master first (K, value NOT_READY: the master holds it as one it
        accepted) unless its client is gone or its PROXY header is bad:
        nothing else is reported."""
        conn, addr = got
        self.address, seen = None, None
        rule = self._hello_ready if index in self.tls else None
        trust = self.trust
        if trust is not None:
            try:
                trusted = trust.seen[index, addr[0]]  # trust.trusts, inline: this runs per connection
            except (KeyError, IndexError):
                trusted = trust.judge(index, addr)
            if trusted:
                seen = self._screen_header(conn, addr, rule)
                if seen is TAKEN:
                    return conn, self.address
        if seen is None:  # no header expected, or one read with nothing after it yet
            seen = self.screen.look(conn, rule)
        if seen == READY:
            self.peeked = True  # until _serve is done with it
            self.seen, self.plain = self.screen.last, self.screen.plain
            if self.address is None or self.ahead:  # no PROXY header, or one the request's recv takes
                self.known = self.screen.known  # (on TLS, none: no known head)
            return conn, self.address or addr
        try:
            if seen != GONE:
                self.channel.send_fd(ch.KEEP, index, conn.fileno(), ch.NOT_READY, self.address)
        finally:
            self.address = None
            conn.close()
        return None

    @staticmethod
    def _hello_ready(peek):
        """The readiness rule of a TLS listener (actd.tls.hello_ready)."""
        from .tls import hello_ready
        from .screen import HEAD_LIMIT
        return hello_ready(peek, HEAD_LIMIT)

    def _screen_header(self, conn, addr, rule):
        """Take the PROXY header a trusted connection from addr starts with,
        if it is whole, into self.address, and judge what follows it by
        the same peek (self.screen.judge, with rule): TAKEN for a v1 line
        like one taken before (proxy.known_v1), then a head http.parse
        kept, with no body (self.peeked, seen, plain and known set as
        _screened sets them: serve it); else READY or WAIT as the screen
        finds it, None if nothing follows yet (the caller looks), PARTIAL
        if the header is not whole yet (nothing read), GONE if bad or the
        client went away. A header that keeps the socket's address
        (LOCAL, UNKNOWN) leaves addr there, so that a K says the header is
        read: a K NOT_READY without an address has its header ahead. The
        header of a READY connection on a listener without a rule of its
        own (TLS's) is left for the request's first read (self.ahead), one
        recv less; any other is read here."""
        try:
            peek = conn.recv(HEADER_PEEK, proxy.PEEK)
        except BlockingIOError:
            return proxy.PARTIAL
        except OSError:
            return GONE
        line, lf, rest = peek.partition(b"\n")
        if rule is None and rest[-4:] == b"\r\n\r\n" and self.screen.filter == "http":
            # the common case, as Screen.look takes a kept head: one
            # partition, no copy of the peek, no (what, length) tuple
            known = HEADS_SEEN.get(rest[:-4])
            if known is not None and not known.chunked and known.length == 0:
                client = proxy.known_v1(line)
                if client is not None:
                    self.address, self.ahead = client, len(line) + 1
                    self.peeked, self.seen, self.plain, self.known = True, rest, True, known
                    return TAKEN
        what, length, address = proxy.parse(peek)
        if what != proxy.WHOLE:
            return GONE if what == proxy.BAD or not peek else proxy.PARTIAL
        rest = peek[length:length + HEAD_LIMIT]
        seen = self.screen.judge(rest, rule) if rest else None
        if seen != READY or rule is not None:
            try:
                proxy.read_exactly(conn, length)
            except (OSError, proxy.BadHeader):
                return GONE
        else:
            self.ahead = length
        self.address = address or addr[:2]
        return seen

    # connections

    def _accept(self, index):
        """Return (conn, addr) from listener index, or None if none waits;
        conn is of the listener's class in self.sockets."""
        listener = self.listeners[index]
        try:
            fd, addr = listener._accept()
        except ACCEPT_AGAIN:
            return None
        except OSError as err:
            self._resource_pause(err)
            return None
        self.pause = 0.0
        family, kind, proto = self.kinds[index]
        return self.sockets[index](family, kind, proto, fd), addr

    def _resource_pause(self, err):
        """Out of fds or memory (or a broken socket): pause, doubling from
        10 ms to 1 s, so the child does not spin while the queue waits."""
        if err.errno not in RESOURCE_ERRORS:
            print(f"actd: accept: {err}", file=sys.stderr)
        self.pause = min(1.0, max(0.010, self.pause * 2))
        time.sleep(self.pause)

    def _serve(self, got, index, judged=False, lean=False):
        """Serve an accepted connection, after its PROXY header unless
        judged (a screening child read it), by quick if lean (a plain
        listener: no TLS); a screening child gives it back (K) if it goes
        idle, before the caller reports it done."""
        conn, addr = got
        self.parkable, self.give_back = self.screen is not None and index not in self.tls, False
        self.listener, self.finished, self.held = index, False, conn
        served = None
        try:
            if not judged and self.trust is not None and self.trust.trusts(index, addr):
                if not self._read_header(conn, index):
                    return
                addr = self.address or addr
            if lean:
                served = conn
                self.reporter.client = self.address  # a PROXY header's, else None
                self.quick(conn, addr, self.locals[index], self.known)
            else:
                self.reporter.client = self.address
                served = self._secure(conn, index)
                if served is None:
                    return
                self.serve(served, addr, self.locals[index])
            if self.give_back and not self.finished:
                self.reporter.end()  # no B from the timer after the K
                self.channel.send_fd(ch.KEEP, index, conn.fileno(), 0, self.address)
        finally:
            self.parkable = self.peeked = self.queued = self.finished = self.secure = self.last = self.armed = False
            self.address, self.seen, self.plain, self.held, self.glimpse = None, b"", False, None, None
            self.reporter.client, self.ahead, self.known = None, 0, None
            if served is not None and served is not conn:  # close_both, inline: this runs per connection
                served.close()
            conn.close()

    def _secure(self, conn, index):
        """Return conn to serve: itself, or on a TLS listener an
        ssl.SSLSocket after the handshake (conn is then detached); None
        if the handshake failed (closed)."""
        ctx = self.tls.get(index) if self.tls else None
        if ctx is None:
            return conn
        from .tls import handshake
        self.secure = True
        return handshake(ctx, conn)

    def _read_header(self, conn, index):
        """Read the PROXY header of a connection from a trusted source into
        self.address, waiting up to header_timeout; False if it is bad,
        late, or the client went away (the caller closes it, unanswered).
        A whole header on a listener without TLS is left for the request's
        first read (self.ahead), one recv less."""
        self.queued = True  # a balancer sends the request with its header: try the read before a poll
        if index not in self.tls:
            try:
                peek = conn.recv(proxy.HEADER_LIMIT, proxy.PEEK)
            except OSError:  # nothing yet (BlockingIOError), or a fault consume finds again
                peek = b""
            line, lf, _ = peek.partition(b"\n")
            client = proxy.known_v1(line) if lf else None  # parse's first step, without its tuple
            if client is not None:
                self.address, self.ahead = client, len(line) + 1
                return True
            what, length, address = proxy.parse(peek) if peek else (None, 0, None)
            if what == proxy.WHOLE:
                self.address, self.ahead = address, length
                return True
        try:
            self.address = proxy.consume(conn, self.header_timeout)
        except (proxy.BadHeader, OSError) as err:
            print(f"actd: PROXY header from {addr_text(peer_address(conn))}: {err}", file=sys.stderr, flush=True)
            return False
        return True

    def _check_listener(self, index):
        if index >= len(self.listeners):
            raise ch.Garbage(f"accept on listener {index}, have {len(self.listeners)}")


class Retry:
    """Whether an exclusive-mode child that has just served a connection
    tries to accept the next one at once instead of waiting for an event:
    always, while such tries find connections (a saturated pool); after one
    finds none, only after the next 1, 2, 4 ... 64 connections, so a pool
    that keeps up pays one fruitless accept per 64 connections at most
    (the Go library does the same)."""

    __slots__ = ("skip", "backoff")

    def __init__(self):
        self.skip = 0
        self.backoff = 0

    def due(self):
        """Return whether to try now."""
        if self.skip > 0:
            self.skip -= 1
            return False
        return True

    def record(self, found):
        """Note what a try found."""
        if found:
            self.backoff = 0
            return
        self.backoff = min(max(2 * self.backoff, 1), 64)
        self.skip = self.backoff


def capabilities(revision, screen=False, offload=False, proxy=False, tls=False):
    """Return H's capability bits for a master of revision: handoff from 3;
    screen too if the child screens (see screen_for); offload too if the
    master finishes responses (see offload_for); proxy too if the child
    reads PROXY headers (see proxy_for), tls if it terminates TLS (see
    tls_for), both from 6."""
    caps = ch.HANDOFF if revision >= 3 else 0
    if screen:
        caps |= ch.SCREEN
    if offload and revision >= OFFLOAD_SINCE:
        caps |= ch.OFFLOAD
    if proxy and revision >= EDGE_SINCE:
        caps |= ch.PROXY
    if tls and revision >= EDGE_SINCE:
        caps |= ch.TLS
    return caps


def tls_for(environ, revision):
    """Return {listener index: ssl.SSLContext} for ACTD_TLS, from a master
    of revision 6 on; {} without it. Raises SystemExit for a value that is
    not INDEX=FD entries, or a certificate or key that does not load."""
    text = environ.get("ACTD_TLS", "")
    if not text.strip() or revision < EDGE_SINCE:
        return {}
    from . import tls
    try:
        return tls.contexts(text)
    except (ValueError, OSError) as err:  # ssl.SSLError is an OSError
        raise SystemExit(f"actd: ACTD_TLS: {err}") from None


def close_both(conn, served):
    """Close an accepted connection and what served it (an SSLSocket made
    of it, or itself)."""
    if served is not None and served is not conn:
        served.close()
    conn.close()


def proxy_for(environ, revision):
    """Return the actd.proxy.Trust that ACTD_PROXY_FROM sets, from a
    master of revision 6 on; None without it. Raises SystemExit for a
    value that is not INDEX=CIDR entries (the master writes them)."""
    text = environ.get("ACTD_PROXY_FROM", "")
    if not text.strip() or revision < EDGE_SINCE:
        return None
    try:
        return proxy.Trust.from_text(text)
    except ValueError as err:
        raise SystemExit(f"actd: {err}") from None


def addr_text(addr):
    """Return a peer address for a log line."""
    if isinstance(addr, tuple):
        return f"{addr[0]}:{addr[1]}"
    return "a unix socket" if addr is not None else "a client gone"


def offload_for(environ, mode, revision):
    """Return the most bytes of a response the master finishes (W): its
    ACTD_OFFLOAD_MAX under ACTD_ACCEPT_FILTER data or http, in dispatch
    mode, from a master of revision 5 on; else 0 (also for a value that is
    not a number above 0)."""
    if environ.get("ACTD_ACCEPT_FILTER", "") not in FILTERS or mode != "dispatch":
        return 0
    if revision < OFFLOAD_SINCE:
        return 0
    try:
        return max(0, int(environ.get("ACTD_OFFLOAD_MAX", "0")))
    except ValueError:
        return 0


def close_fds(fd):
    """Close what receive_fd brought with a message: None, an fd, or an
    actd.channel.Unsent."""
    if isinstance(fd, ch.Unsent):
        ch.close_all(fd[:2])
    elif fd is not None:
        os.close(fd)


def screen_for(environ, mode, revision):
    """Return a Screen for the pool's accept filter, or None: a child
    screens only under ACTD_ACCEPT_FILTER data or http, in dispatch mode,
    from a master of revision 4 on. Any other child keeps the master-first
    path, as before revision 4."""
    name = environ.get("ACTD_ACCEPT_FILTER", "")
    if name not in FILTERS or mode != "dispatch" or revision < 4:
        return None
    return Screen(name)


def peer_address(conn):
    """Return conn's peer address as accept would, or None if it is gone."""
    try:
        return conn.getpeername()
    except OSError:
        return None


def local_address(sock):
    """Return the listener's (host, port), or (path, "") for a unix socket."""
    name = sock.getsockname()
    if isinstance(name, tuple):
        return str(name[0]), str(name[1])
    if isinstance(name, bytes):  # abstract socket
        name = name.decode("latin-1")
    return name or "localhost", ""
