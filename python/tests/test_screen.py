"""Children first under an accept filter (revision 4): actd.screen's
readiness rule, and a screening child, run as a real process, against a
test that plays its master on a SOCK_SEQPACKET pair."""

import itertools
import os
import random
import socket
import subprocess
import sys
import unittest

from actd import channel as ch
from actd.screen import FAULT, FRAMING, GONE, HEAD_LIMIT, READY, WAIT, Screen, has_fault, names_framing, ready
from actd.worker import capabilities, screen_for

HEAD = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
CLOSE = b"GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
POST = b"POST /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbody"
REPORTS = (ch.SERVED, ch.BUSY, ch.IDLE)

# The child: fds argv[1] and argv[2] become 3 (the listener) and 4 (the
# back-channel), then actd.wsgi serves an application that answers
# "METHOD PATH".
CHILD = r"""
import fcntl, os, sys
high = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 100) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
for i, fd in enumerate(high):
    os.dup2(fd, 3 + i)
    os.close(fd)
from actd.wsgi import Options, Server
from actd.worker import Worker
def app(environ, start_response):
    body = (environ["REQUEST_METHOD"] + " " + environ["PATH_INFO"]).encode()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]
server = Server(app, Options(keep_alive=5, timeout=5))
server.hooks = Worker(server.serve)
server.hooks.run()
"""


