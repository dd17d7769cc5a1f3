"""The back-channel codec and the reports: actd.channel and actd.report."""

import socket
import unittest

from actd import channel as ch
from helpers import eventually
from actd.report import SERVED_BATCH, Reporter


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Master:
    """The master's end of a SOCK_SEQPACKET pair."""

    def __init__(self, test, revision=2):
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.setblocking(False)
        test.addCleanup(self.sock.close)
        test.addCleanup(child.close)
        self.channel = ch.Channel(child, revision)

    def heard(self):
        """Return the messages sent so far as [(type, listener, value, text)]."""
        out = []
        while True:
            try:
                msg = self.sock.recv(512)
            except BlockingIOError:
                return out
            kind, wire, listener, value = ch.HEADER.unpack(msg[:8])
            out.append((kind, listener, value, msg[8:]))


class ChannelTest(unittest.TestCase):
    def test_truncate(self):
        cases = [
            ("short", "GET /", b"GET /"),
            ("exact", "x" * 248, b"x" * 248),
            ("long", "x" * 300, b"x" * 248),
            ("cut between characters", "x" * 247 + "\u00e9\u00e9", b"x" * 247),
            ("surrogate escapes", "GET /\udce9", b"GET /?"),
        ]
        for name, text, want in cases:
            with self.subTest(name):
                self.assertEqual(ch.truncate(text), want)
                want.decode("utf-8")

    def test_receive(self):
        m = Master(self)
        m.sock.send(ch.HEADER.pack(b"A", 1, 2, 1))
        self.assertEqual(m.channel.receive(), (b"A", 2, 1))
        m.sock.send(b"A\x01\x00")
        with self.assertRaises(ch.Garbage):
            m.channel.receive()
        m.sock.send(ch.HEADER.pack(b"P", 9, 0, 0))
        with self.assertRaises(ch.Garbage):
            m.channel.receive()
        m.sock.close()
        self.assertEqual(m.channel.receive(), (ch.EOF, 0, 0))

    def test_request_needs_revision_2(self):
        for revision, want in [(1, []), (2, [(b"R", 0, 0, b"GET /x")])]:
            with self.subTest(revision=revision):
                m = Master(self, revision)
                m.channel.report_request("GET /x")
                self.assertEqual(m.heard(), want)


class ReporterTest(unittest.TestCase):
    def test_short_connections_batch(self):
        m, clock = Master(self), Clock()
        r = Reporter(m.channel, clock)
        for _ in range(3):
            r.start(0)
            r.done(idle=True)
        self.assertEqual(m.heard(), [])
        self.assertAlmostEqual(r.flush_in(), 0.050)
        clock.now += 0.060
        r.start(0)
        r.done(idle=True)
        self.assertEqual(m.heard(), [(b"S", 0, 4, b"")])
        self.assertIsNone(r.flush_in())
        for _ in range(SERVED_BATCH):
            r.start(0)
            r.done(idle=True)
        self.assertEqual(m.heard(), [(b"S", 0, SERVED_BATCH, b"")])

    def test_long_connection(self):
        m = Master(self)
        r = Reporter(m.channel)
        r.start(0)
        r.done(idle=True)  # one short, counted
        r.start(1)
        r.request(lambda: "GET /slow")
        # a request that lasts until the timer (SIGALRM) reports it
        self.assertTrue(eventually(lambda: r.text_sent), "GET /slow not reported")
        r.request_done()
        r.request(lambda: "POST /next")
        self.assertTrue(eventually(lambda: r.text_sent), "POST /next not reported")
        r.request_done()
        r.done(idle=True)
        self.assertEqual(m.heard(), [(b"S", 0, 1, b""), (b"B", 1, 0, b""), (b"R", 0, 0, b"GET /slow"),
                                     (b"R", 0, 0, b"POST /next"), (b"I", 0, 0, b"")])

    def test_dispatch_connection(self):
        m = Master(self)
        r = Reporter(m.channel)
        r.start(0, busy=True)  # B went out with the accept
        r.request(lambda: "GET /a")
        r.request_done()  # quick: not reported
        r.request(lambda: "GET /b")
        self.assertTrue(eventually(lambda: r.text_sent), "GET /b not reported")  # a request that lasts
        r.request_done()
        r.done(idle=False)  # the dispatch loop sends I itself
        self.assertEqual(m.heard(), [(b"R", 0, 0, b"GET /b")])

    def test_timer_lapses(self):
        m = Master(self)
        r = Reporter(m.channel)
        r.start(0)
        # reported B, no request: nothing left to watch, the timer lapses
        self.assertTrue(eventually(lambda: not r.timing), "the timer still runs")
        r.done(idle=True)
        self.assertEqual(m.heard(), [(b"B", 0, 0, b""), (b"I", 0, 0, b"")])
        r.start(0)
        r.done(idle=True)
        # the tick finds the child idle and lapses
        self.assertTrue(eventually(lambda: not r.timing), "the timer still runs")


if __name__ == "__main__":
    unittest.main()
