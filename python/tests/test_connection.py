"""Reads and writes under the timeout: actd.connection."""

import select
import socket
import struct
import tempfile
import threading
import unittest

from actd.connection import Connection

TIMEOUT = 0.2
NONE = struct.pack("ll", 0, 0)
TIMEVAL = struct.pack("ll", 0, 200000)


def pair(test, family=socket.AF_UNIX, arrived=False):
    """Return (client, Connection over the server end), closed at cleanup."""
    if family == socket.AF_UNIX:
        client, server = socket.socketpair()
    else:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            client = socket.create_connection(listener.getsockname())
            server, _ = listener.accept()
    test.addCleanup(client.close)
    test.addCleanup(server.close)
    client.settimeout(10)
    return client, Connection(server, TIMEOUT, arrived)


def timeouts(conn):
    """Return the socket's (SO_RCVTIMEO, SO_SNDTIMEO) as struct timeval bytes."""
    get = conn.sock.getsockopt
    size = len(NONE)
    return (get(socket.SOL_SOCKET, socket.SO_RCVTIMEO, size),
            get(socket.SOL_SOCKET, socket.SO_SNDTIMEO, size))


class ConnectionTest(unittest.TestCase):
    def test_quick_exchange_sets_no_timeout(self):
        for family in (socket.AF_UNIX, socket.AF_INET):
            with self.subTest(family=family.name):
                client, conn = pair(self, family)
                client.sendall(b"GET / HTTP/1.1\r\n\r\n")
                select.select([conn.fd], [], [], 10)  # in, as when a child accepts
                got = conn.recv(100)
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
                self.assertEqual(got, b"GET / HTTP/1.1\r\n\r\n")
                self.assertEqual(client.recv(100), b"HTTP/1.1 200 OK\r\n\r\n")
                self.assertEqual(timeouts(conn), (NONE, NONE), "want no setsockopt")

    def test_stalled_reader_times_out(self):
        for arrived in (False, True):  # a first read that need not poll still waits
            with self.subTest(arrived=arrived):
                client, conn = pair(self, arrived=arrived)
                with self.assertRaises(BlockingIOError):
                    conn.recv(100)  # nothing comes
                client.sendall(b"late")
                self.assertEqual(conn.recv(100), b"late")

    def test_reader_waits(self):
        for arrived in (False, True):
            with self.subTest(arrived=arrived):
                client, conn = pair(self, arrived=arrived)
                threading.Timer(0.05, client.sendall, [b"soon"]).start()
                self.assertEqual(conn.recv(100), b"soon")

    def test_ahead_dropped(self):
        # a PROXY header peeked, not read (actd.worker's ahead): the first
        # read takes it with the request and returns the request's bytes
        header = b"PROXY TCP4 203.0.113.7 127.0.0.1 5555 80\r\n"
        request = b"GET / HTTP/1.1\r\n\r\n"
        cases = [
            ("header and request", [header + request], 100, [request]),
            ("the read's size is the request's", [header + request], 4, [b"GET ", b"/ HT"]),
            ("the request comes later", [header, request], 100, [request]),
            ("the client closes after the header", [header, None], 100, [b""]),
        ]
        for name, sends, size, want in cases:
            with self.subTest(name):
                client, server = socket.socketpair()
                self.addCleanup(client.close)
                self.addCleanup(server.close)
                conn = Connection(server, TIMEOUT, True, ahead=len(header))
                client.sendall(sends[0])
                for later in sends[1:]:
                    threading.Timer(0.05, client.sendall if later else client.shutdown,
                                    [later if later else socket.SHUT_WR]).start()
                got = [conn.recv(size) for _ in want]
                self.assertEqual(got, want)
                self.assertEqual(timeouts(conn), (NONE, NONE), "want no setsockopt")

    def test_c_socket(self):
        # a worker's accepted connection is the C socket class (actd.worker)
        import _socket
        with socket.create_server(("127.0.0.1", 0)) as listener:
            client = socket.create_connection(listener.getsockname())
            self.addCleanup(client.close)
            fd, _ = listener._accept()
            sock = _socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0, fd)
            self.addCleanup(sock.close)
            conn = Connection(sock, TIMEOUT, True)
            client.sendall(b"GET / HTTP/1.1\r\n\r\n")
            self.assertEqual(conn.recv(100), b"GET / HTTP/1.1\r\n\r\n")
            conn.sendall(b"one")
            conn.no_delay()
            conn.sendall(b"two")
            self.assertEqual(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY), 1)
            client.settimeout(10)
            got = b""
            while len(got) < 6:
                got += client.recv(10)
            self.assertEqual(got, b"onetwo")

    def test_end_of_file(self):
        client, conn = pair(self)
        client.shutdown(socket.SHUT_WR)
        self.assertEqual(conn.recv(100), b"")

    def test_sendall_larger_than_buffer(self):
        client, conn = pair(self)
        data = bytes(range(256)) * 16384  # 4 MiB: more than a socket buffer holds
        got = []
        reader = threading.Thread(target=lambda: got.append(receive(client, len(data))))
        reader.start()
        conn.sendall(data)
        reader.join(10)
        self.assertEqual(got, [data])
        self.assertEqual(timeouts(conn), (NONE, NONE), "want no setsockopt")

    def test_stalled_writer_times_out(self):
        _, conn = pair(self)  # the client never reads
        with self.assertRaises(BlockingIOError):
            conn.sendall(b"x" * (64 << 20))

    def test_sendfile_from_position(self):
        cases = [
            ("from the start", 0, 10, b"0123456789", 10),
            ("from the position", 3, 4, b"3456", 7),
            ("past the end", 8, 10, b"89", 10),
        ]
        for name, position, count, want, after in cases:
            with self.subTest(name):
                client, conn = pair(self)
                with tempfile.TemporaryFile() as f:
                    f.write(b"0123456789")
                    f.seek(position)
                    sent = conn.sendfile(f, count)
                    self.assertEqual(f.tell(), after)
                self.assertEqual(timeouts(conn), (NONE, TIMEVAL), "want SO_SNDTIMEO for sendfile")
                self.assertEqual(sent, len(want))
                self.assertEqual(receive(client, len(want)), want)


def receive(sock, size):
    """Return size bytes from sock (fewer at EOF)."""
    chunks, left = [], size
    while left > 0:
        b = sock.recv(min(left, 1 << 20))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


if __name__ == "__main__":
    unittest.main()