class ReadyTest(unittest.TestCase):
    def test_rule(self):
        # python/screen_test.go's TestScreenReady checks the same rule
        # against the master's (acceptfilter.Ready) on a longer table
        long = b"x" * HEAD_LIMIT
        cases = [
            ("data", b"", False),
            ("data", b"G", True),
            ("http", b"", False),
            ("http", b"GET / HTTP/1.1\r\nHost: a\r\n", False),
            ("http", b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", True),
            ("http", b"GET / HTTP/1.1\r\nHost: a\r\n\r", False),
            ("http", b"GET / HTTP/1.0\n\n", True),  # a bare LF: answered 400
            ("http", b"\r\n\r\n", False),  # CRLFs before the request line
            ("http", b"\r\nGET / HTTP/1.1\r\n\r\n", True),
            ("http", b"GET /\r\n", True),  # a bad request line
            ("http", b"GET / HTTP/1.1\r\nHost: a\rb", True),  # a bare CR
            ("http", b"GET / HTTP/1.1\r\nHost: \x01", True),  # a control byte
            ("http", b"GET / HTTP/1.1\r\nHost: \t", False),  # HTAB is not one
            ("http", b"GET /" + b"a" * 8192 + b" HTTP/1.1\r\n", True),  # 414
            ("http", b"GET / HTTP/1.1\r\n\r\nPOST", True),
            ("http", b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", False),  # the body rule
            ("http", b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", True),
            ("http", b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", False),
            ("http", b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", True),
            ("http", long, True),  # at the limit: the server answers 431
            ("http", b"GET / HTTP/1.1\r\nX: " + long[:HEAD_LIMIT - 20], False),
        ]
        for filter, head, want in cases:
            with self.subTest(filter=filter, head=head[:30]):
                self.assertEqual(ready(filter, head), want)
                self.assertEqual(ready(filter, bytearray(head)), want)

    def test_look(self):
        # what the client does before the look; the filter; what it finds
        cases = [
            ("silent", "http", lambda c: None, WAIT),
            ("part of a head", "http", lambda c: c.sendall(b"GET / HTTP/1.1\r\n"), WAIT),
            ("part of a head, data", "data", lambda c: c.sendall(b"G"), READY),
            ("a head", "http", lambda c: c.sendall(HEAD), READY),
            ("closed", "http", lambda c: c.close(), GONE),
            ("reset", "data", reset, GONE),
        ]
        for name, filter, client_does, want in cases:
            with self.subTest(name):
                with socket.create_server(("127.0.0.1", 0)) as listener:
                    client = socket.create_connection(listener.getsockname())
                    self.addCleanup(client.close)
                    client_does(client)
                    conn, _ = listener.accept()
                    self.addCleanup(conn.close)
                    self.assertEqual(Screen(filter).look(conn), want)
                    if want != GONE:  # nothing was taken
                        screen = Screen(filter)
                        self.assertEqual(screen.look(conn), want)
                    if want == READY:  # what it saw is kept, for the first read's bound (actd.exact)
                        self.assertIn(screen.last, (HEAD, b"G"))
                        self.assertEqual(screen.plain, screen.last == HEAD)  # HEAD is one plain head


def reset(client):
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    client.close()


class SeenPlainTest(unittest.TestCase):
    def test_judged_as_the_walk(self):
        # a peek that is a head parse kept (http.HEADS_SEEN) is judged
        # as one_plain_head and ready() judge it: only a whole head with
        # no body and nothing after it is plain
        from actd import http
        from actd.screen import one_plain_head
        heads = [b"GET /seen HTTP/1.1\r\nHost: a", b"POST /seen HTTP/1.1\r\nHost: a\r\nContent-Length: 5",
                 b"POST /seen HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked",
                 b"GET /seen HTTP/1.1\r\nHost: a\r\nContent-Length: 0", b"GET /seen HTTP/1.0"]
        kept = dict(http.HEADS_SEEN)  # other tests may have filled it
        http.HEADS_SEEN.clear()
        self.addCleanup(http.HEADS_SEEN.update, kept)
        for head in heads:
            http.parse(head)
            self.assertIn(head, http.HEADS_SEEN)
        for head in heads:
            for tail in (b"", b"\r\n", b"\r\n\r\n", b"\r\n\r\nab", b"\r\n\r\nabcde", b"\r\n\r\nGET / HTTP/1.1\r\n\r\n",
                         b"\r\n\r\n0\r\n\r\n"):
                for lead in (b"", b"\r\n"):
                    peek = lead + head + tail
                    with self.subTest(peek=peek):
                        screen = Screen("http")
                        got = screen.judge(peek)
                        want = READY if ready("http", peek) else WAIT
                        self.assertEqual(got, want)
                        if screen.plain:  # its span is its length: one whole request
                            self.assertTrue(http.seen_plain(peek) or one_plain_head(peek))
                            self.assertTrue(peek.endswith(b"\r\n\r\n") and peek.count(b"\r\n\r\n") == 1)
                            self.assertNotIn(b"chunked", peek)
                            self.assertNotIn(b"Length: 5", peek)
        self.assertTrue(http.seen_plain(heads[0] + b"\r\n\r\n"))
        self.assertFalse(http.seen_plain(heads[1] + b"\r\n\r\n"))


class CountedChecksTest(unittest.TestCase):
    """has_fault and names_framing stand in for FAULT.search and
    FRAMING.search on the per-connection path: they must agree."""

    def test_has_fault_is_the_fault_search(self):
        # every string of up to 6 bytes over the bytes that matter, then
        # longer random ones
        alphabet = b"\r\n\t\x01\x7fa "
        heads = [bytes(t) for n in range(7) for t in itertools.product(alphabet, repeat=n)]
        rng = random.Random(20)
        heads += [bytes(rng.choice(alphabet) for _ in range(rng.randrange(7, 80))) for _ in range(20000)]
        heads += [bytes([b]) + b"\r\n" for b in range(256)]
        for head in heads:
            want = FAULT.search(head) is not None
            if has_fault(head) != want:
                self.fail(f"has_fault({head!r}): got {not want}, want {want}")

    def test_names_framing_is_the_framing_search(self):
        names = [b"Content-Length", b"content-length", b"CONTENT-LENGTH", b"Transfer-Encoding",
                 b"tRANSFER-eNCODING", b"Content-Lengt", b"ransfer-Encoding", b"Content-Type", b""]
        for name in names:
            for head in (name, b"GET / HTTP/1.1\r\n" + name + b": 1\r\n\r\n", b"X: " + name):
                with self.subTest(head=head):
                    self.assertEqual(names_framing(head), FRAMING.search(head) is not None)


class ScreenForTest(unittest.TestCase):
    def test_who_screens(self):
        cases = [
            ("filter http, revision 4", "http", "dispatch", 4, True),
            ("filter data, revision 5", "data", "dispatch", 5, True),
            ("revision 3", "http", "dispatch", 3, False),
            ("no filter", None, "dispatch", 4, False),
            ("filter none", "none", "dispatch", 4, False),
            ("exclusive mode", "data", "exclusive", 4, False),
        ]
        for name, filter, mode, revision, want in cases:
            with self.subTest(name):
                environ = {} if filter is None else {"ACTD_ACCEPT_FILTER": filter}
                got = screen_for(environ, mode, revision)
                self.assertEqual(got is not None, want)
                caps = capabilities(revision, got is not None)
                self.assertEqual(caps, ch.HANDOFF | ch.SCREEN if want else capabilities(revision))


class Child:
    """A worker process with one TCP listener, and the test as its master."""

    def __init__(self, test, filter="http", revision=4, program=CHILD, mode="dispatch", pass_fds=(), **extra):
        self.test = test
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)  # as the master sets it
        test.addCleanup(self.listener.close)
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(10)
        test.addCleanup(self.sock.close)
        env = dict(os.environ, LISTEN_FDS="1", ACTD_CHANNEL_FD="4", ACTD_ACCEPT_MODE=mode,
                   ACTD_PROTOCOL=str(revision), ACTD_ACCEPT_FILTER=filter, ACTD_SLOT="0", **extra)
        fds = (self.listener.fileno(), child.fileno())
        self.proc = subprocess.Popen([sys.executable, "-c", program, *map(str, fds)], pass_fds=fds + tuple(pass_fds),
                                     env=env)
        self.trailer = b""  # what the last message heard carried after its header
        child.close()
        test.addCleanup(self._end)

    def _end(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def send(self, kind, listener=0, value=0, fd=None, trailer=b""):
        socket.send_fds(self.sock, [ch.HEADER.pack(kind, 1, listener, value) + trailer], [] if fd is None else [fd])

    def heard(self, timeout=10):
        """Return the next message as (type, listener, value, fds), or None
        if none came within timeout."""
        self.sock.settimeout(timeout)
        try:
            msg, fds, _, _ = socket.recv_fds(self.sock, 64, 1)
        except socket.timeout:  # TimeoutError from Python 3.10 on
            return None
        kind, _, listener, value = ch.HEADER.unpack(msg[:ch.HEADER.size])
        self.trailer = msg[ch.HEADER.size:]
        return kind, listener, value, fds

    def expect(self, kind, listener=0):
        """Read the next message: it must be kind on listener; return its fds."""
        got = self.heard()
        self.test.assertIsNotNone(got, f"want {kind!r}, heard nothing")
        self.test.assertEqual(got[:2], (kind, listener), f"got {got}, want {kind!r}")
        return got[3]

    def started(self):
        """Read H and I, say the go-ahead and read its I."""
        got = self.heard()
        self.test.assertEqual(got[0], ch.HELLO)
        self.test.assertEqual(got[2], self.proc.pid)
        self.expect(ch.IDLE)
        self.send(ch.ACCEPT)
        self.expect(ch.IDLE)
        return got[1]

    def reports(self, stop=(ch.SERVED, ch.IDLE)):
        """Read messages until the child reports its connection done (S,
        or I after B), or another of stop; return them as (type, value),
        in order, and the fds of any K."""
        heard, fds = [], []
        while not heard or heard[-1][0] not in stop:
            got = self.heard()
            self.test.assertIsNotNone(got, f"after {heard}: want S or I, heard nothing")
            heard.append((got[0], got[2]))
            fds += got[3]
        return heard, fds


def connect(test, child, data):
    """Return a client connected to child's listener that sent data."""
    client = socket.create_connection(child.listener.getsockname())
    client.settimeout(10)
    test.addCleanup(client.close)
    client.sendall(data)
    return client


def read_response(test, client, body=b"GET /a"):
    """Read one response to GET /a (or what body names); return it."""
    got = b""
    while not got.endswith(body):
        chunk = client.recv(4096)
        test.assertTrue(chunk, f"after {got!r}: the connection closed")
        got += chunk
    test.assertTrue(got.startswith(b"HTTP/1.1 200 "), got)
    return got


class ScreeningChildTest(unittest.TestCase):
    def test_orders(self):
        c = Child(self)
        self.assertEqual(c.started(), ch.HANDOFF | ch.SCREEN)
        c.send(ch.PING, 0, 7)
        self.assertEqual(c.heard()[:3], (ch.PONG, 0, 7))
        c.send(ch.ACCEPT)  # register again: DEL + ADD
        c.expect(ch.IDLE)
        # still registered: a client is served, at once or (if the child
        # looked before its request came) after a K and a C
        client = connect(self, c, CLOSE)
        _, fds = c.reports(stop=(ch.SERVED, ch.IDLE, ch.KEEP))
        if fds:
            c.send(ch.CONNECTION, 0, 0, fds[0])
            os.close(fds[0])
            c.expect(ch.BUSY)
            c.expect(ch.IDLE)
        read_response(self, client)
        c.send(ch.DRAIN)
        self.assertEqual(c.proc.wait(10), 0)

    def test_ready_served_at_once(self):
        # sent before the child looks (it registers on the A): no C, no K
        for filter, data in [("http", CLOSE), ("data", CLOSE[:10])]:
            with self.subTest(filter):
                c = Child(self, filter)
                client = connect(self, c, data)
                c.started()
                client.sendall(CLOSE[len(data):])
                read_response(self, client)
                heard, fds = c.reports()
                self.assertNotIn(ch.KEEP, [kind for kind, _ in heard])
                self.assertEqual(fds, [])

    def test_not_ready_given_to_master(self):
        cases = [("silent", "http", b""), ("part of a head", "http", CLOSE[:20]), ("silent", "data", b""),
                 ("part of a body", "http", POST[:-2])]
        for name, filter, data in cases:
            with self.subTest(name, filter=filter):
                c = Child(self, filter)
                client = connect(self, c, data)
                c.started()
                got = c.heard()
                self.assertEqual(got[:3], (ch.KEEP, 0, ch.NOT_READY), "want K, not ready")
                fds = got[3]
                self.assertEqual(len(fds), 1)
                self.assertIsNone(c.heard(0.2), "want nothing after K: no B, I or S")
                whole = POST if data.startswith(b"POST") else CLOSE
                client.sendall(whole[len(data):])  # now ready: the master hands it over
                c.send(ch.CONNECTION, 0, 0, fds[0])
                os.close(fds[0])
                c.expect(ch.BUSY)
                read_response(self, client, whole.split(b" HTTP")[0])
                c.expect(ch.IDLE)
                self.assertEqual(client.recv(16), b"", "want the child's copy closed")

    def test_keep_alive_given_back(self):
        c = Child(self)
        client = connect(self, c, HEAD)
        c.started()
        read_response(self, client)
        heard, fds = c.reports()  # K, then S (or B, K, I)
        self.assertEqual(heard[-2], (ch.KEEP, 0), f"{heard}: want K (value 0: parked) before the report")
        self.assertEqual(len(fds), 1)
        client.sendall(CLOSE)
        c.send(ch.CONNECTION, 0, 0, fds[0])
        os.close(fds[0])
        c.expect(ch.BUSY)
        read_response(self, client)
        c.expect(ch.IDLE)

    def test_master_first_below_revision_4(self):
        c = Child(self, "http", revision=3)
        got = c.heard()
        self.assertEqual((got[0], got[1]), (ch.HELLO, ch.HANDOFF))
        c.expect(ch.IDLE)
        client = connect(self, c, CLOSE)
        c.send(ch.ACCEPT)  # dispatch: accept one now
        c.expect(ch.BUSY)
        read_response(self, client)
        c.expect(ch.IDLE)


if __name__ == "__main__":
    unittest.main()
