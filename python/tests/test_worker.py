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

    def test_glance(self):
        # A screening child's wait on a connection that may go back: one
        # peek (actd.glance), the master heard by SIGIO. client: what the
        # client does; orders: what the master sends before the wait, or
        # during it (its peek); want: wait_next's answers; heard, left,
        # owed as in test_orders; back: given back; glimpse: what the last
        # wait left for exact reading (none after a poll).
        request = b"GET / HTTP/1.1\r\n\r\n"
        cases = [
            ("nothing: give back", None, b"", "", [False], [], None, False, True, None),
            ("the request", "send", b"", "", [True, True], [], None, False, False, request),
            ("the client gone", "close", b"", "", [True], [], None, False, False, b""),
            ("a ping, nothing", None, b"P", "before", [False], [(b"O", 7)], None, False, True, None),
            ("a ping, the request in", "send", b"P", "before", [True], [(b"O", 7)], None, False, False, None),
            ("a ping during the wait", "send", b"P", "during", [True], [(b"O", 7)], None, False, False, request),
            ("a ping during, nothing: the accept loop's", None, b"P", "during", [False], [], b"P", False, True, None),
            ("a drain during, nothing", None, b"D", "during", [False], [], b"D", False, True, None),
            ("register again, the request in", "send", b"A", "before", [True], [], None, True, False, None),
            ("register again during the wait", "send", b"A", "during", [True], [], None, True, False, request),
            ("a drain, nothing", None, b"D", "before", [False], [], b"D", False, True, None),
            ("a drain, the request in: the last", "send", b"D", "before", [True, False], [], b"D", False, True, None),
            ("a drain during the wait: the last", "send", b"D", "during", [True, False], [], b"D", False, True, None),
            ("the master gone, the request in", "send", None, "before", [True, False], [], b"", False, True, None),
            ("the master gone during the wait", "send", None, "during", [True, False], [], b"", False, True, None),
        ]
        for name, client_does, orders, when, want, heard, left, owed, back, glimpse in cases:
            with self.subTest(name):
                w, master, client, server = self.worker("screen")
                held = Counted(server)
                w.parkable, w.held = True, held
                self.assertEqual(rcvtimeo(server), bytes(16), "want no SO_RCVTIMEO before a wait")
                w.hearing.spoken = False  # as after a first wait
                held.during = (lambda: speak(master, orders)) if when == "during" else None
                if when != "during":
                    speak(master, orders)
                if client_does == "send":
                    client.sendall(request)
                elif client_does == "close":
                    client.close()
                got = [w.wait_next(server.fileno(), 5) for _ in want]
                self.assertEqual(got, want)
                self.assertEqual(w.give_back, back)
                self.assertEqual(w.glimpse, glimpse)
                if orders is not None:
                    self.assertEqual(said(master), heard)
                self.assertEqual(w.channel.peek(), left)
                self.assertEqual(w.owed, owed)
                if held.armed:
                    self.assertEqual(held.armed, 1, "want SO_RCVTIMEO set once a connection")
                    self.assertNotEqual(rcvtimeo(server), bytes(16))


def speak(master, orders):
    """Send orders (bytes of message types) on master, or close it (None)."""
    if orders is None:
        master.close()
    for kind in orders or b"":
        master.send(ch.HEADER.pack(bytes([kind]), ch.WIRE, 0, 7))


class Counted:
    """A socket whose setsockopt calls are counted (armed); during, if
    set, is called once as its next recv begins (the master speaks while
    the child waits)."""

    def __init__(self, sock):
        self.sock = sock
        self.armed = 0
        self.during = None

    def recv(self, size, flags=0):
        if self.during is not None:
            self.during, during = None, self.during
            during()
        return self.sock.recv(size, flags)

    def setsockopt(self, *args):
        self.armed += 1
        self.sock.setsockopt(*args)


def rcvtimeo(sock):
    """Return sock's SO_RCVTIMEO as struct timeval bytes."""
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, 16)


def said(master):
    """Return [(type, value)] of what the child sent the master so far."""
    out = []
    while True:
        try:
            msg = master.recv(64)
        except BlockingIOError:
            return out
        kind, _, _, value = ch.HEADER.unpack(msg)
        out.append((kind, value))


if __name__ == "__main__":
    unittest.main()
