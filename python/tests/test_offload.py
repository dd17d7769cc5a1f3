"""Write completion (revision 5): a slow reader's response handed to the
master (W) and one the master gives back (U), with a real worker process
against a test that plays its master on a SOCK_SEQPACKET pair."""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

from actd import channel as ch
from actd.worker import capabilities, offload_for
from test_report import Master

BODY = bytes(range(256)) * 16384  # 4 MiB: far more than a unix socket buffers
OFFLOAD_MAX = 8 << 20

# The child: fds argv[1] and argv[2] become 3 (the listener) and 4 (the
# back-channel), then actd.wsgi serves BODY as a one-element list
# (/bytes) or as a wsgi.file_wrapper of the file argv[3] (/file).
CHILD = r"""
import fcntl, os, sys
high = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 100) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
for i, fd in enumerate(high):
    os.dup2(fd, 3 + i)
    os.close(fd)
import actd.connection
if os.environ.get("TEST_PATIENCE"):  # a loaded machine may pause a fast reader past 10 ms
    actd.connection.PATIENCE = float(os.environ["TEST_PATIENCE"])
from actd.wsgi import Options, Server
from actd.worker import Worker
BODY = bytes(range(256)) * 16384
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/octet-stream")])
    if environ["PATH_INFO"] == "/file":
        return environ["wsgi.file_wrapper"](open(sys.argv[3], "rb"))
    return [BODY]
server = Server(app, Options(keep_alive=5, timeout=5))
server.hooks = Worker(server.serve)
server.hooks.run()
"""


class OffloadForTest(unittest.TestCase):
    def test_who_offloads(self):
        cases = [
            ("filter http, revision 5", "http", "dispatch", 5, "1024", 1024),
            ("filter data", "data", "dispatch", 6, "8", 8),
            ("revision 4", "http", "dispatch", 4, "1024", 0),
            ("no filter", None, "dispatch", 5, "1024", 0),
            ("exclusive mode", "http", "exclusive", 5, "1024", 0),
            ("no ACTD_OFFLOAD_MAX", "http", "dispatch", 5, None, 0),
            ("zero", "http", "dispatch", 5, "0", 0),
            ("not a number", "http", "dispatch", 5, "lots", 0),
        ]
        for name, filter, mode, revision, limit, want in cases:
            with self.subTest(name):
                environ = {}
                if filter is not None:
                    environ["ACTD_ACCEPT_FILTER"] = filter
                if limit is not None:
                    environ["ACTD_OFFLOAD_MAX"] = limit
                got = offload_for(environ, mode, revision)
                self.assertEqual(got, want)
                caps = capabilities(revision, True, got > 0)
                self.assertEqual(caps & ch.OFFLOAD, ch.OFFLOAD if want else 0)


class UnsentChannelTest(unittest.TestCase):
    def test_unsent_arrives(self):
        m = Master(self, 5)
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        head = ch.HEADER.pack(ch.UNSENT, 1, 2, ch.KEEP_ALIVE) + ch.TRAILER.pack(7, 9)
        socket.send_fds(m.sock, [head], [a.fileno(), b.fileno()])
        kind, listener, value, got = m.channel.receive_fd()
        self.assertEqual((kind, listener, value), (ch.UNSENT, 2, ch.KEEP_ALIVE))
        self.assertEqual((got.offset, got.length), (7, 9))
        ch.close_all(got[:2])

    def test_unsent_out_of_shape(self):
        trailer = ch.TRAILER.pack(0, 1)
        cases = [
            ("U with one fd", ch.HEADER.pack(ch.UNSENT, 1, 0, 0) + trailer, 1),
            ("U without fds", ch.HEADER.pack(ch.UNSENT, 1, 0, 0) + trailer, 0),
            ("U without its trailer", ch.HEADER.pack(ch.UNSENT, 1, 0, 0), 2),
            ("C with two fds", ch.HEADER.pack(ch.CONNECTION, 1, 0, 0), 2),
            ("U of another wire format", ch.HEADER.pack(ch.UNSENT, 2, 0, 0) + trailer, 2),
        ]
        for name, msg, count in cases:
            with self.subTest(name):
                m = Master(self, 5)
                a, b = socket.socketpair()
                self.addCleanup(a.close)
                self.addCleanup(b.close)
                socket.send_fds(m.sock, [msg], [a.fileno(), b.fileno()][:count])
                before = len(os.listdir("/proc/self/fd"))
                with self.assertRaises(ch.Garbage):
                    m.channel.receive_fd()
                self.assertEqual(len(os.listdir("/proc/self/fd")), before, "want the attached fds closed")


