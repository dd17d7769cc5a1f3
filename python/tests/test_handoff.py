"""Connections handed over and given back on the back-channel (C and K,
revision 3): actd.channel's file descriptor passing."""

import os
import socket
import unittest

from actd import channel as ch
from actd.worker import capabilities
from test_report import Master


def connected(test):
    """Return a connected pair of stream sockets, closed at cleanup."""
    a, b = socket.socketpair()
    test.addCleanup(a.close)
    test.addCleanup(b.close)
    return a, b


class HandoffChannelTest(unittest.TestCase):
    def test_capabilities(self):
        for revision, want in [(1, 0), (2, 0), (3, ch.HANDOFF), (4, ch.HANDOFF)]:
            with self.subTest(revision=revision):
                self.assertEqual(capabilities(revision), want)

    def test_connection_arrives(self):
        m = Master(self, 3)
        client, server = connected(self)
        socket.send_fds(m.sock, [ch.HEADER.pack(b"C", 1, 1, 0)], [server.fileno()])
        kind, listener, value, fd = m.channel.receive_fd()
        self.assertEqual((kind, listener, value), (b"C", 1, 0))
        self.assertIsNotNone(fd)
        got = socket.socket(fileno=fd)
        self.addCleanup(got.close)
        self.assertFalse(os.get_inheritable(fd), "want close-on-exec")
        client.sendall(b"GET /")
        self.assertEqual(got.recv(16), b"GET /")

    def test_fd_out_of_place(self):
        cases = [
            ("C without an fd", b"C", False),
            ("A with an fd", b"A", True),
        ]
        for name, kind, attach in cases:
            with self.subTest(name):
                m = Master(self, 3)
                _, server = connected(self)
                fds = [server.fileno()] if attach else []
                socket.send_fds(m.sock, [ch.HEADER.pack(kind, 1, 0, 0)], fds)
                before = len(os.listdir("/proc/self/fd"))
                with self.assertRaises(ch.Garbage):
                    m.channel.receive_fd()
                self.assertEqual(len(os.listdir("/proc/self/fd")), before,
                                 "want the attached fd closed")

    def test_receive_refuses_fd(self):
        m = Master(self, 3)
        _, server = connected(self)
        socket.send_fds(m.sock, [ch.HEADER.pack(b"C", 1, 0, 0)], [server.fileno()])
        with self.assertRaises(ch.Garbage):
            m.channel.receive()

    def test_give_back(self):
        m = Master(self, 3)
        client, server = connected(self)
        m.channel.send_fd(ch.KEEP, 2, server.fileno())
        msg, fds, _, _ = socket.recv_fds(m.sock, 64, 1)
        self.assertEqual(ch.HEADER.unpack(msg), (b"K", 1, 2, 0))
        self.assertEqual(len(fds), 1)
        back = socket.socket(fileno=fds[0])
        self.addCleanup(back.close)
        client.sendall(b"next")
        self.assertEqual(back.recv(16), b"next")
