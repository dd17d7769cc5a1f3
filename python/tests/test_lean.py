"""The lean path (actd.lean) against the full one (actd.wsgi's Server):
the same bytes on the wire, the same environ, the same tally, for a table
of requests and applications, the fall-back cases among them, on a
connection's first request and on the kept-alive ones after it."""

import contextlib
import io
import re
import select
import socket
import sys
import threading
import unittest

from actd import http, lean, response
from actd.screen import HEAD_LIMIT, PEEK, Screen
from actd.worker import Worker
from actd.wsgi import Options, Server
from helpers import fails, replaced, tcp_pair
from helpers import with_write as written

ADDR = ("127.0.0.1", 4321)
CLIENT = ("203.0.113.7", 5555)  # PROXY's client
PROXY_V1 = b"PROXY TCP4 203.0.113.7 192.0.2.1 5555 80\r\n"
LOCAL = ("localhost", "80")
CLOSE = b"GET /lean HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
KEEP = b"GET /lean HTTP/1.1\r\nHost: a\r\n\r\n"


class Hooks:
    """An actd.worker.Worker's attributes the server and the lean path
    use: exclusive mode (nothing peeked), or a screening child's (peek:
    what it peeked, parkable; its waits peek, as actd.glance's).

    Each wait for a next request first sends the client's next piece
    (client, pieces), and ends what it sends after the last (or at once
    if none is left): so a next request comes while the server waits for
    it, never with the one before."""

    ahead = 0
    secure = False
    offload_max = 0
    give_back = False
    glimpse = None
    client = conn = None
    pieces = ()
    polls = False  # the waits poll instead of peeking, as a Worker's after the master spoke (SIGIO)

    def __init__(self, peek=None, ahead=0):
        screen = Screen("http")
        self.parkable = peek is not None
        self.seen, self.plain = b"", False
        self.known = None
        self.ahead = ahead  # a PROXY header the worker left for the request's recv
        if peek is not None:
            screen.judge(peek[ahead:])
            self.seen, self.plain, self.known = peek[ahead:], screen.plain, screen.known
        self.texts = []  # the requests reported, and "wait" for each wait for a next one

    def request(self, text):
        self.texts.append(text())

    def request_done(self):
        pass

    def arrived(self):
        return self.parkable

    def wait_next(self, fd, timeout):
        self.texts.append("wait")  # the connection was kept open
        self.glimpse = None  # as Worker.wait_next: a peek of this wait's, or none
        if self.pieces:
            self.client.sendall(self.pieces.pop(0))
        if self.client is not None and not self.pieces:
            self.client.shutdown(socket.SHUT_WR)
            self.client = None
        ready = bool(select.select([fd], [], [], timeout)[0])
        if ready and self.parkable and not self.polls:
            try:
                self.glimpse = self.conn.recv(HEAD_LIMIT, PEEK)
            except OSError:
                self.glimpse = b""
        return ready


class Tally:
    """A tally with no access log behind it (actd.tally.Recorder's part)."""

    alone = True

    def __init__(self):
        self.got = []

    def add(self, status, micros):
        self.got.append(status)


class Log:
    """A full access log: the entries, but for the clock's fields."""

    alone = False

    def __init__(self):
        self.got = []

    def log(self, entry):
        self.got.append(entry._replace(micros=0, started=0))


class Counted(lean.Lean):
    """A Lean that counts the responses it sent itself."""

    __slots__ = ("sent",)

    def __init__(self, server):
        super().__init__(server)
        self.sent = 0

    def _send(self, *args):
        self.sent += 1
        return super()._send(*args)


