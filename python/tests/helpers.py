"""Shared by the tests: a Server on one end of a socket pair, and a reader
of the HTTP responses that come back."""

import fcntl
import http.client
import io
import select
import socket
import struct
import sys
import termios
import threading
import time

from actd.wsgi import Options, Server


class _Unclosed(io.BytesIO):
    def close(self):
        pass  # HTTPResponse closes its file after each response


class _Bytes:
    def __init__(self, data):
        self.file = _Unclosed(data)

    def makefile(self, mode):
        return self.file


def parse_responses(raw, methods=None):
    """Return [(status, headers dict, body)] of the responses in raw."""
    source = _Bytes(raw)
    out = []
    for method in methods or ["GET"] * 100:
        if source.file.tell() >= len(raw):
            break
        r = http.client.HTTPResponse(source, method=method)
        r.begin()
        out.append((r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()))
    return out


class Pair:
    """A Server serving one end of a socket pair in a thread; the test
    holds the other end (client)."""

    def __init__(self, app, options=None, family=socket.AF_UNIX, access_log=None):
        self.server = Server(app, options or Options(keep_alive=2, timeout=5), access_log=access_log)
        if family == socket.AF_UNIX:
            self.client, self.conn = socket.socketpair(family)
        else:
            self.client, self.conn = tcp_pair()
        self.client.settimeout(10)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            self.server.serve(self.conn, ("127.0.0.1", 4321), ("localhost", "80"))
        finally:
            self.conn.close()

    def exchange(self, data):
        """Send data, end our side, and return all the server sent."""
        self.client.sendall(data)
        self.client.shutdown(socket.SHUT_WR)
        return self.read_all()

    def read_all(self):
        chunks = []
        while True:
            b = self.client.recv(65536)
            if not b:
                break
            chunks.append(b)
        self.thread.join(10)
        self.client.close()
        return b"".join(chunks)


def exchange(app, data, options=None):
    """Serve data to app over a fresh pair; return what came back."""
    return Pair(app, options).exchange(data)


def tcp_pair():
    """Return (client, server) ends of a loopback TCP connection."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        conn, _ = listener.accept()
    return client, conn


def eventually(cond, bound=10.0):
    """Poll cond every millisecond until it holds or bound seconds (a
    bound, not a speed) pass; return its last value."""
    deadline = time.monotonic() + bound
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.001)  # the poll's period
    return cond()


def arrived(client, listener):
    """Return whether what client sent to listener is in: every byte
    acknowledged (TIOCOUTQ, SIOCOUTQ for a socket, is 0) and listener has a
    connection to accept (the test's one pending connection)."""
    unacked = struct.unpack("i", fcntl.ioctl(client.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
    return unacked == 0 and bool(select.select([listener], [], [], 0)[0])


def wait_arrived(test, client, listener):
    """Fail test unless what client sent to listener is in (arrived)
    within 10 s: the condition to wait for before a child looks."""
    test.assertTrue(eventually(lambda: arrived(client, listener)), "the connection is not in the listener's queue")


def parse_native(entry):
    """Return the fields of one native-protocol journal datagram as a dict
    of str: NAME=value lines, and NAME, a newline, a u64 little-endian
    length, the value and a newline for a value with a newline."""
    fields, i = {}, 0
    while i < len(entry):
        end = entry.index(b"\n", i)
        line = entry[i:end]
        if b"=" in line:
            name, _, value = line.partition(b"=")
            i = end + 1
        else:
            name, (size,) = line, struct.unpack("<Q", entry[end + 1:end + 9])
            value = entry[end + 9:end + 9 + size]
            i = end + 9 + size + 1
        fields[name.decode()] = value.decode()
    return fields


# Applications more than one test module serves.


def with_write(environ, start_response):
    write = start_response("200 OK", [("Content-Type", "text/plain")])
    write(b"written ")
    return [b"returned"]


def replaced(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    try:
        raise ValueError("before any byte went out")
    except ValueError:
        start_response("503 Service Unavailable", [("Content-Type", "text/plain")], sys.exc_info())
    return [b"replaced"]


def fails(environ, start_response):
    raise RuntimeError("the application broke")
