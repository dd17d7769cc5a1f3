"""The accept loops' policy: actd.worker."""

import os
import socket
import unittest

from actd import channel as ch
from actd.worker import Retry, Worker


class RetryTest(unittest.TestCase):
    def test_backoff(self):
        # found: what each try finds; want: whether the child tries after
        # each connection, a try being made only where due.
        cases = [
            ("saturated: always", [True] * 4, "TTTT"),
            ("one miss: skip 1", [False, True, True], "T-TT"),
            ("misses double the skip", [False, False, False], "T-T--T----"),
            ("a find resets it", [False, True, False], "T-TT-"),
            ("at most 64", [False] * 8, "T-T--T----T" + "-" * 8 + "T" + "-" * 16 + "T" + "-" * 32 + "T" + "-" * 64
             + "T" + "-" * 64),
        ]
        for name, found, want in cases:
            with self.subTest(name):
                r, got, tries = Retry(), "", iter(found)
                while True:
                    if not r.due():
                        got += "-"
                        continue
                    try:
                        r.record(next(tries))
                    except StopIteration:
                        break
                    got += "T"
                self.assertEqual(got, want)


class WaitNextTest(unittest.TestCase):
    """Worker.wait_next between two requests of a kept-alive connection,
    the master's end of the back-channel and the client held here."""

    def worker(self, mode):
        """Return a Worker in mode (no listeners; "screen": a screening
        child's dispatch mode) on a fresh channel, the master's end, and
        the client and server ends of a connection."""
        master, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        client, server = socket.socketpair()
        for s in (master, child, client, server):
            self.addCleanup(s.close)
        master.setblocking(False)
        environ = {"ACTD_ACCEPT_MODE": mode, "ACTD_PROTOCOL": "6", "LISTEN_FDS": "0",
                   "ACTD_CHANNEL_FD": str(os.dup(child.fileno()))}
        if mode == "screen":
            environ.update(ACTD_ACCEPT_MODE="dispatch", ACTD_ACCEPT_FILTER="http")
        w = Worker(None, environ)
        self.addCleanup(w.channel.sock.close)
        return w, master, client, server

    def test_orders(self):
        # orders: what the master sends, in: whether the client's next
        # request is in too; want: wait_next's answers to two calls,
        # heard: what the master gets, left: the order left unread.
        cases = [
            ("nothing", "exclusive", b"", False, [False], [], None, False),
            ("the request", "exclusive", b"", True, [True, True], [], None, False),
            ("a ping", "exclusive", b"P", False, [False], [(b"O", 7)], None, False),
            ("a ping, the request in", "exclusive", b"P", True, [True], [(b"O", 7)], None, False),
            ("register again: owed", "exclusive", b"A", False, [False], [], None, True),
            ("register again, the request in", "exclusive", b"A", True, [True], [], None, True),
            ("register again, a screening child", "screen", b"A", False, [False], [], None, True),
            ("an A in dispatch mode", "dispatch", b"A", False, [False], [], b"A", False),
            ("a ping in dispatch mode", "dispatch", b"P", True, [True], [(b"O", 7)], None, False),
            ("a drain", "exclusive", b"D", False, [False], [], b"D", False),
            ("a drain, the request in: the last", "exclusive", b"D", True, [True, False], [], b"D", False),
            ("a ping, then a drain", "exclusive", b"PD", False, [False], [(b"O", 7)], b"D", False),
            ("the master gone", "exclusive", None, False, [False], [], b"", False),
            ("the master gone, the request in", "exclusive", None, True, [True, False], [], b"", False),
        ]
        for name, mode, orders, request, want, heard, left, owed in cases:
            with self.subTest(name):
                w, master, client, server = self.worker(mode)
                self.assertEqual(w.screen is not None, mode == "screen")
                if orders is None:
                    master.close()
                for kind in orders or b"":
                    master.send(ch.HEADER.pack(bytes([kind]), ch.WIRE, 0, 7))
                if request:
                    client.sendall(b"GET / HTTP/1.1\r\n\r\n")
                got = [w.wait_next(server.fileno(), 0.05) for _ in want]
                self.assertEqual(got, want)
                if orders is not None:
                    said = []
                    while True:
                        try:
                            msg = master.recv(64)
                        except BlockingIOError:
                            break
                        kind, _, _, value = ch.HEADER.unpack(msg)
                        said.append((kind, value))
                    self.assertEqual(said, heard)
                self.assertEqual(w.channel.peek(), left)
                self.assertEqual(w.owed, owed)
                self.assertFalse(w.give_back)


if __name__ == "__main__":
    unittest.main()