def hello(environ, start_response):
    body = b"hello " + environ["PATH_INFO"].encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def unframed(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return (b"no length",)


def two(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"one ", b"two"]


def generated(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    yield b"made"


def lazy(environ, start_response):
    yield b""
    start_response("200 OK", [("Content-Type", "text/plain")])
    yield b"late"


def fails_late(environ, start_response):
    write = start_response("200 OK", [("Content-Type", "text/plain")])
    write(b"begun")
    raise RuntimeError("the application broke after the head")


def twice(environ, start_response):
    start_response("200 OK", [])
    start_response("200 OK", [])
    return [b"never"]


def no_content(environ, start_response):
    start_response("204 No Content", [("X-Kind", "none")])
    return [b"dropped"]


def short(environ, start_response):
    start_response("200 OK", [("Content-Length", "3")])
    return [b"longer than three"]


def long(environ, start_response):
    start_response("200 OK", [("Content-Length", "30")])
    return [b"shorter"]


def large(environ, start_response):
    body = b"x" * (256 << 10)  # more than the socket takes at once (SO_SNDBUF): the rest is sent the full path's way
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]


def cookie(environ, start_response):
    start_response("200 OK", [("Set-Cookie", "a=b"), ("Content-Length", "1")])
    return [b"c"]


def closing(environ, start_response):
    class Body(list):
        def close(self):
            sys.stderr.write("closed\n")

    start_response("200 OK", [("Content-Length", "4")])
    return Body([b"body"])


def text(environ, start_response):
    start_response("200 OK", [])
    return ["not bytes"]


def closes(environ, start_response):
    start_response("200 OK", [("Connection", "close"), ("Content-Length", "2")])
    return [b"ok"]


def unstarted(environ, start_response):
    return [b"no start_response"]


APPS = [hello, unframed, large, two, generated, lazy, written, replaced, fails, fails_late, twice, no_content,
        short, long, cookie, closing, text, closes, unstarted]
LEAN_APPS = {hello, unframed, large, no_content, short, long, closes}  # answered by the lean path itself
ONCE = {long, closes}  # ... once: then the connection closes

HEAD = b"HEAD /lean HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
BODY = b"POST /lean HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
QUERY = b"GET /lean?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"
OLD_KEEP = b"GET /lean HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
HTTP10 = b"GET /lean HTTP/1.0\r\n\r\n"
MORE = b"GET /l%20ean HTTP/1.1\r\nHost: a\r\nUser-Agent: t\r\nAccept: */*\r\nX-Two: 1\r\nX-Two: 2\r\n\r\n"

# (name, what the client sends: each piece but the first while the server
# waits for a next request, how many responses a lean application that
# keeps the connection open gets from the lean path itself: the full path
# answers the others, and gives the connection back at the next request)
REQUESTS = [
    ("close", [CLOSE], 1),
    ("keep-alive, then the client's end", [KEEP], 1),
    ("two pipelined", [KEEP + CLOSE], 0),
    ("HTTP/1.0", [HTTP10], 1),
    ("HTTP/1.0 keep-alive", [OLD_KEEP], 1),
    ("HEAD", [HEAD], 0),
    ("a body", [BODY], 0),
    ("a query", [QUERY[:-2] + b"Connection: close\r\n\r\n"], 0),
    ("percent-encoded, more fields", [MORE], 1),
    ("kept alive: three", [KEEP, KEEP, CLOSE], 3),
    ("kept alive: HTTP/1.0", [OLD_KEEP, OLD_KEEP, OLD_KEEP], 3),
    ("kept alive: another head", [KEEP, MORE, KEEP], 3),
    ("kept alive, then HEAD", [KEEP, HEAD], 1),
    ("kept alive, then a body", [KEEP, KEEP, BODY], 2),
    ("kept alive, then a query, then as first", [KEEP, QUERY, KEEP], 2),
    ("kept alive, then two pipelined", [KEEP, KEEP + CLOSE], 1),
    ("a query, then kept alive", [QUERY, KEEP, KEEP], 2),
    ("a query between heads, twice", [KEEP, QUERY, KEEP, QUERY, KEEP], 3),
    ("kept alive, then part of a head", [KEEP, b"GET /lean HT"], 1),
]


def lean_sends(app, count, pieces):
    """Return how many responses the lean path itself sends app on a
    connection of pieces where a lean application would get count."""
    if app not in LEAN_APPS:
        return 0
    if app in ONCE:  # the first answer closes
        return 1 if count and pieces[0] in (CLOSE, KEEP, OLD_KEEP, MORE, HTTP10) else 0
    return count

DATE = re.compile(rb"\r\nDate: [^\r]*\r\n")


def serve(app, pieces, how, access_log=None, header=b""):
    """Serve pieces to app on a fresh TCP connection, the full path
    (how "full"), or the lean one as an exclusive-mode child ("lean"), a
    screening child ("screen"; "polled": its waits poll, the master having
    spoken) or one it was handed to ("handed") takes it, after a PROXY header if given
    (its client CLIENT; the worker left it for the request's first recv,
    as a screening child does: Worker.ahead): the first of pieces at once,
    each other at a wait for a next request (Hooks); return (what came
    back, with the Date field's value blanked, the environs the
    application saw, the requests the hooks heard and the waits for a next
    one, what went to stderr, how many responses the lean path sent
    itself)."""
    environs = []

    def recorded(environ, start_response):
        seen = dict(environ)
        seen["wsgi.input"] = type(seen["wsgi.input"]).__name__  # a body's is an object per request
        environs.append(seen)
        return app(environ, start_response)

    client, conn = tcp_pair()
    with client, conn:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)  # a large body is sent in parts
        client.sendall(header + pieces[0])
        chunks = []
        reading = threading.Thread(target=read_all, args=(client, chunks))
        reading.start()
        select.select([conn], [], [], 5)
        peek = conn.recv(HEAD_LIMIT, PEEK) if how in ("screen", "polled") else None
        hooks = Hooks(peek, len(header))
        if how == "handed":  # a connection the master handed over (C), peeked by the worker
            hooks.parkable = True
            Worker._peek_handed(hooks, conn)
        hooks.polls = how == "polled"
        hooks.client, hooks.conn, hooks.pieces = client, conn, list(pieces[1:])
        addr = CLIENT if header else ADDR
        server = Server(recorded, Options(keep_alive=2, timeout=5), hooks, access_log)
        quick = Counted(server)
        if how != "full":
            server.lean = quick  # as actd.wsgi's main: the full path gives a connection back at a next request
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            if how == "full":
                server.serve(conn, addr, LOCAL)
            elif how in ("screen", "handed", "polled") and hooks.known is None:
                server.serve(conn, addr, LOCAL)  # as the worker does: the lean path only for a known head
            else:
                quick.serve(conn, addr, LOCAL, hooks.known)
        conn.close()
        if hooks.client is not None:
            with contextlib.suppress(OSError):  # not if the server reset it
                client.shutdown(socket.SHUT_WR)
        reading.join(10)
        out = b"".join(chunks)
    return DATE.sub(b"\r\nDate: -\r\n", out), environs, hooks.texts, err.getvalue(), quick.sent


