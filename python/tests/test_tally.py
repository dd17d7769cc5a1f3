"""Request tallies: actd.tally."""

import socket
import unittest
from collections import namedtuple

from actd import channel as ch
from actd import tally
from helpers import Pair

Entry = namedtuple("Entry", "status micros")


class TestIndexes(unittest.TestCase):
    def test_code_index(self):
        for status, want in [("200", 0), (200, 0), ("404", 9), ("504", 18), ("101", 19), ("206", 20),
                             ("307", 21), ("418", 22), ("599", 23), ("600", 24), ("99", 24), ("x", 24)]:
            self.assertEqual(tally.code_index(status), want, status)

    def test_bucket_index(self):
        for micros, want in [(0, 0), (5000, 0), (5001, 1), (1000000, 7), (10000000, 10), (10000001, 11)]:
            self.assertEqual(tally.bucket_index(micros), want, micros)

    def test_size(self):
        self.assertEqual(tally.TALLY_SIZE, 156)  # protocol.TallySize


class TestRecorder(unittest.TestCase):
    def setUp(self):
        self.master, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.addCleanup(self.master.close)
        self.addCleanup(child.close)
        self.logged = []
        inner = type("Log", (), {"log": lambda _, e: self.logged.append(e)})()
        self.recorder = tally.Recorder(inner, child.fileno())
        self.addCleanup(self.recorder.flush)

    def test_counts_sent_once(self):
        for entry in [Entry("200", 3000), Entry("200", 30000), Entry("503", 2000000), Entry("-", 0)]:
            self.recorder.log(entry)
        self.assertEqual(len(self.logged), 4)  # every entry goes on to the access log
        self.master.settimeout(5)
        # the first T goes at once: its timer may fire before the last
        # entries are in (a loaded machine), and the next T takes them
        counts = None  # codes, buckets and micros, summed over the Ts
        while counts is None or sum(counts[:tally.NUM_CODES]) < 3:
            fields = tally.PACKET.unpack(self.master.recv(512))
            self.assertEqual(fields[:4], (ch.TALLY, ch.WIRE, 0, 0))
            counts = fields[4:] if counts is None else [a + b for a, b in zip(counts, fields[4:])]
        codes, buckets = counts[:tally.NUM_CODES], counts[tally.NUM_CODES:-1]
        self.assertEqual((codes[0], codes[17], sum(codes)), (2, 1, 3))  # "-" sent nothing: not counted
        self.assertEqual((buckets[0], buckets[3], buckets[8], sum(buckets)), (1, 1, 1, 3))
        self.assertEqual(counts[-1], 2033000)
        self.recorder.log(Entry("404", 1))
        self.master.setblocking(False)
        with self.assertRaises(BlockingIOError):  # not within the second after a T
            self.master.recv(512)
        self.recorder.flush()
        self.assertEqual(tally.PACKET.unpack(self.master.recv(512))[4 + 9], 1)


class TestServerCounts(unittest.TestCase):
    """A Server whose access log is a Recorder alone (no ACTD_ACCESS_LOG)
    counts each answer by status, as one with an access log does."""

    def test_counted_without_a_log(self):
        master, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.addCleanup(master.close)
        self.addCleanup(child.close)
        for name, inner in [("alone", None), ("with a log", type("Log", (), {"log": lambda _, e: None})())]:
            with self.subTest(name):
                recorder = tally.Recorder(inner, child.fileno())
                self.assertEqual(recorder.alone, inner is None)

                def app(environ, start_response):
                    status = "404 Not Found" if environ["PATH_INFO"] == "/missing" else "200 OK"
                    start_response(status, [("Content-Length", "2")])
                    return [b"ok"]

                Pair(app, access_log=recorder).exchange(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"
                                                       b"GET /missing HTTP/1.1\r\nHost: h\r\n\r\n"
                                                       b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
                recorder.flush()
                codes = [0] * tally.NUM_CODES
                master.setblocking(False)
                try:
                    while True:  # the first T went at once, the rest at the flush
                        fields = tally.PACKET.unpack(master.recv(512))
                        codes = [a + b for a, b in zip(codes, fields[4:4 + tally.NUM_CODES])]
                except BlockingIOError:
                    pass
                self.assertEqual((codes[0], codes[9], sum(codes)), (2, 1, 3))


if __name__ == "__main__":
    unittest.main()