class Child:
    """A worker process with one unix socket listener (loopback TCP would
    buffer megabytes of a slow reader's response), and the test as its
    master."""

    def __init__(self, test, offload_max=OFFLOAD_MAX, patience=None):
        self.test = test
        where = tempfile.mkdtemp()
        test.addCleanup(os.rmdir, where)
        self.path = os.path.join(where, "http.sock")
        test.addCleanup(os.unlink, self.path)
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(self.path)
        self.listener.listen(16)
        self.listener.setblocking(False)  # as the master sets it
        test.addCleanup(self.listener.close)
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        test.addCleanup(self.sock.close)
        env = dict(os.environ, LISTEN_FDS="1", ACTD_CHANNEL_FD="4", ACTD_ACCEPT_MODE="dispatch",
                   ACTD_PROTOCOL="5", ACTD_ACCEPT_FILTER="http", ACTD_SLOT="0",
                   ACTD_OFFLOAD_MAX=str(offload_max))
        if patience is not None:
            env["TEST_PATIENCE"] = str(patience)
        with tempfile.NamedTemporaryFile(delete=False) as f:
            f.write(BODY)
        test.addCleanup(os.unlink, f.name)
        fds = (self.listener.fileno(), child.fileno())
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, fds), f.name],
                                     pass_fds=fds, env=env)
        child.close()
        test.addCleanup(self._end)

    def _end(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def heard(self, timeout=10):
        """Return the next message as (type, listener, value, trailer, fds)."""
        self.sock.settimeout(timeout)
        msg, fds, _, _ = socket.recv_fds(self.sock, 64, 2)
        kind, _, listener, value = ch.HEADER.unpack(msg[:ch.HEADER.size])
        return kind, listener, value, msg[ch.HEADER.size:], fds

    def next_report(self):
        """Return the next message that is not a report of the request in
        hand (B, R: a request running for 5 ms has them)."""
        while True:
            got = self.heard()
            if got[0] not in (ch.BUSY, ch.REQUEST):
                return got
            ch.close_all(got[4])

    def started(self):
        """Read H and I, say the go-ahead and read its I; return H's caps."""
        hello = self.heard()
        self.test.assertEqual(hello[0], ch.HELLO)
        self.test.assertEqual(self.heard()[0], ch.IDLE)
        socket.send_fds(self.sock, [ch.HEADER.pack(ch.ACCEPT, 1, 0, 0)], [])
        self.test.assertEqual(self.heard()[0], ch.IDLE)
        return hello[1]


def connect(test, child, data):
    """Return a client connected to child's listener that sent data."""
    client = socket.socket(socket.AF_UNIX)
    client.connect(child.path)
    client.settimeout(10)
    test.addCleanup(client.close)
    client.sendall(data)
    return client


def slow_client(test, child, path, fields=b""):
    """Return a client that asked for path (with header fields) and reads
    nothing yet."""
    return connect(test, child, b"GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, fields))


def read_exactly(sock, n):
    got = bytearray()
    while len(got) < n:
        chunk = sock.recv(min(1 << 20, n - len(got)))
        if not chunk:
            break
        got += chunk
    return bytes(got)


def send_range(conn_fd, data_fd, offset, length):
    """Play the master finishing a W: send the range, blocking."""
    os.set_blocking(conn_fd, True)
    while length > 0:
        n = os.sendfile(conn_fd, data_fd, offset, length)
        offset, length = offset + n, length - n


class WriteTest(unittest.TestCase):
    def test_slow_reader_goes_to_master(self):
        cases = [
            ("bytes", b"/bytes", b"", ch.KEEP_ALIVE),
            ("file", b"/file", b"", ch.KEEP_ALIVE),
            ("bytes, Connection: close", b"/bytes", b"Connection: close\r\n", 0),
        ]
        for name, path, fields, keep in cases:
            with self.subTest(name):
                c = Child(self)
                client = slow_client(self, c, path, fields)  # in before the child looks
                self.assertEqual(c.started(), ch.HANDOFF | ch.SCREEN | ch.OFFLOAD)
                kind, listener, value, trailer, fds = c.next_report()
                self.assertEqual((kind, listener, value), (ch.WRITE, 0, keep),
                                 "want W, listener 0, keep-alive as the request asked")
                self.assertEqual(len(trailer), ch.TRAILER_SIZE)
                self.assertEqual(len(fds), 2, "want the connection and the data")
                offset, length = ch.TRAILER.unpack(trailer)
                self.assertGreater(length, 0)
                self.assertLessEqual(length, OFFLOAD_MAX)
                self.assertEqual(os.pread(fds[1], length, offset), BODY[-length:], "want the body's rest")
                self.assertIn(c.next_report()[0], (ch.SERVED, ch.IDLE), "want the connection counted as served")
                # the master's part: send the rest, the client reads it all
                head = client.recv(256).split(b"\r\n\r\n", 1)
                self.assertIn(b"Content-Length: %d" % len(BODY), head[0])
                master = threading.Thread(target=send_range, args=(fds[0], fds[1], offset, length))
                master.start()
                got = head[1] + read_exactly(client, len(BODY) - len(head[1]))
                master.join(10)
                ch.close_all(fds)
                self.assertEqual(got, BODY, "want the body exact")
                self.assertEqual(client.recv(1), b"", "want nothing after the body (all copies closed)")

    def test_fast_reader_written_by_child(self):
        # A reader that keeps reading is the child's to write; 10 ms of
        # patience is what a real child has, but a loaded test machine
        # can pause this reader longer, so the child here waits 5 s.
        c = Child(self, patience=5)
        client = connect(self, c, b"GET /bytes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        c.started()
        got = b""
        while True:
            chunk = client.recv(1 << 20)
            if not chunk:
                break
            got += chunk
        self.assertTrue(got.endswith(BODY))
        self.assertIn(c.next_report()[0], (ch.SERVED, ch.IDLE), "want no W")


class UnsentTest(unittest.TestCase):
    def test_unsent_written(self):
        for value, want in [(ch.KEEP_ALIVE, ch.KEEP), (0, ch.IDLE)]:
            with self.subTest(value=value):
                c = Child(self)
                c.started()
                client, conn = socket.socketpair()
                client.settimeout(10)
                self.addCleanup(client.close)
                data = os.memfd_create("test")
                os.write(data, b"junk" + BODY)
                head = ch.HEADER.pack(ch.UNSENT, 1, 0, value) + ch.TRAILER.pack(4, len(BODY))
                socket.send_fds(c.sock, [head], [conn.fileno(), data])
                conn.close()
                os.close(data)
                self.assertEqual(c.heard()[:2], (ch.BUSY, 0))
                self.assertEqual(read_exactly(client, len(BODY)), BODY)
                got = c.heard()
                self.assertEqual(got[0], want)
                if want == ch.KEEP:
                    self.assertEqual(len(got[4]), 1, "want the connection given back")
                    ch.close_all(got[4])
                    self.assertEqual(c.heard()[0], ch.IDLE)
                client.settimeout(5)
                self.assertEqual(client.recv(1), b"", "want the child's copy closed")


if __name__ == "__main__":
    unittest.main()