def read_all(client, chunks):
    """Read what client gets until the end, into chunks."""
    while True:
        try:
            got = client.recv(65536)
        except ConnectionResetError:
            return  # the server closed with bytes of ours unread
        if not got:
            return
        chunks.append(got)


class LeanTest(unittest.TestCase):
    def setUp(self):
        # room for this test's heads: other tests may have filled the
        # bounded tables, and then every request goes the full path
        http.HEADS_SEEN.clear()
        response.HEADS.clear()

    def test_same_as_full(self):
        for app in APPS:
            for name, data, count in REQUESTS:
                for how in ("lean", "screen", "handed", "polled"):
                    with self.subTest(app=app.__name__, request=name, how=how):
                        serve(app, data, "full")  # the head kept, the response head built
                        full = serve(app, data, "full")
                        got = serve(app, data, how)
                        self.assertEqual(got[0], full[0], "the bytes sent")
                        self.assertEqual(got[1], full[1], "the environ")
                        self.assertEqual(got[2], full[2], "the requests reported, the waits")
                        self.assertEqual(bool(got[3]), bool(full[3]), f"stderr: got {got[3]!r}, want {full[3]!r}")
                        self.assertEqual(got[4], lean_sends(app, count, data), "responses the lean path sent")

    def test_proxy_header_as_full(self):
        # a connection whose PROXY header the worker left for the
        # request's first recv, a screening child's ("screen") or an
        # exclusive-mode child's that peeked it whole ("lean",
        # Worker._read_header): the lean path takes both, drops the
        # header, and names the header's client as the full path does
        for how in ("screen", "lean"):
            for app in APPS:
                for name, data, count in REQUESTS:
                    with self.subTest(how=how, app=app.__name__, request=name):
                        serve(app, data, "full", header=PROXY_V1)
                        full = serve(app, data, "full", header=PROXY_V1)
                        got = serve(app, data, how, header=PROXY_V1)
                        self.assertEqual(got[0], full[0], "the bytes sent")
                        self.assertEqual(got[1], full[1], "the environ")
                        self.assertEqual(got[2], full[2], "the requests reported, the waits")
                        self.assertEqual(got[4], lean_sends(app, count, data), "responses the lean path sent")
                        if got[1]:
                            self.assertEqual((got[1][0]["REMOTE_ADDR"], got[1][0]["REMOTE_PORT"]),
                                             ("203.0.113.7", "5555"))

    def test_proxy_header_alone_first(self):
        # the header came alone (the request later): the lean path reads
        # it and leaves the wait for the request to the full path, which
        # must not drop a byte more
        serve(hello, [CLOSE], "full")
        client, conn = tcp_pair()
        with client, conn:
            client.sendall(PROXY_V1)
            select.select([conn], [], [], 5)
            later = threading.Timer(0.2, lambda: (client.sendall(CLOSE), client.shutdown(socket.SHUT_WR)))
            later.start()
            hooks = Hooks(None, len(PROXY_V1))
            environs = []
            server = Server(lambda env, sr: environs.append(env) or hello(env, sr), Options(timeout=5), hooks)
            quick = Counted(server)
            quick.serve(conn, CLIENT, LOCAL)
            later.join(5)
            conn.close()
            chunks = []
            read_all(client, chunks)
        out = b"".join(chunks)
        self.assertTrue(out.startswith(b"HTTP/1.1 200 OK\r\n"), out)
        self.assertTrue(out.endswith(b"hello /lean"), out)
        self.assertEqual(quick.sent, 0, "want the full path to answer")
        self.assertEqual(hooks.ahead, 0)
        self.assertEqual((environs[0]["REMOTE_ADDR"], environs[0]["REMOTE_PORT"]), ("203.0.113.7", "5555"))

    def test_tally_and_log_as_full(self):
        for log in (Tally, Log):
            for app in (hello, fails, written, short, long):
                for name, data, _ in REQUESTS[:2] + REQUESTS[9:]:
                    with self.subTest(log=log.__name__, app=app.__name__, request=name):
                        serve(app, data, "full")
                        full, got = log(), log()
                        serve(app, data, "full", full)
                        serve(app, data, "lean", got)
                        self.assertEqual(got.got, full.got)
                        self.assertTrue(got.got)

    def test_fits(self):
        self.assertTrue(lean.fits(Server(hello)))
        self.assertFalse(lean.fits(Server(hello, Options(forwarded_allow=("10.0.0.0/8",)))))

    def test_client_gone_first(self):
        # the client closes before it sends: nothing served, nothing reported
        client, conn = tcp_pair()
        with client, conn:
            client.close()
            hooks = Hooks()
            server = Server(hello, Options(keep_alive=2, timeout=5), hooks)
            lean.Lean(server).serve(conn, ADDR, LOCAL)
            self.assertEqual(hooks.texts, [])

    def test_kept_heads_only(self):
        # a head parse has not kept goes the full path (which keeps it)
        head = b"GET /new-%d HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" % id(self)
        self.assertIsNone(http.HEADS_SEEN.get(head[:-4]))
        out, _, _, _, leaned = serve(hello, [head], "lean")
        self.assertFalse(leaned)
        self.assertTrue(out.startswith(b"HTTP/1.1 200 OK\r\n"), out)
        self.assertTrue(serve(hello, [head], "lean")[4], "want the lean path once the head is kept")


if __name__ == "__main__":
    unittest.main()
